"""GPU, EFA and node faults with their lifecycle (opened, updated while present, cleared), and the program week
each was first seen in."""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from clusters.health.models.reports import HealthReport
from portal.core.choices import FaultSeverity, NodeVerdict
from portal.core.querysets import RestrictedQuerySet
from portal.core.weeks import week_of

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
        "interactions.Interaction", null=True, blank=True, on_delete=models.SET_NULL, related_name="gpu_faults",
        help_text=_("The support interaction that follows this fault (same organization as the cluster)."),
    )

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        verbose_name = _("GPU fault")
        verbose_name_plural = _("GPU faults")
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
