"""Frozen weekly reviews and their action items."""
from __future__ import annotations

import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from portal.core.models import cycle_field
from portal.core.querysets import RestrictedQuerySet
from portal.core.weeks import week_start_of  # noqa: F401 - imported from here by the review's modules


class WeeklyReview(models.Model):
    """One week's figures as they stood when the program manager froze them, with the meeting's notes.

    ``figures`` is the overview's own figure dictionary (JSON), so a past review renders with the same
    templates as the live overview and two reviews can be compared figure by figure.
    """

    week_start = models.DateField(unique=True, help_text=_("The Monday of the week reviewed."))
    cycle = cycle_field("weekly_reviews")
    frozen_at = models.DateTimeField(default=timezone.now)
    frozen_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+")
    figures = models.JSONField(default=dict)
    notes = models.TextField(blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-week_start"]

    def __str__(self) -> str:
        return f"Week of {self.week_start:%Y-%m-%d}"

    def get_absolute_url(self) -> str:
        return reverse("review:review_detail", kwargs={"pk": self.pk})

    @property
    def week_end(self) -> datetime.date:
        return self.week_start + datetime.timedelta(days=6)

    def clean(self) -> None:
        if self.week_start and self.week_start.weekday() != 0:
            raise ValidationError({"week_start": gettext("A review week starts on a Monday.")})


class ActionItem(models.Model):
    """Something the meeting asked someone to do by a date. Open items carry over to the next frozen week
    (a new row pointing back at the one it continues), so each review lists what was still open then."""

    review = models.ForeignKey(WeeklyReview, on_delete=models.CASCADE, related_name="action_items")
    title = models.CharField(max_length=300)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="review_action_items")
    due = models.DateField(null=True, blank=True)
    done = models.BooleanField(default=False)
    done_at = models.DateTimeField(null=True, blank=True)
    carried_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="carried_to")
    created = models.DateTimeField(auto_now_add=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["done", "due", "id"]

    def __str__(self) -> str:
        return self.title

    @property
    def overdue(self) -> bool:
        return bool(self.due and not self.done and self.due < timezone.localdate())


class InteractionCount(models.Model):
    """Open interactions of an organization now, per visibility and severity (kept by
    :mod:`portal.review.tallies` in the transaction that writes the interaction).

    ``unbounded`` counts the open ones without a resolution time: they count as open at every later date."""

    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="+")
    visibility = models.CharField(max_length=16)
    severity = models.CharField(max_length=16)
    open = models.PositiveIntegerField(default=0)
    unbounded = models.PositiveIntegerField(default=0)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "visibility", "severity"],
                                               name="interaction_count_key")]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.visibility} {self.severity}: {self.open}"


class InteractionWeek(models.Model):
    """Per organization, visibility and week (its Monday): interactions that began to count as open
    (``opened``: occurred that week) and stopped (``closed``: resolved that week). Interactions open at the
    end of a week are the open ones without a resolution time less every later week's net change, so the
    overview's chart reads a dozen weeks of these rows, never the history (:mod:`portal.review.tallies`).

    ``new`` and ``resolved`` are the week's figures as the overview states them: every interaction that
    occurred that week, and every one resolved that week that is not open again."""

    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="+")
    visibility = models.CharField(max_length=16)
    week = models.DateField()
    opened = models.PositiveIntegerField(default=0)
    closed = models.PositiveIntegerField(default=0)
    new = models.PositiveIntegerField(default=0)
    resolved = models.PositiveIntegerField(default=0)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "visibility", "week"],
                                               name="interaction_week_key")]
        indexes = [models.Index(fields=["week", "organization"], name="interaction_week_recent")]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.visibility} {self.week}: +{self.opened} -{self.closed}"


class TagMention(models.Model):
    """One challenge tag on one interaction, with the interaction's organization, visibility and date
    copied beside it (kept by :mod:`portal.review.tallies` in the transaction that writes the tag or the
    interaction). The overview's heat map counts a window of these rows from one index, instead of joining
    the interactions to their tags over the whole history."""

    interaction = models.ForeignKey("interactions.Interaction", on_delete=models.CASCADE, related_name="+",
                                    db_index=False)  # the unique key leads with it
    tag = models.ForeignKey("interactions.ChallengeTag", on_delete=models.CASCADE, related_name="+")
    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="+")
    visibility = models.CharField(max_length=16)
    occurred_at = models.DateTimeField()

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["interaction", "tag"], name="tag_mention_key")]
        # Covers the heat map's query: a window of dates, counted per organization and tag (index-only).
        indexes = [models.Index(fields=["occurred_at", "organization", "tag", "visibility"],
                                name="tag_mention_window")]

    def __str__(self) -> str:
        return f"{self.interaction_id} {self.tag_id}"
