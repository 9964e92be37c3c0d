"""Reports (figures, not raw samples), the node verdicts of the latest report that covered each node, a cluster's
current health merged over its reports, and pushed scrapes waiting for the worker."""
from __future__ import annotations

from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from clusters.health.choices import Source
from portal.core.choices import NodeVerdict
from portal.core.jobs.models import Job
from portal.core.querysets import RestrictedQuerySet


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


class HealthPush(Job):
    """A pushed scrape waiting for, or done with, the health worker. The request stores the body
    (gzip-compressed, under ``MEDIA_ROOT/health-pushes/``) and answers at once; the worker parses it
    as a stream. The body file is deleted once the push is done, failed or superseded.

    A job of ``portal.core.jobs`` whose messages carry no send number: in place of the jobs' ``attempts`` (a send
    number), ``claims`` counts the worker's claims of it (a push the worker stopped on three times is given up)."""

    CREATED_FIELD = "received_at"
    CLAIMABLE = (PushStatus.PENDING, PushStatus.PROCESSING)
    LEASE_SETTING = "HEALTH_PUSH_LEASE_SECONDS"

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="health_pushes")
    received_at = models.DateTimeField(default=timezone.now)
    status = models.CharField(max_length=12, choices=PushStatus.choices, default=PushStatus.PENDING)
    body = models.CharField(max_length=255, blank=True, help_text=_("Path of the gzip body under MEDIA_ROOT."))
    compressed_bytes = models.PositiveBigIntegerField(default=0)
    text_bytes = models.PositiveBigIntegerField(default=0)
    scope = models.CharField(max_length=8, default="nodes", help_text=_("full: the whole cluster; nodes: the nodes in it."))
    declared_nodes = models.JSONField(default=list, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = None  # the jobs' send number: pushes are not numbered (see ``claims``)
    claims = models.PositiveSmallIntegerField(default=0, help_text=_("How many times a worker claimed the push."))
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
