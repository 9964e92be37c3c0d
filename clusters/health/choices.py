"""Fixed vocabularies of cluster health."""
from django.db import models

from clusters.health.nccl import COLLECTIVES
from clusters.health.summary import VERDICTS


class Source(models.TextChoices):
    PUSH = "push", "Pushed by the cluster"
    PULL = "pull", "Pulled from Prometheus"


class AuthKind(models.TextChoices):
    NONE = "none", "None"
    BASIC = "basic", "Basic (user name and password)"
    BEARER = "bearer", "Bearer token"
    SIGV4 = "sigv4", "SigV4 (Amazon Managed Service for Prometheus)"


class Severity(models.TextChoices):
    INFO = "info", "Info"
    WARNING = "warning", "Warning"
    CRITICAL = "critical", "Critical"


SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}

class NodeVerdict(models.TextChoices):
    """What a node needs, mildest first (the summarizer's VERDICTS)."""

    HEALTHY = "healthy", "Healthy"
    DEGRADED = "degraded", "Degraded"
    RESET_GPU = "reset_gpu", "Reset GPU"
    REBOOT = "reboot", "Reboot"
    REPLACE = "replace", "Replace"


assert tuple(NodeVerdict.values) == VERDICTS, "keep NodeVerdict in step with summary.VERDICTS"
VERDICT_RANK = {name: rank for rank, name in enumerate(VERDICTS)}


class RunVerdict(models.TextChoices):
    PASS = "pass", "Pass"
    WARN = "warn", "Warn"
    FAIL = "fail", "Fail"
    NONE = "none", "Not judged"


COLLECTIVE_CHOICES = [(c, c) for c in COLLECTIVES]
