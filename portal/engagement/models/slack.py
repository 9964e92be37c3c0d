"""The Slack bridge's links: channels to organizations, Slack users to portal users, interactions to threads."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from portal.core.jobs.models import Job
from portal.core.model_fields import HttpsURLField
from portal.core.querysets import RestrictedQuerySet


class SlackChannelLink(models.Model):
    """A Slack channel that belongs to one organization (set by staff in the admin)."""

    channel_id = models.CharField(max_length=32, unique=True, help_text=_("Slack's channel id, e.g. C05ABCDEF."))
    name = models.CharField(max_length=100, blank=True, help_text=_("e.g. #geniac-kotoba (for people, not Slack)."))
    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="slack_channels")
    customer_facing = models.BooleanField(
        default=True, help_text=_("Customers read this channel: only events about shared interactions are posted."))

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["organization__name", "name"]

    def __str__(self) -> str:
        return f"{self.name or self.channel_id} → {self.organization}"


class SlackUserLink(models.Model):
    """A Slack user mapped to a portal user: nothing is shown to a Slack user without one."""

    team_id = models.CharField(max_length=32)
    slack_user_id = models.CharField(max_length=32)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="slack_links")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team_id", "slack_user_id"], name="unique_slack_user")]

    def __str__(self) -> str:
        return f"{self.slack_user_id}@{self.team_id} → {self.user}"


class SlackThread(models.Model):
    """The Slack thread an interaction was logged from; notifications about the interaction reply in it."""

    interaction = models.OneToOneField("interactions.Interaction", on_delete=models.CASCADE, related_name="slack_thread")
    channel = models.ForeignKey(SlackChannelLink, on_delete=models.PROTECT, related_name="threads")
    thread_ts = models.CharField(max_length=32)
    permalink = HttpsURLField(max_length=500, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["channel", "thread_ts"], name="unique_slack_thread")]

    def __str__(self) -> str:
        return self.permalink or f"{self.channel.channel_id}/{self.thread_ts}"


class SlackCapture(Job):
    """A message shortcut Slack sent: stored by the endpoint, which answers Slack at once, and logged as an
    interaction off the request by the ``engagement.capture_thread`` task (reading the thread and its permalink
    from Slack's Web API). One per message while pending or done: a retried shortcut logs one interaction.

    A job of ``portal.core.jobs`` without a lease: the task's own retries carry it, and the sweep sends what the broker
    never took."""

    FINISHED_FIELD = "finished_at"

    PENDING, DONE, FAILED, REFUSED = "pending", "done", "failed", "refused"
    STATUSES = [(PENDING, "Pending"), (DONE, "Logged"), (FAILED, "Failed"), (REFUSED, "Refused")]

    team_id = models.CharField(max_length=32)
    slack_user_id = models.CharField(max_length=32)
    channel_id = models.CharField(max_length=32)
    message_ts = models.CharField(max_length=32)
    thread_ts = models.CharField(max_length=32)
    message = models.JSONField(default=dict, blank=True, help_text=_("The message as Slack sent it."))
    response_url = HttpsURLField(max_length=500, blank=True, help_text=_("Where Slack takes the ephemeral answer."))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="+")
    link = models.ForeignKey(SlackChannelLink, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="captures", help_text=_("The channel's link to its organization."))
    status = models.CharField(max_length=8, choices=STATUSES, default=PENDING)
    OPEN = (PENDING,)
    error = models.TextField(blank=True, help_text=_("Why it was refused or failed, as told to the user in Slack."))
    interaction = models.ForeignKey("interactions.Interaction", null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    attempts = models.PositiveSmallIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    # Lead SAs see their organizations' captures that did not log (on their home page); staff see all in the admin.
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(fields=["channel_id", "message_ts"], condition=models.Q(status__in=["pending", "done"]),
                                    name="one_live_capture_per_message"),
        ]

    def __str__(self) -> str:
        return f"{self.channel_id}/{self.message_ts} · {self.status}"

    @property
    def excerpt(self) -> str:
        """The start of the captured message's text, as Slack sent it."""
        text = " ".join(str((self.message or {}).get("text") or "").split())
        return text if len(text) <= 140 else text[:139] + "…"
