"""Fixed vocabularies of the program core."""
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


class TargetKind(models.TextChoices):
    SPECIALISTS = "specialists", _("Specialists")
    SERVICE_TEAM = "service_team", _("Service team")
    ACCOUNT = "account", _("Account team")
