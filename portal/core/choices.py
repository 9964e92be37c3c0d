"""Fixed vocabularies of the program core, and the program's shared vocabulary: severities, node verdicts and
open interaction states.

Each word is defined once here and imported wherever it is used (interactions, the timeline, notifications,
cluster health, the weekly review), so a new value cannot be known to one part and unknown to another.

Two severity scales exist on purpose:

- ``Severity`` (low, normal, high, critical) is how urgent something is for people: interactions, timeline entries
  and notifications use it, and a notification channel's minimum severity is one of its values.
- ``FaultSeverity`` (info, warning, critical) is how NVIDIA's XID catalogue grades a GPU fault. It is kept as
  published; :func:`severity_for_fault` says what it means on the people scale.
"""
from __future__ import annotations

from django.db import models
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

# Regions where the program's accelerated capacity lives (extend as the program grows).
REGIONS = (
    ("ap-northeast-1", _("Asia Pacific (Tokyo)")),
    ("ap-northeast-3", _("Asia Pacific (Osaka)")),
    ("us-east-1", _("US East (N. Virginia)")),
    ("us-east-2", _("US East (Ohio)")),
    ("us-west-2", _("US West (Oregon)")),
    ("eu-north-1", _("Europe (Stockholm)")),
)
REGION_CHOICES = [(code, format_lazy("{} · {}", label, code)) for code, label in REGIONS]
REGION_CODES = frozenset(code for code, _ in REGIONS)


class MembershipRole(models.TextChoices):
    CUSTOMER = "customer", _("Customer")
    LEAD_SA = "lead_sa", _("Lead solutions architect")
    # Held beside ``customer`` by the person the program designates to run their organization's sign-in.
    ORG_ADMIN = "org_admin", _("Organization administrator")


class Visibility(models.TextChoices):
    INTERNAL = "internal", _("Internal")
    SHARED = "shared", _("Shared with the customer")


class TimelineKind(models.TextChoices):
    INTERACTION = "interaction", _("Interaction")
    WORKLOAD = "workload", _("Workload change")
    QUOTA = "quota", _("Quota and capacity")
    LAUNCH = "launch", _("Cluster launch")
    CLUSTER = "cluster", _("Cluster state")
    FAULT = "fault", _("Health fault")
    VALIDATION = "validation", _("Validation")
    ENABLEMENT = "enablement", _("Enablement")
    NOTE = "note", _("Note")


class CycleStatus(models.TextChoices):
    PLANNED = "planned", _("Planned")
    ACTIVE = "active", _("Active")
    ARCHIVED = "archived", _("Archived")


class CarryKind(models.TextChoices):
    """What moves into the next cycle when it starts, for the organizations that continue."""

    CLUSTER = "cluster", _("Cluster not deleted")
    QUOTA = "quota", _("Quota in force")
    RESERVATION = "reservation", _("Capacity reservation in force")
    TRAINED_MODEL = "trained_model", _("Model still in training")
    RESERVATION_REQUEST = "award_request", _("Reservation request of an award")


class TargetKind(models.TextChoices):
    SPECIALISTS = "specialists", _("Specialists")
    SERVICE_TEAM = "service_team", _("Service team")
    ACCOUNT = "account", _("Account team")
class Severity(models.TextChoices):
    LOW = "low", _("Low")
    NORMAL = "normal", _("Normal")
    HIGH = "high", _("High")
    CRITICAL = "critical", _("Critical")


SEVERITY_RANK: dict[str, int] = {value: rank for rank, value in enumerate(Severity.values)}
SEVERITIES_WORST_FIRST: tuple[str, ...] = tuple(reversed(Severity.values))


class FaultSeverity(models.TextChoices):
    INFO = "info", _("Info")
    WARNING = "warning", _("Warning")
    CRITICAL = "critical", _("Critical")


FAULT_SEVERITY_RANK: dict[str, int] = {value: rank for rank, value in enumerate(FaultSeverity.values)}
_FAULT_TO_SEVERITY = {
    FaultSeverity.INFO: Severity.NORMAL,
    FaultSeverity.WARNING: Severity.HIGH,
    FaultSeverity.CRITICAL: Severity.CRITICAL,
}


def severity_for_fault(fault_severity: str) -> str:
    """A GPU fault's grade on the people scale (a warning-grade XID is worth a lead SA's attention: high)."""
    return _FAULT_TO_SEVERITY[FaultSeverity(fault_severity)]


def severity_rank(value: str) -> int:
    """Rank of a people-scale severity; an unknown word is a programming error, not "normal"."""
    try:
        return SEVERITY_RANK[value]
    except KeyError:
        raise ValueError(f"unknown severity {value!r}; use one of {', '.join(Severity.values)}") from None


class NodeVerdict(models.TextChoices):
    """What a node needs, mildest first."""

    HEALTHY = "healthy", _("Healthy")
    DEGRADED = "degraded", _("Degraded")
    RESET_GPU = "reset_gpu", _("Reset GPU")
    REBOOT = "reboot", _("Reboot")
    REPLACE = "replace", _("Replace")


VERDICTS: tuple[str, ...] = tuple(NodeVerdict.values)
VERDICT_RANK: dict[str, int] = {name: rank for rank, name in enumerate(VERDICTS)}


def worst_verdict(verdicts) -> str | None:
    """The worst of some node verdicts (unknown words ignored), or None when there are none."""
    known = [v for v in verdicts if v in VERDICT_RANK]
    return max(known, key=VERDICT_RANK.__getitem__) if known else None


class InteractionStatus(models.TextChoices):
    OPEN = "open", _("Open")
    WAITING_CUSTOMER = "waiting_customer", _("Waiting on customer")
    WAITING_AWS = "waiting_aws", _("Waiting on AWS")
    RESOLVED = "resolved", _("Resolved")


OPEN_STATUSES: tuple[str, ...] = (InteractionStatus.OPEN, InteractionStatus.WAITING_CUSTOMER, InteractionStatus.WAITING_AWS)
