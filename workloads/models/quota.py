"""Instance quotas the program hands out, the capacity reservations that back them, and requests to change them."""
from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from portal.core import locks
from portal.core.choices import REGION_CHOICES
from portal.core.models import cycle_field
from portal.core.querysets import RestrictedQuerySet
from workloads import usage, validators
from workloads.choices import RequestStatus, ReservationKind

RESERVATION_ID_RE = r"^cr-[0-9a-f]{8,17}$"
TRAINING_PLAN_ARN_RE = r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:\d{12}:training-plan/[a-zA-Z0-9-]{1,63}$"
AZ_RE = r"^[a-z]{2}-[a-z]+-\d[a-z]$"


def _check_dates(start, end, errors: dict) -> None:
    if start and end and end < start:
        errors.setdefault("end", []).append(gettext("The end date is before the start date."))


class DatedCapacityMixin:
    """What quotas and reservations share: a page to open them on, and the days until they end."""

    def get_absolute_url(self) -> str:
        # The organization's quota page: everyone who may see the row may open it (the edit form is for PMs).
        return f"{reverse('workloads:quota_list')}?organization={self.organization_id}"

    @property
    def days_left(self) -> int:
        return (self.end - timezone.localdate()).days


class ActiveQuerySet(RestrictedQuerySet):
    def active_on(self, day) -> ActiveQuerySet:
        return self.filter(start__lte=day, end__gte=day)


class InstanceQuota(DatedCapacityMixin, models.Model):
    """N instances of type T in region R for an organization, from one date to another."""

    organization = models.ForeignKey("portal.Organization", on_delete=models.PROTECT, related_name="instance_quotas")
    cycle = cycle_field("instance_quotas")
    instance_type_name = models.CharField(max_length=32, validators=[validators.validate_instance_type])
    region = models.CharField(max_length=32, choices=REGION_CHOICES, validators=[validators.validate_region])
    count = models.PositiveIntegerField(validators=[validators.validate_positive])
    start = models.DateField()
    end = models.DateField()
    notes = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    history = HistoricalRecords()
    objects = ActiveQuerySet.as_manager()

    class Meta:
        ordering = ["organization__name", "instance_type_name", "region", "start"]
        indexes = [models.Index(fields=["organization", "instance_type_name", "region", "end"], name="quota_lookup")]

    def __str__(self) -> str:
        return f"{self.count} × {self.instance_type_name} in {self.region} ({self.start} → {self.end})"

    def save(self, *args, **kwargs) -> None:
        """Check again, under the organization's quota lock (the one launches take), that the clusters
        still fit: a form's check ran before the lock, and a launch may have committed since."""
        with transaction.atomic():
            locks.quota(self.organization_id)
            message = usage.refusal_for_quota_change(self) if self.organization_id and self.start and self.end else None
            if message:
                raise ValidationError({"count": [message]})
            super().save(*args, **kwargs)

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}
        _check_dates(self.start, self.end, errors)
        if not errors and self.organization_id and self.instance_type_name and self.region and self.count and self.start:
            message = usage.refusal_for_quota_change(self)
            if message:
                errors.setdefault("count", []).append(message)
        if errors:
            raise ValidationError(errors)


class CapacityReservation(DatedCapacityMixin, models.Model):
    """An On-Demand Capacity Reservation or a Capacity Block for ML (both have ids ``cr-…``)."""

    organization = models.ForeignKey("portal.Organization", on_delete=models.PROTECT, related_name="capacity_reservations")
    cycle = cycle_field("capacity_reservations")
    reservation_id = models.CharField(
        max_length=200, validators=[RegexValidator(
            f"{RESERVATION_ID_RE}|{TRAINING_PLAN_ARN_RE}",
            "A reservation id looks like cr-0123456789abcdef0; a training plan is its ARN "
            "(arn:aws:sagemaker:<region>:<account>:training-plan/<name>).")]
    )
    kind = models.CharField(max_length=20, choices=ReservationKind.choices, default=ReservationKind.ODCR)
    instance_type_name = models.CharField(max_length=32, validators=[validators.validate_instance_type])
    count = models.PositiveIntegerField(validators=[validators.validate_positive])
    region = models.CharField(max_length=32, choices=REGION_CHOICES, validators=[validators.validate_region])
    availability_zone = models.CharField(
        max_length=32, validators=[RegexValidator(AZ_RE, _("An availability zone looks like ap-northeast-1a."))]
    )
    start = models.DateField()
    end = models.DateField()
    quota = models.ForeignKey(InstanceQuota, null=True, blank=True, on_delete=models.SET_NULL, related_name="reservations",
                              help_text=_("The quota this reservation backs."))
    notes = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    history = HistoricalRecords()
    objects = ActiveQuerySet.as_manager()

    class Meta:
        ordering = ["end", "reservation_id"]
        indexes = [models.Index(fields=["reservation_id"], name="reservation_id_idx"),
                   models.Index(fields=["organization", "end"], name="reservation_org_end")]

    def __str__(self) -> str:
        return f"{self.reservation_id} · {self.count} × {self.instance_type_name}"

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}
        _check_dates(self.start, self.end, errors)
        if self.region and self.availability_zone and not self.availability_zone.startswith(self.region):
            errors.setdefault("availability_zone", []).append(f"{self.availability_zone} is not in {self.region}.")
        is_plan = self.kind == ReservationKind.TRAINING_PLAN
        if self.reservation_id and is_plan != bool(re.match(TRAINING_PLAN_ARN_RE, self.reservation_id)):
            errors.setdefault("reservation_id", []).append(
                gettext("A training plan is named by its ARN.") if is_plan
                else gettext("An ODCR or Capacity Block id looks like cr-0123456789abcdef0."))
        if self.reservation_id and self.start and self.end and "end" not in errors:
            overlapping = CapacityReservation.objects.filter(
                reservation_id=self.reservation_id, start__lte=self.end, end__gte=self.start
            ).exclude(pk=self.pk)
            if overlapping.exists():
                errors.setdefault("reservation_id", []).append(
                    gettext("%(reservation)s is already recorded for dates that overlap %(start)s → %(end)s.")
                    % {"reservation": self.reservation_id, "start": self.start, "end": self.end}
                )
        if self.quota_id:
            quota = self.quota
            if (quota.organization_id, validators.base_instance_type(quota.instance_type_name), quota.region) != (
                self.organization_id, validators.base_instance_type(self.instance_type_name or ""), self.region
            ):
                errors.setdefault("quota", []).append(
                    gettext("The quota must be the organization's quota for the same instance type and region.")
                )
        if errors:
            raise ValidationError(errors)


