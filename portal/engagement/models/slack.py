"""The Slack bridge's links: channels to organizations, Slack users to portal users, interactions to threads."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from portal.querysets import RestrictedQuerySet


class SlackChannelLink(models.Model):
    """A Slack channel that belongs to one organization (set by staff in the admin)."""

    channel_id = models.CharField(max_length=32, unique=True, help_text="Slack's channel id, e.g. C05ABCDEF.")
    name = models.CharField(max_length=100, blank=True, help_text="e.g. #geniac-kotoba (for people, not Slack).")
    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="slack_channels")
    customer_facing = models.BooleanField(
        default=True, help_text="Customers read this channel: only events about shared interactions are posted.")

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

    interaction = models.OneToOneField("workloads.Interaction", on_delete=models.CASCADE, related_name="slack_thread")
    channel = models.ForeignKey(SlackChannelLink, on_delete=models.PROTECT, related_name="threads")
    thread_ts = models.CharField(max_length=32)
    permalink = models.URLField(max_length=500, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["channel", "thread_ts"], name="unique_slack_thread")]

    def __str__(self) -> str:
        return self.permalink or f"{self.channel.channel_id}/{self.thread_ts}"
