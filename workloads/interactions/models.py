"""Support interactions: every meeting, chat thread and support case with a customer, in one history."""
from __future__ import annotations

import re
from datetime import timedelta
from functools import cache

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext, pgettext
from django.utils.translation import gettext_lazy as _

from portal.core import stored_text
from portal.core.choices import OPEN_STATUSES, InteractionStatus, Severity, Visibility
from portal.core.jobs.models import Job
from portal.core.querysets import RestrictedQuerySet
from workloads.interactions.choices import HistoryKind, InteractionKind, SyncStatus

# Real AWS: case-<account>-<year>-<16 hex>; the embedded endpoint uses letters beyond hex.
SUPPORT_CASE_ID_RE = re.compile(r"^case-\d{11,12}-\d{4}-[0-9A-Za-z]{16}$")
FUTURE_TOLERANCE = timedelta(days=1)


def not_far_future(value) -> None:
    if value and value > timezone.now() + FUTURE_TOLERANCE:
        raise ValidationError(_("An interaction cannot have happened more than a day from now."))


class ChallengeTag(models.Model):
    """One challenge of the curated taxonomy (NCCL configuration, EFA networking, …).

    ``signatures`` are what suggest the tag from an interaction's text: a list of
    ``{"match": regex, "unless": regex}`` (``unless`` optional: the tag is suggested when ``match``
    is found and ``unless`` is not, e.g. NCCL logs without "Selected Provider is efa").
    """

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    signatures = models.JSONField(default=list, blank=True)

    class Meta:
        db_table = "workloads_challengetag"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        """The name in the reader's language: the curated tags' names are in the catalogue (taxonomy.py); a tag
        staff named otherwise reads as written."""
        return gettext(self.name) if self.name else ""

    @property
    def explanation(self) -> str:
        return gettext(self.description) if self.description else ""


class InteractionQuerySet(RestrictedQuerySet):
    def open(self) -> InteractionQuerySet:
        return self.filter(status__in=OPEN_STATUSES)

    def oldest_first(self) -> InteractionQuerySet:
        return self.order_by("occurred_at", "id")


class Interaction(models.Model):
    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="interactions")
    workload = models.ForeignKey(
        "workloads.Workload", null=True, blank=True, on_delete=models.SET_NULL, related_name="interactions",
        help_text=_("The workload this is about, if any."),
    )
    kind = models.CharField(max_length=16, choices=InteractionKind.choices, default=InteractionKind.MEETING)
    summary = models.CharField(max_length=200)
    body = models.TextField(blank=True, help_text=_("Markdown."))
    occurred_at = models.DateTimeField(default=timezone.now, validators=[not_far_future])
    status = models.CharField(max_length=16, choices=InteractionStatus.choices, default=InteractionStatus.OPEN)
    severity = models.CharField(max_length=16, choices=Severity.choices, default=Severity.NORMAL)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="owned_interactions"
    )
    watchers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="watched_interactions")
    tags = models.ManyToManyField(ChallengeTag, blank=True, related_name="interactions")
    support_case_id = models.CharField(
        _("AWS support case id"),
        max_length=64,
        blank=True,
        validators=[RegexValidator(SUPPORT_CASE_ID_RE, _("Expected case-<account>-<year>-<16 characters>."))],
    )
    resolution = models.TextField(blank=True)
    lesson = models.TextField(_("lesson learned"), blank=True)
    visibility = models.CharField(max_length=16, choices=Visibility.choices, default=Visibility.INTERNAL)
    escalated_at = models.DateTimeField(null=True, blank=True)
    first_response_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField(default=timezone.now)
    support_status = models.CharField(_("AWS case status"), max_length=32, blank=True)
    sync_status = models.CharField(max_length=8, choices=SyncStatus.choices, blank=True, default=SyncStatus.NEVER)
    sync_error = models.TextField(blank=True)
    synced_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    objects = InteractionQuerySet.as_manager()

    class Meta:
        db_table = "workloads_interaction"
        ordering = ["-occurred_at", "-id"]
        indexes = [
            models.Index(fields=["organization", "status", "occurred_at"], name="interaction_org_open"),
            models.Index(fields=["owner", "status", "occurred_at"], name="interaction_owner_open"),
            # The weekly review reads open interactions and those resolved lately: a partial index holds
            # only the open ones, another the resolved ones by date; the last contact per organization
            # is one index probe each.
            models.Index(fields=["organization", "occurred_at"], condition=models.Q(status__in=OPEN_STATUSES),
                         name="interaction_open_only"),
            models.Index(fields=["resolved_at", "organization"], condition=models.Q(resolved_at__isnull=False),
                         name="interaction_resolved_at"),
            models.Index(fields=["organization", "-occurred_at"], name="interaction_org_latest"),
            # The overview across organizations: the outstanding list is the first rows of the open
            # ones oldest first; this week's lessons are the latest edits with a lesson; the heat map
            # reads one window of dates from the index alone (organization and id are in it).
            models.Index(fields=["occurred_at", "id"], condition=models.Q(status__in=OPEN_STATUSES),
                         name="interaction_open_oldest"),
            models.Index(fields=["-updated", "-id"], condition=~models.Q(lesson=""), name="interaction_lessons"),
            models.Index(fields=["occurred_at", "organization", "id"], name="interaction_occurred_at"),
        ]

    def __str__(self) -> str:
        return self.summary

    def get_absolute_url(self) -> str:
        return reverse("interactions:interaction_detail", kwargs={"pk": self.pk})

    def clean(self) -> None:
        super().clean()
        if self.workload_id and self.organization_id and self.workload.organization_id != self.organization_id:
            raise ValidationError({"workload": gettext("The workload belongs to another organization.")})

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATUSES

    @property
    def is_escalated(self) -> bool:
        return self.escalated_at is not None

    @property
    def age(self) -> timedelta:
        end = self.resolved_at if self.resolved_at and not self.is_open else timezone.now()
        return end - self.occurred_at

    @property
    def since_update(self) -> timedelta:
        return timezone.now() - self.last_activity_at

    @property
    def first_response_time(self) -> timedelta | None:
        if self.first_response_at is None:
            return None
        return max(self.first_response_at - self.occurred_at, timedelta(0))


