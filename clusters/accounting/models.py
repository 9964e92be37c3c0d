"""Stored accelerator-hours per cluster: one row per hour for recent weeks, one per day after that.

The unit is one accelerator for one hour: a GPU on P and G instances, a Trainium chip on Trn instances
(``portal.core.instance_types.InstanceType.accelerator_count``). Pages and exports call it "GPU-hours" where every
accelerator is a GPU and "accelerator-hours" otherwise; the columns keep the issue's ``gpu_hours_*`` names.

Rows are figures, not samples, so a year of a program stays small (``docs/DECISIONS.md``): hourly rows older
than ``ACCOUNTING_HOURLY_WEEKS`` are summed into one row per cluster and program day and deleted.
"""
from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from portal.core import instance_types
from portal.core.models import cycle_field
from portal.core.querysets import RestrictedQuerySet
from workloads.choices import ReservationKind


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


class AccountingSettings(models.Model):
    """An organization's thresholds for idle capacity and stalled training, set by its lead SAs. An
    organization without a row uses the defaults (``DEFAULTS``, from the ``ACCOUNTING_*`` settings)."""

    organization = models.OneToOneField("portal.Organization", on_delete=models.CASCADE,
                                        related_name="accounting_settings")
    idle_busy_percent = models.PositiveSmallIntegerField(
        default=10, validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text=_("A cluster whose healthy accelerators are busy under this share is idle (percent)."))
    idle_hours = models.PositiveSmallIntegerField(
        default=24, validators=[MinValueValidator(1), MaxValueValidator(24 * 14)],
        help_text=_("Closed hours in a row under the share before the lead SAs hear of it."))
    stall_minutes = models.PositiveSmallIntegerField(
        default=15, validators=[MinValueValidator(5), MaxValueValidator(24 * 60)],
        help_text=_("Minutes a busy cluster may sit near zero with flat EFA traffic before a stalled-training fault opens."))
    updated = models.DateTimeField(auto_now=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "accounting settings"

    def __str__(self) -> str:
        return f"{self.organization_id}: idle < {self.idle_busy_percent} % for {self.idle_hours} h, stall {self.stall_minutes} min"


class CheckStatus(models.TextChoices):
    OK = "ok", _("Checked")
    FAILED = "failed", _("Check failed")


# A failed check's reason, in the portal's words (``reservation_checks.failure_reason``).
CHECK_FAILURES = {"access_denied": _("the organization's role may not read it"), "not_found": _("AWS does not know it"),
                  "throttling": _("AWS slowed the portal down; it will ask again"), "error": _("AWS did not answer")}


class ReservationCheck(models.Model):
    """What AWS said of one recorded reservation the last time it was asked, through the organization's role:
    ``GetCapacityReservationUsage`` (ODCRs and Capacity Blocks) or ``DescribeTrainingPlan`` (training plans).
    ``flagged`` is set when AWS reports fewer instances in use than the portal counts held on the clusters
    launched into it (most often none: the cluster runs elsewhere, or the reservation's id is wrong)."""

    reservation = models.OneToOneField("workloads.CapacityReservation", on_delete=models.CASCADE,
                                       related_name="aws_check")
    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="+")
    checked_at = models.DateTimeField()
    status = models.CharField(max_length=8, choices=CheckStatus.choices)
    failure_reason = models.CharField(max_length=32, blank=True)
    error = models.CharField(max_length=2000, blank=True)
    aws_state = models.CharField(max_length=32, blank=True, help_text="AWS's state or status of the reservation.")
    aws_total = models.PositiveIntegerField(null=True, blank=True, help_text="Instances AWS says it holds.")
    aws_in_use = models.PositiveIntegerField(null=True, blank=True, help_text="Instances AWS says are running in it.")
    portal_held = models.PositiveIntegerField(default=0, help_text="Instances of the portal's clusters up on it.")
    flagged = models.BooleanField(default=False, db_index=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["reservation"]

    def __str__(self) -> str:
        return f"{self.reservation_id} {self.status}: AWS {self.aws_in_use}/{self.aws_total}, held {self.portal_held}"

    @property
    def failure_text(self) -> str:
        return CHECK_FAILURES.get(self.failure_reason, CHECK_FAILURES["error"])


class RequestState(models.TextChoices):
    PENDING = "pending", _("To request")
    FULFILLED = "fulfilled", _("Reservation recorded")
    DECLINED = "declined", _("Not requested")


class ReservationRequest(models.Model):
    """A reservation the program is to buy for an organization: one awarded capacity line of a call (instance
    type, region, instances, weeks from the next cycle's first day) with the Capacity Block or training plan
    offering AWS answered when it was awarded. It lives in the cycle the award was made in, like the awarded
    quota, and the cycle start carries it in while it has not ended. The program manager fulfils it (records the
    reservation bought, which the accounting then counts as reserved) or declines it.

    ``award_key`` names the awarded line it comes from (``calls.application:<id>:<line>``): unique, so the same
    award saved twice, or two program managers awarding at once, make one request per line."""

    organization = models.ForeignKey("portal.Organization", on_delete=models.PROTECT,
                                     related_name="reservation_requests")
    cycle = cycle_field("reservation_requests")
    award_key = models.CharField(max_length=100, unique=True)
    awarded_by = models.CharField(max_length=200, blank=True, help_text=_("The call that awarded it."))
    instance_type_name = models.CharField(max_length=32)
    region = models.CharField(max_length=32)
    count = models.PositiveIntegerField()
    weeks = models.PositiveSmallIntegerField()
    start = models.DateField()
    end = models.DateField()
    offering_kind = models.CharField(max_length=20, blank=True, choices=ReservationKind.choices)
    offering_id = models.CharField(max_length=200, blank=True)
    upfront_fee = models.CharField(max_length=32, blank=True)
    quota = models.ForeignKey("workloads.InstanceQuota", null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="reservation_requests")
    state = models.CharField(max_length=12, choices=RequestState.choices, default=RequestState.PENDING,
                             db_index=True)
    reservation = models.OneToOneField("workloads.CapacityReservation", null=True, blank=True,
                                       on_delete=models.SET_NULL, related_name="request")
    note = models.TextField(blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    history = HistoricalRecords()
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["start", "organization__name", "id"]
        constraints = [models.CheckConstraint(condition=Q(end__gte=F("start")), name="accounting_request_dates")]

    def __str__(self) -> str:
        return f"{self.count} × {self.instance_type_name} {self.region} from {self.start:%Y-%m-%d}"

    def get_absolute_url(self) -> str:
        return reverse("accounting:request_detail", kwargs={"pk": self.pk})

    @property
    def accelerator_hours(self) -> int:
        kind = instance_types.find(self.instance_type_name)
        return self.count * self.weeks * 7 * 24 * (kind.accelerator_count if kind else 0)
