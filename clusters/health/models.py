"""What the portal keeps of cluster health: reports (figures, not raw samples), node verdicts of the
latest report, GPU faults with their lifecycle, NCCL validation runs, and each cluster's ingestion
settings (a hashed token, the Prometheus endpoint to pull from)."""
from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from clusters.health.choices import (
    COLLECTIVE_CHOICES,
    JOB_TRANSITIONS,
    AuthKind,
    JobState,
    RunVerdict,
    Source,
    ValidationMode,
)
from portal.querysets import RestrictedQuerySet
from portal.vocabulary import FaultSeverity, NodeVerdict
from portal.weeks import week_of

TOKEN_PREFIX = "gh"
JOB_TOKEN_PREFIX = "gv"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ClusterHealthConfig(models.Model):
    """How a cluster's health reaches the portal. The ingestion token is kept as a hash only."""

    cluster = models.OneToOneField("clusters.Cluster", on_delete=models.CASCADE, related_name="health_config")
    token_hash = models.CharField(max_length=64, blank=True)
    token_hint = models.CharField(max_length=12, blank=True, help_text=_("The token's first characters, to recognise it."))
    token_rotated_at = models.DateTimeField(null=True, blank=True)
    pull_enabled = models.BooleanField(default=False)
    pull_url = models.URLField(blank=True, help_text=_("Prometheus-compatible base URL; /api/v1/query is appended."))
    auth_kind = models.CharField(max_length=8, choices=AuthKind.choices, default=AuthKind.NONE)
    username = models.CharField(max_length=200, blank=True)
    secret = models.CharField(max_length=500, blank=True, help_text=_("Password or bearer token; never shown again."))
    aws_region = models.CharField(max_length=32, blank=True, help_text=_("AMP workspace region (SigV4)."))
    last_pull_at = models.DateTimeField(null=True, blank=True)
    last_pull_error = models.TextField(blank=True, help_text=_("The portal's own sentence; never the endpoint's text."))
    last_pull_status = models.PositiveSmallIntegerField(null=True, blank=True,
                                                        help_text=_("HTTP status of the last pull, when it got one."))
    updated = models.DateTimeField(auto_now=True)

    objects = RestrictedQuerySet.as_manager()

    def __str__(self) -> str:
        return f"health settings of {self.cluster_id}"

    def save(self, *args, **kwargs):
        """A secret belongs to the endpoint it was given for: a new URL or auth kind drops it, so a
        stored password or token is never sent to a host its owner did not name it for."""
        loaded = getattr(self, "_loaded_target", None)
        if loaded is not None and (self.pull_url, self.auth_kind) != loaded[:2] and self.secret == loaded[2]:
            self.secret = ""
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "secret"}
        super().save(*args, **kwargs)
        self._loaded_target = (self.pull_url, self.auth_kind, self.secret)

    @classmethod
    def from_db(cls, db, field_names, values):
        instance = super().from_db(db, field_names, values)
        instance._loaded_target = (instance.__dict__.get("pull_url"), instance.__dict__.get("auth_kind"),
                                   instance.__dict__.get("secret"))
        return instance

    def rotate_token(self) -> str:
        """Make a new token, keep its hash, and answer the token itself (shown once)."""
        token = f"{TOKEN_PREFIX}{self.cluster_id}.{secrets.token_urlsafe(32)}"
        self.token_hash = hash_token(token)
        self.token_hint = token[:10]
        self.token_rotated_at = timezone.now()
        return token

    def token_matches(self, token: str) -> bool:
        return bool(self.token_hash) and hmac.compare_digest(self.token_hash, hash_token(token))

    @staticmethod
    def cluster_id_of(token: str) -> int | None:
        """The cluster a token names (``gh<cluster id>.<secret>``); None for anything else."""
        head, _, rest = token.partition(".")
        if not rest or not head.startswith(TOKEN_PREFIX) or not head[len(TOKEN_PREFIX):].isdigit():
            return None
        return int(head[len(TOKEN_PREFIX):])


