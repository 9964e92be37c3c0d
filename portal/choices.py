"""Fixed vocabularies of the program core."""
from django.db import models

# Regions where the program's accelerated capacity lives (extend as the program grows).
REGIONS = (
    ("ap-northeast-1", "Asia Pacific (Tokyo)"),
    ("ap-northeast-3", "Asia Pacific (Osaka)"),
    ("us-east-1", "US East (N. Virginia)"),
    ("us-east-2", "US East (Ohio)"),
    ("us-west-2", "US West (Oregon)"),
    ("eu-north-1", "Europe (Stockholm)"),
)
REGION_CHOICES = [(code, f"{label} · {code}") for code, label in REGIONS]
REGION_CODES = frozenset(code for code, _ in REGIONS)


class MembershipRole(models.TextChoices):
    CUSTOMER = "customer", "Customer"
    LEAD_SA = "lead_sa", "Lead solutions architect"


class Visibility(models.TextChoices):
    INTERNAL = "internal", "Internal"
    SHARED = "shared", "Shared with the customer"


class TimelineKind(models.TextChoices):
    INTERACTION = "interaction", "Interaction"
    WORKLOAD = "workload", "Workload change"
    QUOTA = "quota", "Quota and capacity"
    LAUNCH = "launch", "Cluster launch"
    CLUSTER = "cluster", "Cluster state"
    FAULT = "fault", "Health fault"
    VALIDATION = "validation", "Validation"
    ENABLEMENT = "enablement", "Enablement"
    NOTE = "note", "Note"
