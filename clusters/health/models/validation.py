"""NCCL validation: the jobs the portal starts on a cluster (a compare-and-set lifecycle, an upload token scoped to
the job) and the runs uploaded or posted by them, judged against the expected bus bandwidth."""
from __future__ import annotations

import hmac
import secrets

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from clusters.health.choices import COLLECTIVE_CHOICES, JOB_OPEN, JOB_TRANSITIONS, JobState, RunVerdict, ValidationMode
from clusters.health.models.config import hash_token
from portal.core.jobs.models import Job
from portal.core.querysets import RestrictedQuerySet

JOB_TOKEN_PREFIX = "gv"


class ValidationJob(Job):
    """An NCCL (or Neuron) validation the portal starts on a cluster: submitted with ``sbatch`` through SSM on
    the head node by a worker, its outputs posted back with a token scoped to this job, judged into runs.

    ``state`` is the portal's lifecycle (compare-and-set, :meth:`transition`); as a job of ``portal.core.jobs`` the
    lease, heartbeat and attempts make the submission neither lost nor doubled: a worker claims a pending job only.
    The upload token is kept as a hash, accepted once per expected output, and dies with the job or at
    ``token_expires``."""

    STATUS_FIELD = "state"
    CREATED_FIELD = "created_at"
    CLAIMABLE = (JobState.PENDING,)
    OPEN = JOB_OPEN
    TRANSITIONS = JOB_TRANSITIONS
    LEASE_SETTING = "VALIDATION_LEASE_SECONDS"

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="validation_jobs")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    key = models.CharField(max_length=128, help_text="Idempotency key: a repeated request lands on this job.")
    mode = models.CharField(max_length=12, choices=ValidationMode.choices, default=ValidationMode.COLLECTIVES)
    collectives = models.JSONField(default=list, help_text="Operations run across the nodes (collectives mode).")
    nodes = models.JSONField(default=list, blank=True, help_text="Chosen hostnames; empty for all the cluster's nodes.")
    state = models.CharField(max_length=10, choices=JobState.choices, default=JobState.PENDING, db_index=True)
    verdict = models.CharField(max_length=4, choices=RunVerdict.choices, blank=True)
    summary = models.TextField(blank=True, help_text="The verdict in words (shared with the customer).")
    expected = models.JSONField(default=list, help_text="The outputs the job will post: collective names or pairs.")
    received = models.JSONField(default=list, blank=True, help_text="The outputs posted so far.")
    pairs = models.JSONField(default=list, blank=True, help_text="Pairwise sweep: each pair's plateau bus bandwidth.")
    slow_nodes = models.JSONField(default=list, blank=True)
    software_version = models.CharField(max_length=32, blank=True)
    nccl_version = models.CharField(max_length=64, blank=True)
    ofi_version = models.CharField(max_length=64, blank=True)
    upload_base = models.CharField(max_length=300, help_text="The portal's address the job posts its outputs to.")
    token_hash = models.CharField(max_length=64, blank=True)
    token_expires = models.DateTimeField(null=True, blank=True)
    target = models.CharField(max_length=200, blank=True, help_text="The SSM target (head or controller node).")
    command_id = models.CharField(max_length=64, blank=True)
    names_command = models.CharField(max_length=64, blank=True,
                                     help_text="The SSM command listing Slurm's node names, while it runs.")
    slurm_job_id = models.CharField(max_length=32, blank=True)
    error = models.TextField(blank=True, help_text="The provider's text (lead SAs and staff only).")
    failure_reason = models.CharField(max_length=32, blank=True)
    cancelled_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    cancelled_at = models.DateTimeField(null=True, blank=True)
    scancel = models.CharField(max_length=300, blank=True,
                               help_text=_("What the head node answered to scancel (or why none was sent)."))
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True, help_text="Past it, a job that has not reported times out.")
    polls = models.PositiveIntegerField(default=0)
    aws_errors = models.PositiveSmallIntegerField(default=0)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["cluster", "key"], name="health_validation_job_one_per_key")]
        indexes = [models.Index(fields=["cluster", "-created_at"], name="health_validation_job_latest"),
                   models.Index(fields=["state", "deadline"], name="health_validation_job_open")]

    def __str__(self) -> str:
        return f"validation {self.pk} of {self.cluster_id}: {self.state}"

    def get_absolute_url(self) -> str:
        return reverse("health:validationjob_detail", kwargs={"pk": self.pk})

    @property
    def is_open(self) -> bool:
        return self.state in (JobState.PENDING, JobState.SUBMITTED)

    @property
    def what(self) -> str:
        if self.mode == ValidationMode.PAIRWISE:
            return "pairwise sweep"
        return ", ".join(self.collectives)

    def lifecycle_name(self) -> str:
        return f"validation job {self.pk}"

    def transition(self, to: str, **fields) -> None:
        """Move to ``to`` as a compare-and-set on the state this copy read (``Lifecycle.move``); ``fields`` are
        written with it. A finished job's token dies with it."""
        if self.can_transition(to) and self.is_final(to):
            fields.setdefault("token_hash", "")
        self.move(to, **fields)

    def issue_token(self, lifetime) -> str:
        """A new upload token for this job (``gv<job id>.<secret>``); its hash is kept, the token is not."""
        token = f"{JOB_TOKEN_PREFIX}{self.pk}.{secrets.token_urlsafe(32)}"
        self.token_hash = hash_token(token)
        self.token_expires = timezone.now() + lifetime
        return token

    def token_matches(self, token: str) -> bool:
        return bool(self.token_hash) and hmac.compare_digest(self.token_hash, hash_token(token))

    @staticmethod
    def job_id_of(token: str) -> int | None:
        head, _, rest = token.partition(".")
        if not rest or not head.startswith(JOB_TOKEN_PREFIX) or not head[len(JOB_TOKEN_PREFIX):].isdigit():
            return None
        return int(head[len(JOB_TOKEN_PREFIX):])


