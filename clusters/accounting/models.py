"""Stored accelerator-hours per cluster: one row per hour for recent weeks, one per day after that.

The unit is one accelerator for one hour: a GPU on P and G instances, a Trainium chip on Trn instances
(``clusters.instance_types.InstanceType.accelerator_count``). Pages and exports call it "GPU-hours" where every
accelerator is a GPU and "accelerator-hours" otherwise; the columns keep the issue's ``gpu_hours_*`` names.

Rows are figures, not samples, so a year of a program stays small (``docs/DECISIONS.md``): hourly rows older
than ``ACCOUNTING_HOURLY_WEEKS`` are summed into one row per cluster and program day and deleted.
"""
from __future__ import annotations

from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from portal.querysets import RestrictedQuerySet


class Granularity(models.TextChoices):
    HOUR = "hour", _("Hour")
    DAY = "day", _("Day")


class AcceleratorUsage(models.Model):
    """A cluster's accelerator-hours held, healthy and busy in one hour (or one program day, once rolled up).

    ``held >= healthy >= busy >= 0`` holds on every row (a check constraint): the computation clamps, the
    database refuses anything else."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="accelerator_usage")
    # Copied from the cluster: an organization's figures are one indexed sum, without a join.
    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="+")
    start = models.DateTimeField(help_text=_("Start of the hour (UTC) or of the program day."))
    granularity = models.CharField(max_length=4, choices=Granularity.choices, default=Granularity.HOUR)
    held = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    healthy = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    busy = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    measured = models.DecimalField(
        max_digits=12, decimal_places=4, default=0,
        help_text=_("Healthy accelerator-hours whose utilization was read (busy is 0 where it was not)."))
    reports = models.PositiveIntegerField(default=0, help_text=_("Health reports the figures were read from."))
    computed_at = models.DateTimeField(auto_now=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["cluster", "start"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "start"], name="accounting_one_row_per_period"),
            models.CheckConstraint(
                condition=Q(held__gte=F("healthy")) & Q(healthy__gte=F("busy")) & Q(busy__gte=0)
                & Q(healthy__gte=F("measured")) & Q(measured__gte=0),
                name="accounting_held_healthy_busy"),
        ]
        indexes = [models.Index(fields=["organization", "start"], name="accounting_org_start"),
                   models.Index(fields=["granularity", "start"], name="accounting_rollup")]

    def __str__(self) -> str:
        return f"{self.cluster_id} {self.granularity} {self.start:%Y-%m-%d %H:%M}: {self.held}/{self.healthy}/{self.busy}"


class IdleNotice(models.Model):
    """A cluster found idle while a reservation is in force: ``since`` is when its idle stretch began. The lead
    SA is notified once per stretch (one open notice per cluster, a partial unique key); ``ended`` is set when the
    cluster is busy again, or no longer held."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="idle_notices")
    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="+")
    since = models.DateTimeField()
    notified_at = models.DateTimeField(null=True, blank=True)
    ended = models.DateTimeField(null=True, blank=True, db_index=True)
    lost = models.DecimalField(max_digits=12, decimal_places=4, default=0,
                               help_text=_("Healthy but idle accelerator-hours since the stretch began."))

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-since"]
        constraints = [models.UniqueConstraint(fields=["cluster"], condition=Q(ended__isnull=True),
                                               name="accounting_one_open_idle_notice")]

    def __str__(self) -> str:
        return f"{self.cluster_id} idle since {self.since:%Y-%m-%d %H:%M}"


class OrganizationDay(models.Model):
    """An organization's accelerator-hours of one program day and instance type: the sum of its clusters' rows,
    kept by every run that writes them (``services.summarize``). The weekly review and the forecast read
    these, so a program of 120 organizations sums a few thousand rows, not a few million."""

    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="+")
    instance_type = models.CharField(max_length=32)
    day = models.DateField()
    held = models.DecimalField(max_digits=14, decimal_places=4, default=0)
    healthy = models.DecimalField(max_digits=14, decimal_places=4, default=0)
    busy = models.DecimalField(max_digits=14, decimal_places=4, default=0)
    measured = models.DecimalField(max_digits=14, decimal_places=4, default=0)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["organization", "day", "instance_type"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "instance_type", "day"], name="accounting_org_day"),
            models.CheckConstraint(condition=Q(held__gte=F("healthy")) & Q(healthy__gte=F("busy")) & Q(busy__gte=0),
                                   name="accounting_org_day_held_healthy_busy"),
        ]
        indexes = [models.Index(fields=["day", "organization"], name="accounting_day_org")]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.instance_type} {self.day}: {self.held}/{self.healthy}/{self.busy}"
