"""What an organization's AWS account cost, per day and service, as Cost Explorer reports it.

The program pays for capacity that should become training; cost per day beside GPU-hours is how the
steering meeting sees money spent on idle or stalled capacity. Rows are written only by the fetch
(``workloads/spend.py``), which replaces a day's rows whenever Cost Explorer reports that day again
(recent days are estimates and change). ``CostFetch`` keeps the last attempt per organization, with
AWS's own words for lead SAs and staff.
"""
from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from portal.core.querysets import RestrictedQuerySet


class CostDay(models.Model):
    """One service's unblended cost on one day in an organization's linked account (USD)."""

    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="cost_days")
    day = models.DateField()
    service = models.CharField(max_length=200)
    amount_usd = models.DecimalField(max_digits=18, decimal_places=6)
    fetched_at = models.DateTimeField()

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["organization", "-day", "service"]
        constraints = [models.UniqueConstraint(fields=["organization", "day", "service"], name="cost_day_unique")]
        indexes = [models.Index(fields=["day", "organization"], name="cost_day_day_org")]

    def __str__(self) -> str:
        return f"{self.day} {self.service}: {self.amount_usd} USD"


class CostFetchStatus(models.TextChoices):
    OK = "ok", _("Fetched")
    FAILED = "failed", _("Failed")


class CostFetch(models.Model):
    """The last time the portal asked Cost Explorer about an organization, and how it went."""

    organization = models.OneToOneField("portal.Organization", on_delete=models.CASCADE, related_name="cost_fetch")
    status = models.CharField(max_length=10, choices=CostFetchStatus.choices)
    attempted_at = models.DateTimeField()
    start = models.DateField(help_text=_("First day asked for."))
    end = models.DateField(help_text=_("Day after the last day asked for."))
    days = models.PositiveIntegerField(default=0, help_text=_("Days Cost Explorer reported."))
    failure_reason = models.CharField(max_length=40, blank=True,
                                      help_text=_("Why it failed, in the portal's vocabulary (provider_errors.COST_FAILURES)."))
    error = models.TextField(blank=True, help_text=_("AWS's own message (internal)."))

    objects = RestrictedQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.organization_id}: {self.status} at {self.attempted_at:%Y-%m-%d %H:%M}"