class HealthReport(models.Model):
    """One ingested scrape, summarized: the dashboard's six figures, verdict counts and faults."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="health_reports")
    received_at = models.DateTimeField(default=timezone.now, db_index=True)
    source = models.CharField(max_length=8, choices=Source.choices)
    instance_type = models.CharField(max_length=32, blank=True)
    node_count = models.PositiveIntegerField(default=0)
    gpus_expected = models.PositiveIntegerField(default=0)
    gpus_seen = models.PositiveIntegerField(default=0)
    samples = models.PositiveIntegerField(default=0)
    uncorrectable_remapped_rows = models.FloatField(default=0)
    correctable_remapped_rows = models.FloatField(default=0)
    xid_errors = models.PositiveIntegerField(default=0)
    row_remap_failures = models.PositiveIntegerField(default=0)
    thermal_violations = models.PositiveIntegerField(default=0)
    missing_gpus = models.PositiveIntegerField(default=0)
    healthy_gpu_share = models.FloatField(null=True, blank=True)
    nodes_healthy = models.PositiveIntegerField(default=0)
    nodes_degraded = models.PositiveIntegerField(default=0)
    nodes_reset_gpu = models.PositiveIntegerField(default=0)
    nodes_reboot = models.PositiveIntegerField(default=0)
    nodes_replace = models.PositiveIntegerField(default=0)
    fault_count = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, help_text=_("The summary without its node list (nodes are NodeHealth rows)."))
    state = models.JSONField(default=dict, help_text=_("Counter baselines for the next report."))

    objects = RestrictedQuerySet.as_manager()

    PANELS = (
        ("uncorrectable_remapped_rows", _("Uncorrectable remapped rows")),
        ("correctable_remapped_rows", _("Correctable remapped rows")),
        ("xid_errors", _("GPUs with XID errors")),
        ("row_remap_failures", _("Row remap failures")),
        ("thermal_violations", _("Thermal violations")),
        ("missing_gpus", _("GPUs missing from nvidia-smi")),
    )

    class Meta:
        ordering = ["-received_at", "-pk"]
        indexes = [models.Index(fields=["cluster", "-received_at"], name="health_report_latest")]

    def __str__(self) -> str:
        return f"health of {self.cluster_id} at {self.received_at:%Y-%m-%d %H:%M}"

    def get_absolute_url(self) -> str:
        return reverse("health:cluster_health", kwargs={"pk": self.cluster_id})

    @property
    def panels(self) -> list[tuple[str, str, float]]:
        return [(key, str(label), getattr(self, key)) for key, label in self.PANELS]

    @property
    def unhealthy_nodes(self) -> int:
        return self.node_count - self.nodes_healthy


class NodeHealth(models.Model):
    """A node's verdict from the latest report that covered it (older reports keep figures only).

    A cluster's node table is the merge of its reports: a report replaces the rows of the nodes it
    covers and leaves the others as they were, so exporters may push one node at a time. ``seen_at``
    says when the node last reported; ``figures`` holds its share of the dashboard's panels so the
    cluster's figures can be recomputed from the rows."""

    report = models.ForeignKey(HealthReport, on_delete=models.CASCADE, related_name="nodes")
    cluster = models.ForeignKey("clusters.Cluster", null=True, on_delete=models.CASCADE, related_name="health_nodes")
    seen_at = models.DateTimeField(null=True)
    figures = models.JSONField(default=dict)
    hostname = models.CharField(max_length=255)
    verdict = models.CharField(max_length=12, choices=NodeVerdict.choices)
    rank = models.PositiveSmallIntegerField(help_text=_("Severity of the verdict, 0 = healthy."))
    reasons = models.JSONField(default=list)
    expected_gpus = models.PositiveSmallIntegerField(null=True, blank=True)
    gpus_seen = models.PositiveSmallIntegerField(default=0)
    missing_gpus = models.JSONField(default=list)
    efa_devices_seen = models.PositiveSmallIntegerField(default=0)
    model = models.CharField(max_length=100, blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-rank", "hostname"]
        indexes = [
            models.Index(fields=["report", "-rank", "hostname"], name="health_node_severity"),
            models.Index(fields=["cluster", "-rank", "hostname"], name="health_node_cluster"),
            models.Index(fields=["cluster", "seen_at"], name="health_node_seen"),
        ]
        constraints = [models.UniqueConstraint(fields=["cluster", "hostname"], name="health_one_row_per_node")]

    def __str__(self) -> str:
        return f"{self.hostname}: {self.verdict}"


INTERACTION_OTHER_ORGANIZATION = "The interaction belongs to another organization than the fault's cluster."


def check_same_organization(organization_id: int, interaction) -> None:
    """A fault is linked only to an interaction of its cluster's organization."""
    if interaction is not None and interaction.organization_id != organization_id:
        raise ValidationError({"interaction": INTERACTION_OTHER_ORGANIZATION})


class GpuFault(models.Model):
    """Something wrong with one GPU, EFA device or node: opened when first seen, updated while
    present, cleared after it has been absent for HEALTH_FAULT_CLEAR_AFTER reports."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="gpu_faults")
    hostname = models.CharField(max_length=255)
    gpu = models.CharField(max_length=32, blank=True, help_text=_("GPU index, blank for EFA and node faults."))
    device = models.CharField(max_length=64, blank=True, help_text=_("EFA device."))
    uuid = models.CharField(max_length=80, blank=True)
    kind = models.CharField(max_length=40)
    xid = models.PositiveIntegerField(null=True, blank=True)
    severity = models.CharField(max_length=8, choices=FaultSeverity.choices)
    severity_rank = models.PositiveSmallIntegerField(default=0)
    verdict = models.CharField(max_length=12, choices=NodeVerdict.choices)
    meaning = models.CharField(max_length=300)
    action = models.CharField(max_length=300)
    value = models.FloatField(null=True, blank=True)
    pod = models.CharField(max_length=255, blank=True)
    first_seen = models.DateTimeField()
    # The program week (its Monday) of first_seen, stored with the fault: the weekly review counts faults
    # per week from one index instead of comparing every fault of the last weeks with each week's bounds.
    first_week = models.DateField(editable=False, db_index=True)
    last_seen = models.DateTimeField()
    absent_reports = models.PositiveSmallIntegerField(default=0)
    cleared_at = models.DateTimeField(null=True, blank=True, db_index=True)
    last_report = models.ForeignKey(HealthReport, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    evidence = models.JSONField(default=dict, blank=True,
                                help_text="What opened a cluster-wide fault: the GPU and EFA traces it was read from.")
    interaction = models.ForeignKey(
        "workloads.Interaction", null=True, blank=True, on_delete=models.SET_NULL, related_name="gpu_faults",
        help_text=_("The support interaction that follows this fault (same organization as the cluster)."),
    )

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-severity_rank", "hostname", "gpu", "kind"]
        indexes = [
            models.Index(fields=["cluster", "cleared_at"], name="health_fault_open"),
            # The overview and /health/ count open faults per cluster: a partial index holds only those.
            models.Index(fields=["cluster", "severity"], condition=models.Q(cleared_at__isnull=True),
                         name="health_fault_open_sev"),
        ]
        constraints = [
            # One open fault per (cluster, node, GPU or EFA device, kind, XID code), whatever races:
            # concurrent ingestions of one cluster are serialized, and this holds even if they were not.
            models.UniqueConstraint(
                "cluster", "hostname", "gpu", "device", "kind", Coalesce("xid", 0),
                condition=models.Q(cleared_at__isnull=True), name="health_one_open_fault",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.hostname} {self.where}: {self.meaning}"

    def save(self, *args, **kwargs) -> None:
        self.first_week = week_of(self.first_seen)
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("health:cluster_health", kwargs={"pk": self.cluster_id})

    def clean(self) -> None:
        super().clean()
        if self.interaction_id is not None and self.cluster_id is not None:
            check_same_organization(self.cluster.organization_id, self.interaction)

    @property
    def is_open(self) -> bool:
        return self.cleared_at is None

    @property
    def where(self) -> str:
        return f"GPU {self.gpu}" if self.gpu else (f"EFA {self.device}" if self.device else "node")

    @property
    def suggested_summary(self) -> str:
        """A summary for an interaction opened from this fault, e.g. "XID 79 on node-3 GPU 5"."""
        what = f"XID {self.xid}" if self.xid else self.meaning
        return f"{what} on {self.hostname} {self.where}"[:200]

    @property
    def key(self) -> tuple:
        return (self.hostname, self.kind, self.gpu, self.device, self.xid or 0)


class IllegalTransition(Exception):
    """A move the job's lifecycle does not allow, or one another request or worker made first."""


class ValidationJob(models.Model):
    """An NCCL (or Neuron) validation the portal starts on a cluster: submitted with ``sbatch`` through SSM on
    the head node by a worker, its outputs posted back with a token scoped to this job, judged into runs.

    ``state`` is the portal's lifecycle (compare-and-set, :meth:`transition`); the lease, heartbeat and
    attempts make the submission a job that is neither lost nor doubled (as ``clusters/pipeline.py``). The
    upload token is kept as a hash, accepted once per expected output, and dies with the job or at
    ``token_expires``."""

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
    dispatched = models.BooleanField(default=False)
    attempts = models.PositiveIntegerField(default=0)
    polls = models.PositiveIntegerField(default=0)
    aws_errors = models.PositiveSmallIntegerField(default=0)
    heartbeat = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)

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

    def transition(self, to: str, **fields) -> None:
        """Move to ``to`` as a compare-and-set on the state this copy read; ``fields`` are written with it.
        A finished job's token dies with it."""
        if to not in JOB_TRANSITIONS[self.state]:
            raise IllegalTransition(f"validation job {self.pk}: {self.state} → {to} is not allowed")
        previous = self.state
        if not JOB_TRANSITIONS[to]:
            fields.setdefault("finished_at", timezone.now())
            fields.setdefault("token_hash", "")
        moved = ValidationJob.objects.filter(pk=self.pk, state=previous).update(state=to, **fields)
        if not moved:
            self.refresh_from_db(fields=["state"])
            raise IllegalTransition(f"validation job {self.pk}: expected {previous}, found {self.state}; {to} not applied")
        self.state = to
        for name, value in fields.items():
            setattr(self, name, value)

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


