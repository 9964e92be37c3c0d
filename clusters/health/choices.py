"""Fixed vocabularies of cluster health."""
from django.db import models
from django.utils.translation import gettext_lazy as _

from clusters.health.readers.nccl import COLLECTIVES


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


class ValidationMode(models.TextChoices):
    COLLECTIVES = "collectives", _("Collectives across the nodes")
    PAIRWISE = "pairwise", _("Pairwise sweep (each pair of nodes)")


class JobState(models.TextChoices):
    """A validation job's lifecycle (``ValidationJob.transition``: compare-and-set)."""

    PENDING = "pending", _("Waiting for the worker")
    SUBMITTED = "submitted", _("Running on the cluster")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")
    TIMED_OUT = "timed_out", _("Timed out")
    CANCELLED = "cancelled", _("Cancelled")


JOB_TRANSITIONS = {
    JobState.PENDING: {JobState.SUBMITTED, JobState.FAILED, JobState.TIMED_OUT, JobState.CANCELLED},
    JobState.SUBMITTED: {JobState.DONE, JobState.FAILED, JobState.TIMED_OUT, JobState.CANCELLED},
    JobState.DONE: set(),
    JobState.FAILED: set(),
    JobState.TIMED_OUT: set(),
    JobState.CANCELLED: set(),
}
JOB_OPEN = (JobState.PENDING, JobState.SUBMITTED)


class WorkKind(models.TextChoices):
    """What a cluster's controller agent is asked to do (docs/DECISIONS.md 42): each kind is a fixed command the agent
    builds itself from the item's payload, never a shell line sent by the portal."""

    VALIDATION = "validation", _("Validation job (sbatch, scancel, sacct)")
    SCONTROL = "scontrol", _("Slurm node state (drain, resume, reboot)")
    NODES = "nodes", _("Slurm's node listing")
    VERSIONS = "versions", _("Software versions")


class WorkState(models.TextChoices):
    QUEUED = "queued", _("Queued")
    CLAIMED = "claimed", _("Taken by the agent")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


WORK_OPEN = (WorkState.QUEUED, WorkState.CLAIMED)
