"""Calls for the next cycle, applications, their reviews and the award.

A call says what capacity is on offer for the next cycle (``offer``: lines of instance type, region, instances and
weeks), what applicants answer and how reviewers score (``criteria``: name and weight). An application is one
organization's answer: what it will train, the capacity it asks for (``requested``, lines like the offer's), and
the record of what it did with the current cycle's award (``record``, pre-filled when the draft is made). Drafts
keep their history (django-simple-history, like quotas); submitting freezes an ``ApplicationVersion`` with a
content hash. Reviewers are assigned per application (``ReviewAssignment``) and score against the criteria; the
award writes ``awarded`` lines, which become the next cycle's quotas (``services.award``).

Lines are JSON lists validated by ``lines.parse`` wherever they are written (form, API, service), so a bad line is
a clear error and nothing is half-written.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from simple_history.models import HistoricalRecords

from portal.core.models import cycle_field
from portal.core.querysets import RestrictedQuerySet
from portal.engagement.calls.choices import ApplicationStatus, CallStatus, Modality


class Call(models.Model):
    """A program manager's call for the next cycle: dates, the capacity on offer, questions, criteria, reviewers."""

    cycle = cycle_field("calls")
    title = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    opens_on = models.DateField()
    closes_on = models.DateField()
    next_cycle_starts_on = models.DateField()
    status = models.CharField(max_length=12, choices=CallStatus.choices, default=CallStatus.DRAFT, db_index=True)
    # [{"instance_type", "region", "count", "weeks"}]: what the program can give out in the next cycle.
    offer = models.JSONField(default=list)
    # Capacity Blocks and training plans the program plans to buy, in words (shown to applicants).
    reservations_planned = models.TextField(blank=True)
    questions = models.TextField(blank=True)
    # [{"name", "weight"}]: the review criteria; scores are 0-5 per criterion.
    criteria = models.JSONField(default=list)
    reviewers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="calls_reviewed")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    history = HistoricalRecords()
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-opens_on", "-id"]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("calls:call_detail", kwargs={"pk": self.pk})


class Application(models.Model):
    """One organization's application to a call (one per call and organization)."""

    call = models.ForeignKey(Call, on_delete=models.PROTECT, related_name="applications")
    organization = models.ForeignKey("portal.Organization", on_delete=models.PROTECT, related_name="applications")
    status = models.CharField(max_length=12, choices=ApplicationStatus.choices, default=ApplicationStatus.DRAFT,
                              db_index=True)
    architecture = models.CharField(max_length=200, blank=True)
    parameters_billions = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    tokens_billions = models.DecimalField(max_digits=10, decimal_places=1, null=True, blank=True)
    modality = models.CharField(max_length=12, choices=Modality.choices, default=Modality.TEXT)
    frameworks = models.CharField(max_length=200, blank=True)
    requested = models.JSONField(default=list)
    data_plan = models.TextField(blank=True)
    milestones_plan = models.TextField(blank=True)
    answers = models.TextField(blank=True)
    # What the organization did with the current cycle (workload, accelerator-hours, incidents, outcomes).
    record = models.JSONField(default=dict)
    record_as_of = models.DateTimeField(null=True, blank=True)
    # A program manager reopened a submitted application for a late edit (until it is submitted again).
    reopened_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    awarded = models.JSONField(default=list)
    decision_note = models.TextField(blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    history = HistoricalRecords()
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["call", "organization__name"]
        constraints = [models.UniqueConstraint(fields=["call", "organization"], name="calls_one_application_per_org")]

    def __str__(self) -> str:
        return f"{self.organization} · {self.call}"

    def get_absolute_url(self) -> str:
        return reverse("calls:application_detail", kwargs={"pk": self.pk})

    @property
    def editable(self) -> bool:
        """Drafts, and submitted applications a program manager reopened, until the call closes."""
        return self.status == ApplicationStatus.DRAFT


class ApplicationVersion(models.Model):
    """A submitted application as it was: frozen content and its SHA-256 (what reviewers scored)."""

    application = models.ForeignKey(Application, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    content = models.JSONField()
    content_hash = models.CharField(max_length=64)
    submitted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    submitted_at = models.DateTimeField()

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["application", "-number"]
        constraints = [models.UniqueConstraint(fields=["application", "number"], name="calls_version_number")]

    def __str__(self) -> str:
        return f"{self.application} v{self.number}"


class ReviewAssignment(models.Model):
    """A reviewer assigned to one application: their scores per criterion (0-5), a comment for the program
    manager and a summary the applicant may read (never with the reviewer's name)."""

    application = models.ForeignKey(Application, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="review_assignments")
    conflict_declared = models.BooleanField(default=False)
    conflict_note = models.TextField(blank=True)
    scores = models.JSONField(default=dict)
    comment = models.TextField(blank=True)
    summary = models.TextField(blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    history = HistoricalRecords()
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["application", "id"]
        constraints = [models.UniqueConstraint(fields=["application", "reviewer"], name="calls_one_review_each")]

    def __str__(self) -> str:
        return f"Review of {self.application}"

    def get_absolute_url(self) -> str:
        return reverse("calls:review_edit", kwargs={"pk": self.pk})

    @classmethod
    def held(cls, user, own):
        """The assignments ``user`` holds and may act on: no declared conflict, no organization of theirs (``own``,
        their organizations' ids). The access policy's reviewer scopes read it (``portal.core.reviewers.ASSIGNMENTS``)."""
        return cls.objects.filter(reviewer=user, conflict_declared=False).exclude(
            application__organization_id__in=own)
