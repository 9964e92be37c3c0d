"""Organizations, people and their roles, the per-organization timeline, and the program's cycles and specialist
teams: every area's rows belong to a cycle and the access policy reads the teams, so both live in the core."""
from __future__ import annotations

import re

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from portal.core import outbound, stored_text
from portal.core.choices import REGION_CHOICES, CarryKind, CycleStatus, MembershipRole, Severity, TargetKind, TimelineKind, Visibility
from portal.core.jobs.models import Job
from portal.core.model_fields import HttpsURLField
from portal.core.querysets import RestrictedQuerySet

ROLE_ARN_RE = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$")


class User(AbstractUser):
    """A person who signs in. Program-wide roles live here; per-organization roles in Membership."""

    is_program_manager = models.BooleanField(
        default=False, help_text=_("Reads every organization and runs the weekly review.")
    )
    # The language the portal speaks to this person: pages, e-mails and PDFs (blank: the browser's, else the
    # program's default). Set by the language switcher (portal.core.language).
    language = models.CharField(max_length=8, blank=True, default="", choices=settings.LANGUAGES)

    def organizations_led(self) -> models.QuerySet[Organization]:
        return Organization.objects.filter(
            memberships__user=self, memberships__role=MembershipRole.LEAD_SA
        )

    @property
    def display_name(self) -> str:
        return self.get_full_name() or self.username


class Organization(models.Model):
    """A participant of the program: one AWS account the portal acts in through an assumed role."""

    name = models.CharField(max_length=200, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    aws_account_id = models.CharField(
        _("AWS account id"),
        max_length=12,
        validators=[RegexValidator(r"^\d{12}$", "An AWS account id is 12 digits.")],
    )
    role_arn = models.CharField(
        _("IAM role ARN"),
        max_length=2048,
        blank=True,
        help_text=_("The role the portal assumes in the organization's account."),
    )
    external_id = models.CharField(max_length=1224, blank=True, help_text=_("The ExternalId the role's trust policy requires."))
    home_region = models.CharField(max_length=32, choices=REGION_CHOICES, default="ap-northeast-1")
    created = models.DateTimeField(auto_now_add=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("portal:organization_detail", kwargs={"slug": self.slug})

    def clean(self) -> None:
        if self.role_arn and not ROLE_ARN_RE.match(self.role_arn):
            raise ValidationError({"role_arn": gettext("Expected arn:aws:iam::<12-digit account>:role/<name>.")})
        if self.role_arn and self.aws_account_id and f"::{self.aws_account_id}:" not in self.role_arn:
            raise ValidationError({"role_arn": gettext("The role must belong to the organization's AWS account.")})


class Membership(models.Model):
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=MembershipRole.choices)
    created = models.DateTimeField(auto_now_add=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "organization", "role"], name="unique_membership_role"),
        ]
        ordering = ["organization__name", "role", "user__username"]

    def __str__(self) -> str:
        return f"{self.user} · {self.get_role_display()} · {self.organization}"


class TimelineEntryQuerySet(RestrictedQuerySet):
    def for_organization(self, organization: Organization) -> TimelineEntryQuerySet:
        return self.filter(organization=organization)


class TimelineEntry(models.Model):
    """One line of an organization's chronological history.

    Every source (interactions, workload changes, quota events, launches, faults, validations)
    appends here through :func:`portal.core.timeline.record`, so a timeline page is one indexed query.
    """

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="timeline")
    occurred_at = models.DateTimeField(default=timezone.now, db_index=True)
    kind = models.CharField(max_length=32, choices=TimelineKind.choices)
    title = models.CharField(max_length=300)
    body = models.TextField(blank=True)
    visibility = models.CharField(max_length=16, choices=Visibility.choices, default=Visibility.SHARED)
    severity = models.CharField(max_length=16, blank=True, choices=Severity.choices)
    tags = models.JSONField(default=list, blank=True)
    actor = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    url = models.CharField(max_length=500, blank=True)
    content_type = models.ForeignKey(ContentType, null=True, blank=True, on_delete=models.SET_NULL)
    object_id = models.PositiveBigIntegerField(null=True, blank=True)
    source = GenericForeignKey("content_type", "object_id")
    # What the portal wrote itself, as codes with parameters (portal/core/stored_text.py), so each reader reads it in
    # their language; ``title`` and ``body`` keep the English (and what people typed, and rows from before).
    title_code = models.CharField(max_length=64, blank=True)
    body_code = models.CharField(max_length=64, blank=True)
    params = models.JSONField(default=dict, blank=True)

    objects = TimelineEntryQuerySet.as_manager()

    class Meta:
        ordering = ["-occurred_at", "-id"]
        indexes = [
            models.Index(fields=["organization", "-occurred_at", "-id"], name="timeline_org_time"),
            models.Index(fields=["organization", "kind", "-occurred_at"], name="timeline_org_kind"),
            # Customers read only shared entries: their first page must not skip past internal ones.
            models.Index(fields=["organization", "visibility", "-occurred_at", "-id"], name="timeline_org_vis_time"),
        ]
        verbose_name_plural = _("timeline entries")

    def __str__(self) -> str:
        return f"{self.occurred_at:%Y-%m-%d %H:%M} {self.title}"

    @property
    def shown_title(self) -> str:
        """The title in the reader's language (as stored when the portal did not write it as a code)."""
        return stored_text.render(self.title_code, self.params, self.title)

    @property
    def shown_body(self) -> str:
        return stored_text.render(self.body_code, self.params, self.body)