class ClusterHealthState(models.Model):
    """A cluster's current health, merged over its reports and kept up to date by each ingestion:
    what the program-wide pages sort, filter and total without reading reports or node rows.

    ``worst_rank`` is the worst node verdict's rank (-1 before any report); ``oldest_seen`` is when the
    least recently reporting node last reported, so "a node is silent" is one indexed comparison.
    ``totals`` is the sum of the node rows' figures, kept by difference (a report subtracts the rows it
    replaces), so a one-node push costs one node, not the cluster. ``state`` holds the counter
    baselines of every node for the next report."""

    cluster = models.OneToOneField("clusters.Cluster", on_delete=models.CASCADE, related_name="health_state")
    last_report = models.ForeignKey(HealthReport, null=True, on_delete=models.SET_NULL, related_name="+")
    last_report_at = models.DateTimeField(null=True)
    nodes_known = models.PositiveIntegerField(default=0)
    worst_rank = models.SmallIntegerField(default=-1)
    open_faults = models.PositiveIntegerField(default=0)
    critical_faults = models.PositiveIntegerField(default=0)
    oldest_seen = models.DateTimeField(null=True)
    totals = models.JSONField(default=dict, help_text=_("Node counts per verdict and the panels, summed over nodes."))
    state = models.JSONField(default=dict)
    updated = models.DateTimeField(auto_now=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["-worst_rank", "-critical_faults"], name="health_state_problems")]

    def __str__(self) -> str:
        return f"current health of {self.cluster_id}"


class PushStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    PROCESSING = "processing", _("Processing")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")
    SUPERSEDED = "superseded", _("Superseded")


class HealthPush(models.Model):
    """A pushed scrape waiting for, or done with, the health worker. The request stores the body
    (gzip-compressed, under ``MEDIA_ROOT/health-pushes/``) and answers at once; the worker parses it
    as a stream. The body file is deleted once the push is done, failed or superseded."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="health_pushes")
    received_at = models.DateTimeField(default=timezone.now)
    status = models.CharField(max_length=12, choices=PushStatus.choices, default=PushStatus.PENDING)
    body = models.CharField(max_length=255, blank=True, help_text=_("Path of the gzip body under MEDIA_ROOT."))
    compressed_bytes = models.PositiveBigIntegerField(default=0)
    text_bytes = models.PositiveBigIntegerField(default=0)
    scope = models.CharField(max_length=8, default="nodes", help_text=_("full: the whole cluster; nodes: the nodes in it."))
    declared_nodes = models.JSONField(default=list, blank=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    report = models.ForeignKey(HealthReport, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-received_at", "-pk"]
        indexes = [
            models.Index(fields=["cluster", "-received_at"], name="health_push_latest"),
            models.Index(fields=["received_at"], condition=models.Q(status__in=["pending", "processing"]),
                         name="health_push_queued"),
        ]

    def __str__(self) -> str:
        return f"push {self.pk} of {self.cluster_id}: {self.status}"

    def get_absolute_url(self) -> str:
        return reverse("health:cluster_health", kwargs={"pk": self.cluster_id})


def stamp_weeks(model=None, batch: int = 5000) -> int:
    """Store every fault's program week again from its ``first_seen`` (after a bulk load, or a change of the
    program's time zone); returns how many changed."""
    model = model or GpuFault
    changed = []
    count = 0
    for pk, first_seen, first_week in (model._default_manager.order_by("pk")
                                       .values_list("pk", "first_seen", "first_week").iterator(chunk_size=batch)):
        week = week_of(first_seen)
        if week != first_week:
            changed.append(model(pk=pk, first_week=week))
        if len(changed) == batch:
            model._default_manager.bulk_update(changed, ["first_week"])
            count += len(changed)
            changed = []
    model._default_manager.bulk_update(changed, ["first_week"])
    return count + len(changed)


class SnsMessage(models.Model):
    """An Amazon SNS message the alert endpoint accepted: its id is unique, so a replayed message is refused."""

    message_id = models.CharField(max_length=100, unique=True)
    topic_arn = models.CharField(max_length=256)
    kind = models.CharField(max_length=32)
    received_at = models.DateTimeField(default=timezone.now, db_index=True)
    cluster = models.ForeignKey("clusters.Cluster", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    outcome = models.CharField(max_length=200, blank=True)

    class Meta:  # no user reads these rows (they are the endpoint's memory), so no access rule either
        ordering = ["-received_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.message_id}"
