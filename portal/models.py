"""Organizations, people and their roles, and the per-organization timeline."""
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

from portal.choices import REGION_CHOICES, MembershipRole, Severity, TimelineKind, Visibility
from portal.querysets import RestrictedQuerySet

ROLE_ARN_RE = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$")


class User(AbstractUser):
    """A person who signs in. Program-wide roles live here; per-organization roles in Membership."""

    is_program_manager = models.BooleanField(
        default=False, help_text=_("Reads every organization and runs the weekly review.")
    )
    # The language the portal speaks to this person: pages, e-mails and PDFs (blank: the browser's, else the
    # program's default). Set by the language switcher (portal.language).
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
    appends here through :func:`portal.timeline.record`, so a timeline page is one indexed query.
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


class NotificationSetting(models.Model):
    """Where events go: one row per channel owner. No organization means program-wide (the lead SAs'
    and program managers' channel). A customer-facing channel must not include internal events."""

    organization = models.ForeignKey(
        Organization, null=True, blank=True, on_delete=models.CASCADE, related_name="notification_settings"
    )
    name = models.CharField(max_length=100, help_text=_("What this channel is, e.g. '#geniac-support'."))
    slack_webhook_url = models.URLField(_("Slack incoming webhook URL"), max_length=500, blank=True)
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
        from django.core.exceptions import ValidationError

        from portal import outbound

        if self.slack_webhook_url:
            try:
                outbound.parse(self.slack_webhook_url)
            except outbound.OutboundError as exc:
                raise ValidationError({"slack_webhook_url": exc.reason}) from None


class NotificationDelivery(models.Model):
    """One attempt to tell one channel about one event; failures stay here, visible to staff."""

    PENDING, SENT, FAILED = "pending", "sent", "failed"

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
    error = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    # When the delivery task was handed to the broker; empty while the broker could not take it (the sweep sends it).
    queued_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        verbose_name_plural = _("notification deliveries")

    def __str__(self) -> str:
        return f"{self.channel} · {self.title} · {self.status}"


class Submission(models.Model):
    """One submission of a form (its hidden key) or of an API call (its ``Idempotency-Key``) by one user to one
    route, and what its first request made: the unique key makes a double click, a retried request or N racing
    copies write one row (``portal.submissions``). Internal bookkeeping, read only by that module."""

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