class QuotaChangeRequest(models.Model):
    """A lead SA asks for a quota to change (or for a new one); a program manager decides.

    The quota changes only on approval (:func:`workloads.services.decide`), which records each step.
    """

    organization = models.ForeignKey("portal.Organization", on_delete=models.PROTECT, related_name="quota_requests")
    quota = models.ForeignKey(InstanceQuota, null=True, blank=True, on_delete=models.SET_NULL, related_name="change_requests",
                              help_text=_("The quota to change; leave empty to ask for a new quota."))
    instance_type_name = models.CharField(max_length=32, blank=True, validators=[validators.validate_instance_type])
    region = models.CharField(max_length=32, blank=True, choices=REGION_CHOICES, validators=[validators.validate_region])
    current_count = models.PositiveIntegerField(default=0, editable=False)
    requested_count = models.PositiveIntegerField(validators=[validators.validate_positive],
                                                  help_text=_("The total the quota should have."))
    start = models.DateField(null=True, blank=True)
    end = models.DateField(null=True, blank=True, help_text=_("For a change: leave empty to keep the quota's end date."))
    justification = models.TextField()
    status = models.CharField(max_length=12, choices=RequestStatus.choices, default=RequestStatus.PENDING, db_index=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_comment = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)

    history = HistoricalRecords()
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.instance_type_name} {self.current_count} → {self.requested_count} ({self.get_status_display()})"

    def get_absolute_url(self) -> str:
        return reverse("workloads:changerequest_detail", kwargs={"pk": self.pk})

    @property
    def delta(self) -> int:
        return self.requested_count - self.current_count

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}

        def add(field, message):
            errors.setdefault(field, []).append(message)

        if self.quota_id:
            quota = self.quota
            if quota.organization_id != self.organization_id:
                add("quota", gettext("The quota belongs to another organization."))
            self.instance_type_name, self.region, self.current_count = quota.instance_type_name, quota.region, quota.count
            if self.start is None:
                self.start = quota.start
            if self.end is None:
                self.end = quota.end
            if self.requested_count and self.requested_count == quota.count and self.end == quota.end:
                add("requested_count", gettext("The quota already has %(count)s: ask for a different number or end date.")
                    % {"count": quota.count})
        else:
            self.current_count = 0
            for field in ("instance_type_name", "region", "start", "end"):
                if not getattr(self, field):
                    add(field, gettext("Required for a new quota."))
        _check_dates(self.start, self.end, errors)
        if self.quota_id and self.requested_count and not errors and self.status == RequestStatus.PENDING:
            message = usage.refusal_for_quota_change(self.proposed_quota())
            if message:
                add("requested_count", message)
        if errors:
            raise ValidationError(errors)

    def proposed_quota(self) -> InstanceQuota:
        """The quota as it would be after approval (unsaved)."""
        if self.quota_id:
            quota = InstanceQuota.objects.get(pk=self.quota_id)
            quota.count = self.requested_count
            quota.start = self.start or quota.start
            quota.end = self.end or quota.end
            return quota
        return InstanceQuota(
            organization_id=self.organization_id, instance_type_name=self.instance_type_name, region=self.region,
            count=self.requested_count, start=self.start, end=self.end,
            notes=f"From change request: {self.justification[:200]}",
        )


class ExpiryWarning(models.Model):
    """A warning already sent, so a re-run of the expiry task never repeats it. Internal bookkeeping."""

    kind = models.CharField(max_length=16)  # "quota" or "reservation"
    object_id = models.PositiveBigIntegerField()
    threshold_days = models.PositiveSmallIntegerField()
    ends_on = models.DateField()
    sent_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "object_id", "threshold_days", "ends_on"],
                                               name="unique_expiry_warning")]

    def __str__(self) -> str:
        return f"{self.kind} #{self.object_id}: {self.threshold_days} days before {self.ends_on}"


