"""What the alert endpoint remembers: the Amazon SNS messages it accepted (a replay is refused)."""
from __future__ import annotations

from django.db import models
from django.utils import timezone


class SnsMessage(models.Model):
    """An Amazon SNS message the alert endpoint accepted: its id is unique, so a replayed message is refused."""

    message_id = models.CharField(max_length=100, unique=True)
    topic_arn = models.CharField(max_length=256)
    kind = models.CharField(max_length=32)
    received_at = models.DateTimeField(default=timezone.now, db_index=True)
    cluster = models.ForeignKey("clusters.Cluster", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    outcome = models.CharField(max_length=200, blank=True)

    class Meta:  # no user reads these rows (they are the endpoint's memory), so no access rule either
        ordering = ["-received_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.message_id}"