class ValidationRun(models.Model):
    """An uploaded nccl-tests run, parsed and judged against the expected bus bandwidth."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="validation_runs")
    job = models.ForeignKey(ValidationJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs",
                            help_text="The validation job that posted this run (none for an uploaded log).")
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    uploaded_at = models.DateTimeField(default=timezone.now, db_index=True)
    collective = models.CharField(max_length=16, choices=COLLECTIVE_CHOICES)
    instance_type = models.CharField(max_length=32, blank=True)
    nodes = models.PositiveIntegerField(null=True, blank=True)
    ranks = models.PositiveIntegerField(null=True, blank=True)
    hosts = models.JSONField(default=list)
    rows = models.JSONField(default=list)
    peak_busbw = models.FloatField(default=0)
    avg_busbw = models.FloatField(default=0)
    large_message_busbw = models.FloatField(null=True, blank=True)
    # The run's one bandwidth figure, shown as "plateau bus bandwidth" on every page and in the API: the
    # best busbw (in-place or out-of-place) among messages of 1 GiB and more, what the verdict judges.
    # None when the run never reached 1 GiB.
    plateau_busbw = models.FloatField(null=True, blank=True)
    expected_busbw = models.FloatField(null=True, blank=True)
    transport = models.CharField(max_length=32, blank=True)
    nccl_version = models.CharField(max_length=64, blank=True)
    ofi_version = models.CharField(max_length=64, blank=True)
    verdict = models.CharField(max_length=4, choices=RunVerdict.choices, db_index=True)
    diagnosis = models.TextField(blank=True)
    result = models.JSONField(default=dict, help_text=_("Everything else the parser read (header, footer, notes)."))
    notes = models.TextField(blank=True, help_text=_("What was run, by whom, why."))
    raw_text = models.TextField(blank=True, help_text=_("The uploaded text, cut at HEALTH_VALIDATION_RAW_MAX characters."))
    raw_truncated = models.BooleanField(default=False)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-uploaded_at", "-pk"]
        indexes = [models.Index(fields=["cluster", "verdict"], name="health_run_verdict")]

    def __str__(self) -> str:
        return f"{self.collective} on {self.nodes or '?'} nodes: {self.verdict}"

    def get_absolute_url(self) -> str:
        return reverse("health:validationrun_detail", kwargs={"pk": self.pk})