class InteractionComment(models.Model):
    """One entry of an interaction's own history: a comment, a status change, a reassignment, an
    escalation, or a communication synced from AWS Support. ``internal`` entries are for lead SAs."""

    interaction = models.ForeignKey(Interaction, on_delete=models.CASCADE, related_name="history")
    kind = models.CharField(max_length=16, choices=HistoryKind.choices, default=HistoryKind.COMMENT)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    body = models.TextField(blank=True)
    old_value = models.CharField(max_length=200, blank=True)
    new_value = models.CharField(max_length=200, blank=True)
    # A body the portal wrote itself, as a code with parameters (portal/core/stored_text.py), so each reader reads it
    # in their language; ``body`` keeps its English (API, e-mails). Empty for people's comments and older rows.
    body_code = models.CharField(max_length=64, blank=True)
    params = models.JSONField(default=dict, blank=True)
    internal = models.BooleanField(default=False, help_text=_("Internal entries are never shown to customers."))
    external_id = models.CharField(max_length=200, blank=True, help_text=_("Identity of a synced AWS communication."))
    created = models.DateTimeField(default=timezone.now)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        db_table = "workloads_interactioncomment"
        ordering = ["created", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["interaction", "external_id"], condition=~models.Q(external_id=""), name="unique_synced_communication"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} on {self.interaction_id}"

    @property
    def shown_body(self) -> str:
        """The body in the reader's language when the portal wrote it (as stored when a person did)."""
        return stored_text.render(self.body_code, self.params, self.body)

    @property
    def shown_old_value(self) -> str:
        return _shown_value(self.kind, self.old_value)

    @property
    def shown_new_value(self) -> str:
        return _shown_value(self.kind, self.new_value)


def _shown_value(kind: str, value: str) -> str:
    """A status the history stored by its English label ("Waiting on AWS"), or an escalation's "team · Requested",
    in the reader's language; names and anything else as stored."""
    if not value:
        return value
    if kind in (HistoryKind.STATUS, HistoryKind.CREATED):
        return gettext(value) if value in _status_labels() else value
    if kind == HistoryKind.ESCALATION and " · " in value:
        target, _sep, state = value.rpartition(" · ")
        if state in _ESCALATION_LABELS:
            return f"{target} · {pgettext('escalation state', state)}"
    return value


@cache
def _status_labels() -> frozenset[str]:
    with translation.override("en"):
        return frozenset(str(label) for label in InteractionStatus.labels)

_ESCALATION_LABELS = frozenset(("Requested", "Accepted", "Answered", "Closed"))


class SupportCaseRequest(Job):
    """A request to open an interaction's AWS Support case: a job of ``portal.core.jobs`` like every background send,
    so a broker that is down when it is asked for leaves the row for the sweep instead of losing the request.
    The ``interactions.support.open_requested_case`` task opens the case (once: ``support.open_case`` answers
    the case already there) and retries AWS's transient errors itself; no lease, like the Slack captures."""

    FINISHED_FIELD = "finished_at"

    PENDING, DONE, FAILED = "pending", "done", "failed"
    STATUSES = [(PENDING, _("Pending")), (DONE, _("Opened")), (FAILED, _("Failed"))]

    interaction = models.ForeignKey(Interaction, on_delete=models.CASCADE, related_name="case_requests")
    subject = models.CharField(max_length=250)
    body = models.TextField()
    service_code = models.CharField(max_length=100)
    category_code = models.CharField(max_length=100)
    status = models.CharField(max_length=8, choices=STATUSES, default=PENDING)
    OPEN = (PENDING,)
    attempts = models.PositiveSmallIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"support case for interaction {self.interaction_id} · {self.status}"
