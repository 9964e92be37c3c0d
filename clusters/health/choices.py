"""Fixed vocabularies of cluster health."""
from django.db import models
from django.utils.translation import gettext_lazy as _

from clusters.health.nccl import COLLECTIVES


class Source(models.TextChoices):
    PUSH = "push", _("Pushed by the cluster")
    PULL = "pull", _("Pulled from Prometheus")


class AuthKind(models.TextChoices):
    NONE = "none", _("None")
    BASIC = "basic", _("Basic (user name and password)")
    BEARER = "bearer", _("Bearer token")
    SIGV4 = "sigv4", _("SigV4 (Amazon Managed Service for Prometheus)")



class RunVerdict(models.TextChoices):
    PASS = "pass", _("Pass")
    WARN = "warn", _("Warn")
    FAIL = "fail", _("Fail")
    NONE = "none", _("Not judged")


COLLECTIVE_CHOICES = [(c, c) for c in COLLECTIVES]
