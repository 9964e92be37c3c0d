"""Fixed vocabularies of cluster health."""
from django.db import models

from clusters.health.nccl import COLLECTIVES


class Source(models.TextChoices):
    PUSH = "push", "Pushed by the cluster"
    PULL = "pull", "Pulled from Prometheus"


class AuthKind(models.TextChoices):
    NONE = "none", "None"
    BASIC = "basic", "Basic (user name and password)"
    BEARER = "bearer", "Bearer token"
    SIGV4 = "sigv4", "SigV4 (Amazon Managed Service for Prometheus)"



class RunVerdict(models.TextChoices):
    PASS = "pass", "Pass"
    WARN = "warn", "Warn"
    FAIL = "fail", "Fail"
    NONE = "none", "Not judged"


COLLECTIVE_CHOICES = [(c, c) for c in COLLECTIVES]
