"""A failed action told in plain words: what failed and what happens next, for the customer and the lead SA.

The words are made when they are shown (from the action's kind, nodes, failure reason and whether the provider ever
acted on its nodes), so they read in the reader's language; the provider's own text stays for lead SAs
(``RemediationAction.error``). Whether the nodes were acted on decides what happens next: a node never touched
has its faults open again and may be proposed again at once (no cool-down); a node that may have been acted on
waits out the organization's cool-down."""
from __future__ import annotations

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from clusters.remediation.choices import ActionState
from clusters.remediation.rules import policy_for

# What failed, by failure reason (``portal.core.provider_errors.REMEDIATION_FAILURES`` keys).
WHAT_FAILED = {
    "access_denied": _("the IAM role your organization set up for the portal refused the request"),
    "throttling": _("AWS kept slowing down the portal's requests"),
    "node_not_found": _("the cluster does not list the node (it may have been replaced already)"),
    "provider_refused": _("AWS did not accept the request"),
    "node_failed": _("the node did not come back after the action"),
    "check_failed": _("the node failed HyperPod's deep health checks"),
    "command_failed": _("the command on the cluster's head node failed"),
    "cluster_deleting": _("the cluster is being deleted"),
    "deadline": _("the action did not finish in time"),
    "fault_returned": _("the fault came back after the action"),
    "not_verified": _("the node did not report again in time to confirm the fault is gone"),
    "error": _("the portal met an error it did not expect"),
}


def untouched(action) -> bool:
    """Whether the provider never acted on the action's nodes: nothing was sent, or what was sent was refused."""
    progress = action.progress or {}
    if action.executed_at is not None:
        return False
    return bool(progress.get("refused")) or not any(key in progress for key in ("submitting", "submitted", "command_id"))


def told(action, cooldown_hours: int | None = None) -> str:
    """What failed and what happens next, in the reader's language ("" for an action that did not fail)."""
    if action.state != ActionState.FAILED:
        return ""
    what = WHAT_FAILED.get(action.failure_reason or "error", WHAT_FAILED["error"])
    failed = gettext("The %(kind)s of %(nodes)s failed: %(what)s.") % {
        "kind": action.get_kind_display().lower(), "nodes": ", ".join(action.nodes), "what": what}
    if action.failure_reason == "fault_returned":
        then = gettext("The faults are open again; your lead SA follows up, and a repeat is escalated to the EC2 "
                       "service team.")
    elif action.failure_reason == "check_failed":
        then = gettext("HyperPod reports the node Failure (it replaces it if automatic node recovery is on); your "
                       "lead SA follows up, and a reboot or a replacement may be proposed now.")
    elif (action.progress or {}).get("untouched"):
        then = gettext("The node was not touched: its faults are open again, and your lead SA can propose the "
                       "action again now.")
    else:
        hours = cooldown_hours if cooldown_hours is not None else policy_for(action.organization_id).cooldown_hours
        then = gettext("The node may have been acted on: its faults are open again, the portal waits %(hours)s h "
                       "before another action on it, and your lead SA follows up.") % {"hours": hours}
    return f"{failed} {then}"
