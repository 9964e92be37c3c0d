"""Fixed vocabularies of node remediation: action kinds, states and their legal moves, consent modes, and the
fault kinds an organization may let the portal remediate on its own."""
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


class ActionKind(models.TextChoices):
    REBOOT = "reboot", _("Reboot")
    REPLACE = "replace", _("Replace")
    DRAIN = "drain", _("Drain")
    CHECK = "check", _("Deep health check")


class ActionState(models.TextChoices):
    PROPOSED = "proposed", _("Proposed")
    APPROVED = "approved", pgettext_lazy("state", "Approved")  # not the "Approved" (at) of a date column
    RUNNING = "running", _("Running")
    VERIFYING = "verifying", _("Verifying")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")
    REFUSED = "refused", _("Refused")
    CANCELLED = "cancelled", _("Cancelled")


OPEN_STATES = (ActionState.PROPOSED, ActionState.APPROVED, ActionState.RUNNING, ActionState.VERIFYING)
FINISHED_STATES = (ActionState.DONE, ActionState.FAILED, ActionState.REFUSED, ActionState.CANCELLED)

TRANSITIONS: dict[str, frozenset[str]] = {
    ActionState.PROPOSED: frozenset({ActionState.APPROVED, ActionState.REFUSED, ActionState.CANCELLED}),
    ActionState.APPROVED: frozenset({ActionState.RUNNING, ActionState.FAILED, ActionState.CANCELLED}),
    ActionState.RUNNING: frozenset({ActionState.VERIFYING, ActionState.FAILED}),
    ActionState.VERIFYING: frozenset({ActionState.DONE, ActionState.FAILED}),
    ActionState.DONE: frozenset(),
    ActionState.FAILED: frozenset(),
    ActionState.REFUSED: frozenset(),
    ActionState.CANCELLED: frozenset(),
}


class ConsentMode(models.TextChoices):
    APPROVAL = "approval", _("Every action needs a customer engineer's approval")
    LEAD_SA = "lead_sa", _("The lead SA may act")
    AUTOMATIC = "automatic", _("The lead SA may act; the chosen fault kinds are remediated automatically")


# Consent from the narrowest to the widest: a move to the right gives the portal more power over the nodes.
CONSENT_ORDER = (ConsentMode.APPROVAL, ConsentMode.LEAD_SA, ConsentMode.AUTOMATIC)


class PolicyChangeState(models.TextChoices):
    PENDING = "pending", _("Waiting for a customer engineer")
    APPROVED = "approved", pgettext_lazy("state", "Approved")  # not the "Approved" (at) of a date column
    DECLINED = "declined", _("Declined")
    WITHDRAWN = "withdrawn", _("Replaced by a later change")


class StepStatus(models.TextChoices):
    OK = "ok", _("Done")
    FAILED = "failed", _("Failed")
    WAITING = "waiting", _("Waiting")


class FaultOutcome(models.TextChoices):
    REMEDIATING = "remediating", _("Remediating")
    CLEARED = "cleared", _("Cleared")
    RETURNED = "returned", _("Came back")
    OPEN = "open", _("Open again")  # the action failed before it settled the fault: handed back, not remediating


# Fault kinds an organization may have remediated without a person in the loop, and the action each gets first:
# the XID table's (clusters/health/readers/xid.py; a test holds them together). XID 79 is rebooted, and replaced when it
# recurs on the node (rules.automatic_kind).
AUTOMATIC_RULES: dict[str, tuple[str, str]] = {
    "row_remap_failure": (_("Row-remap failure"), ActionKind.REPLACE),
    "xid_79": (_("XID 79: GPU fell off the bus"), ActionKind.REBOOT),
    "xid_54": (_("XID 54: hardware fault"), ActionKind.REPLACE),
    "xid_48": (_("XID 48: double-bit ECC error"), ActionKind.REBOOT),
    "xid_95": (_("XID 95: uncontained ECC error"), ActionKind.REBOOT),
    "missing_gpu": (_("GPU missing from the node"), ActionKind.REBOOT),
}
AUTOMATIC_CHOICES = [(key, label) for key, (label, _kind) in AUTOMATIC_RULES.items()]


class ProviderEventKind(models.TextChoices):
    """What a HyperPod cluster event says happened to a node (``clusters.remediation.hyperpod_signals``)."""
    REPLACE_STARTED = "replace_started", _("Replacement started")
    REPLACED = "replaced", _("Replaced")
    REBOOT_STARTED = "reboot_started", _("Reboot started")
    REBOOTED = "rebooted", _("Rebooted")
    CHECK_STARTED = "check_started", _("Deep health check started")
    CHECK_PASSED = "check_passed", _("Deep health check passed")
    CHECK_FAILED = "check_failed", _("Deep health check failed")
    OTHER = "other", _("Other")