class NotificationSetting(models.Model):
    """Where events go: one row per channel owner. No organization means program-wide (the lead SAs'
    and program managers' channel). A customer-facing channel must not include internal events."""

    organization = models.ForeignKey(
        Organization, null=True, blank=True, on_delete=models.CASCADE, related_name="notification_settings"
    )
    name = models.CharField(max_length=100, help_text=_("What this channel is, e.g. '#geniac-support'."))
    slack_webhook_url = HttpsURLField(_("Slack incoming webhook URL"), max_length=500, blank=True)
    email_recipients = models.TextField(blank=True, help_text=_("E-mail addresses, one per line or comma-separated."))
    min_severity = models.CharField(
        max_length=16,
        choices=Severity.choices,
        default=Severity.HIGH,
    )
    include_internal = models.BooleanField(
        default=False, help_text=_("Send events about internal entries (never for a channel customers read).")
    )
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["organization__name", "name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.organization or 'program-wide'})"

    def recipients(self) -> list[str]:
        return [r.strip() for r in re.split(r"[,\s]+", self.email_recipients) if r.strip()]

    def clean(self):
        """The webhook is called by a worker inside our network: the guarded client's rules apply."""
        if self.slack_webhook_url:
            try:
                outbound.parse(self.slack_webhook_url)
            except outbound.OutboundError as exc:
                raise ValidationError({"slack_webhook_url": exc.reason}) from None


class NotificationDelivery(Job):
    """One attempt to tell one channel about one event; failures stay here, visible to staff.

    A job of ``portal.core.jobs`` without a lease: the task's own retries carry it, and the sweep sends what the broker
    never took (``dispatched_at`` empty)."""

    PENDING, SENT, FAILED = "pending", "sent", "failed"
    CLAIMABLE = (PENDING,)

    setting = models.ForeignKey(NotificationSetting, null=True, on_delete=models.SET_NULL, related_name="deliveries")
    organization = models.ForeignKey(Organization, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    channel = models.CharField(max_length=8, choices=[("slack", "Slack"), ("email", "E-mail"),
                                                      ("thread", "Slack thread"), ("watcher", "Watcher e-mail")])
    event_kind = models.CharField(max_length=64)
    severity = models.CharField(max_length=16, blank=True, choices=Severity.choices)
    title = models.CharField(max_length=300)
    payload = models.JSONField(default=dict)
    status = models.CharField(
        max_length=8, choices=[(PENDING, "Pending"), (SENT, "Sent"), (FAILED, "Failed")], default=PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        verbose_name_plural = _("notification deliveries")

    def __str__(self) -> str:
        return f"{self.channel} · {self.title} · {self.status}"


class Submission(models.Model):
    """One submission of a form (its hidden key) or of an API call (its ``Idempotency-Key``) by one user to one
    route, and what its first request made: the unique key makes a double click, a retried request or N racing
    copies write one row (``portal.core.submissions``). Internal bookkeeping, read only by that module."""

    user = models.ForeignKey("portal.User", on_delete=models.CASCADE, related_name="+")
    scope = models.CharField(max_length=255)  # the method and path it was sent to: "POST /interactions/7/escalate/"
    key = models.CharField(max_length=128)
    fingerprint = models.CharField(max_length=64, blank=True)  # the API body's hash: a repeat must send the same
    status_code = models.PositiveSmallIntegerField(default=0)  # 0 while the first request runs
    location = models.CharField(max_length=500, blank=True)  # where the first answer sent the browser
    body = models.JSONField(null=True, blank=True)  # the API's first answer, replayed as it was
    content_type = models.ForeignKey(ContentType, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    object_id = models.PositiveBigIntegerField(null=True, blank=True)
    made = GenericForeignKey("content_type", "object_id")
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "scope", "key"], name="unique_submission_key")]

    def __str__(self) -> str:
        return f"{self.scope} {self.key} → {self.status_code}"


def active_cycle_id() -> int | None:
    """The default of every ``cycle`` foreign key: new rows belong to the active cycle."""
    return Cycle.objects.filter(status=CycleStatus.ACTIVE).values_list("pk", flat=True).first()


def active_cycle() -> Cycle | None:
    """The cycle the program runs in now (None before the first one starts)."""
    return Cycle.objects.filter(status=CycleStatus.ACTIVE).first()


def cycle_field(related_name: str = "+") -> models.ForeignKey:
    """The ``cycle`` foreign key other apps' models carry (null only for rows of a program without a cycle)."""
    return models.ForeignKey(
        "portal.Cycle", null=True, blank=True, default=active_cycle_id, on_delete=models.PROTECT,
        related_name=related_name, help_text=_("The program cycle this belongs to (the active one by default)."),
    )


class Cycle(models.Model):
    """One cycle of the program. Exactly one is active at a time; archived ones are read-only history.

    Quotas, reservations, clusters, reviews, enablement and outcomes belong to one (``cycle_field``); starting the
    next cycle and carrying live rows over is the engagement app's (``portal.engagement.cycles``)."""

    number = models.PositiveSmallIntegerField(unique=True)
    name = models.CharField(max_length=100, unique=True)
    starts_on = models.DateField(null=True, blank=True)
    ends_on = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=CycleStatus.choices, default=CycleStatus.PLANNED)
    lessons_carried = models.TextField(
        _("lessons carried over"), blank=True, help_text=_("Markdown: what the previous cycle taught, copied when it began.")
    )
    blueprints = models.ManyToManyField("clusters.Blueprint", blank=True, related_name="cycles")
    organizations = models.ManyToManyField(Organization, through="CycleParticipation", related_name="cycles")
    created = models.DateTimeField(auto_now_add=True)
    # Who scheduled, moved or cancelled a start, and when (the schedule page writes the reason).
    history = HistoricalRecords(excluded_fields=["lessons_carried"], table_name="engagement_historicalcycle")

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        db_table = "engagement_cycle"
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(fields=["status"], condition=models.Q(status="active"), name="one_active_cycle"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("engagement:cycle_detail", kwargs={"pk": self.pk})

    def clean(self) -> None:
        if self.starts_on and self.ends_on and self.ends_on < self.starts_on:
            raise ValidationError({"ends_on": gettext("A cycle cannot end before it starts.")})

    @property
    def is_archived(self) -> bool:
        return self.status == CycleStatus.ARCHIVED


class CycleParticipation(models.Model):
    """An organization taking part in a cycle, with the lead SAs assigned to it for that cycle."""

    cycle = models.ForeignKey(Cycle, on_delete=models.CASCADE, related_name="participations")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="participations")
    lead_sas = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    continues = models.BooleanField(default=True, help_text=_("Takes part in the next cycle when it starts."))
    joined = models.DateTimeField(auto_now_add=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        db_table = "engagement_cycleparticipation"
        ordering = ["cycle", "organization__name"]
        constraints = [models.UniqueConstraint(fields=["cycle", "organization"], name="unique_cycle_participation")]

    def __str__(self) -> str:
        return f"{self.organization} in {self.cycle}"


class CycleCarry(models.Model):
    """A live row moved from the cycle that ended into the next one when it started (a running cluster, a quota or
    reservation in force, a model still in training). The row itself now belongs to the new cycle; this keeps where
    it came from, so the old cycle's report still counts it and pages label it "carried over".

    Bookkeeping written only by ``portal.engagement.carry`` and read through the rows it points at (no access rule
    of its own: it says nothing the row does not)."""

    cycle = models.ForeignKey(Cycle, on_delete=models.CASCADE, related_name="carried_in")
    from_cycle = models.ForeignKey(Cycle, on_delete=models.CASCADE, related_name="carried_out")
    kind = models.CharField(max_length=16, choices=CarryKind.choices)
    object_id = models.PositiveBigIntegerField()
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "engagement_cyclecarry"
        ordering = ["cycle", "kind", "object_id"]
        constraints = [models.UniqueConstraint(fields=["cycle", "kind", "object_id"], name="unique_cycle_carry")]
        indexes = [models.Index(fields=["from_cycle", "kind"], name="carry_from_kind")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.object_id}: {self.from_cycle_id} → {self.cycle_id}"


class EscalationTarget(models.Model):
    """A team escalations go to (the Frameworks specialists, a service team, the account manager).

    The rows come from the curated list in ``portal/core/escalation_targets.py``; staff add the people who
    answer for a team (``Specialist``), and those people see what is escalated to it, nothing else.
    """

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=16, choices=TargetKind.choices)
    description = models.TextField(blank=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Specialist", related_name="escalation_teams",
                                     blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        db_table = "engagement_escalationtarget"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Specialist(models.Model):
    """A person who answers for a team: the ``specialist`` role, held per team rather than per organization
    (``portal.core.access`` reads it next to the memberships)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="specialist_of")
    target = models.ForeignKey(EscalationTarget, on_delete=models.CASCADE, related_name="specialists")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "engagement_specialist"
        constraints = [models.UniqueConstraint(fields=["user", "target"], name="unique_specialist_team")]
        ordering = ["target__name", "user__username"]

    def __str__(self) -> str:
        return f"{self.user} · {self.target}"
