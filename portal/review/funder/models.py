"""A report to the funder (the ministry): one period, per organization (``FunderReportPart``: its figures and
the narrative its lead SA writes) and for the program.

A draft's figures are computed when read; issuing stores them (``figures`` on the report and on each part),
with the data's date (``data_as_of``) and the SHA-256 of the report's canonical content (``content_hash``):
from then on nothing of it changes, and its PDF and workbook are drawn from what is stored, byte for byte the
same each time. A correction is a new version (``supersedes``, ``change_note``); the one it corrects becomes
superseded when the new one is issued.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from simple_history.models import HistoricalRecords

from portal.core.querysets import RestrictedQuerySet
from portal.review.funder.choices import ReportKind, ReportStatus


class FunderReport(models.Model):
    kind = models.CharField(max_length=12, choices=ReportKind.choices, default=ReportKind.QUARTERLY)
    title = models.CharField(max_length=200)
    period_start = models.DateField()
    period_end = models.DateField()
    # Not named ``cycle``: a report about a cycle is written and issued after the cycle is archived, which the
    # access policy's archived-cycle rule would refuse for a ``cycle`` column.
    program_cycle = models.ForeignKey("portal.Cycle", null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="funder_reports")
    version = models.PositiveIntegerField(default=1)
    supersedes = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="superseded_by")
    change_note = models.TextField(blank=True)
    status = models.CharField(max_length=12, choices=ReportStatus.choices, default=ReportStatus.DRAFT, db_index=True)
    figures = models.JSONField(default=dict, blank=True)
    data_as_of = models.DateTimeField(null=True, blank=True)
    content_hash = models.CharField(max_length=64, blank=True)
    issued_at = models.DateTimeField(null=True, blank=True)
    issued_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    history = HistoricalRecords()
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-period_end", "-version", "-id"]

    def __str__(self) -> str:
        return f"{self.title} v{self.version}"

    def get_absolute_url(self) -> str:
        return reverse("funder:report_detail", kwargs={"pk": self.pk})

    @property
    def is_draft(self) -> bool:
        return self.status == ReportStatus.DRAFT


class FunderReportPart(models.Model):
    """One organization's part: its figures (stored at issue) and the narrative its lead SA writes, drafted from
    the period's shared timeline. Its customers read it, and comment, before the report is issued."""

    report = models.ForeignKey(FunderReport, on_delete=models.CASCADE, related_name="parts")
    organization = models.ForeignKey("portal.Organization", on_delete=models.PROTECT, related_name="funder_parts")
    narrative = models.TextField(blank=True)
    narrative_ja = models.TextField(blank=True)
    figures = models.JSONField(default=dict, blank=True)
    updated = models.DateTimeField(auto_now=True)

    history = HistoricalRecords()
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["report", "organization__name"]
        constraints = [models.UniqueConstraint(fields=["report", "organization"], name="funder_one_part_per_org")]

    def __str__(self) -> str:
        return f"{self.organization} · {self.report}"

    def get_absolute_url(self) -> str:
        return reverse("funder:report_detail", kwargs={"pk": self.report_id}) + f"#part-{self.pk}"


class FunderReportComment(models.Model):
    """A comment on an organization's part (its customers, its lead SAs, the program manager)."""

    part = models.ForeignKey(FunderReportPart, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    text = models.TextField()
    created = models.DateTimeField(auto_now_add=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["part", "created", "id"]

    def __str__(self) -> str:
        return f"Comment on {self.part}"

    def get_absolute_url(self) -> str:
        return self.part.get_absolute_url()


class FunderReportSending(models.Model):
    """An issued report sent to the funder's recipients (``FUNDER_REPORT_RECIPIENTS``) from the portal: who sent
    which version (its number and content hash), in which languages, to whom and when; the e-mail goes out as a
    notification delivery of the "funder" channel (``delivery``: its state, attempts and error), so a broker
    outage leaves it for the sweep and a failing mail server is retried. ``superseded`` records that the version
    was already superseded when it was sent (the e-mail says so)."""

    report = models.ForeignKey(FunderReport, on_delete=models.PROTECT, related_name="sendings")
    version = models.PositiveIntegerField()
    content_hash = models.CharField(max_length=64)
    languages = models.JSONField(default=list)
    recipients = models.JSONField(default=list)
    superseded = models.BooleanField(default=False)
    note = models.TextField(blank=True)
    sent_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    delivery = models.ForeignKey("portal.NotificationDelivery", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+")

    history = HistoricalRecords()
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-requested_at", "-id"]

    def __str__(self) -> str:
        return f"{self.report} sent {self.requested_at:%Y-%m-%d %H:%M}"

    def get_absolute_url(self) -> str:
        return self.report.get_absolute_url() + "#sendings"

    @property
    def state(self) -> str:
        return self.delivery.status if self.delivery_id else "pending"
