"""Freezing a week: the snapshot, and action items carried over from the week before."""
from __future__ import annotations

import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext

from portal.review import figures
from portal.review.models import ActionItem, WeeklyReview, week_start_of


class AlreadyFrozen(Exception):
    def __init__(self, review: WeeklyReview):
        self.review = review
        super().__init__(gettext("The week of %(week)s was already frozen on %(frozen)s; only its notes can change.")
                         % {"week": f"{review.week_start:%Y-%m-%d}",
                            "frozen": f"{timezone.localtime(review.frozen_at):%Y-%m-%d %H:%M}"})


def append_notes(review: WeeklyReview, notes: str) -> None:
    """Add notes to a frozen review under a row lock, so two program managers' notes are both kept."""
    with transaction.atomic():
        locked = WeeklyReview.objects.select_for_update().get(pk=review.pk)
        locked.notes = f"{locked.notes.rstrip()}\n\n{notes.strip()}" if locked.notes.strip() else notes.strip()
        locked.save(update_fields=["notes"])
    review.notes = locked.notes


def freeze(user, *, notes: str = "", now: datetime.datetime | None = None) -> WeeklyReview:
    """Store this week's figures as seen by ``user`` (a program manager: every organization) and carry the
    previous review's open action items over. Refused when the week is already frozen."""
    now = now or timezone.now()
    week = week_start_of(timezone.localtime(now).date())
    existing = WeeklyReview.objects.filter(week_start=week).first()
    if existing is not None:
        raise AlreadyFrozen(existing)
    with translation.override(settings.LANGUAGE_CODE):  # a stored snapshot reads the same for every reader
        snapshot = figures.overview(user, now=now)
    try:
        with transaction.atomic():
            review = WeeklyReview.objects.create(week_start=week, frozen_at=now, frozen_by=user, figures=snapshot,
                                                 notes=notes)
            carry_over(review)
    except IntegrityError:  # frozen by someone else a moment ago
        raise AlreadyFrozen(WeeklyReview.objects.get(week_start=week)) from None
    return review


def freeze_summary(now: datetime.datetime | None = None) -> dict:
    """What freezing now would do, for the confirmation: the week, the review it follows and the open action
    items that would carry over from it (the figures themselves are taken at the moment of confirming)."""
    week = week_start_of(timezone.localtime(now or timezone.now()).date())
    previous = WeeklyReview.objects.filter(week_start__lt=week).order_by("-week_start").first()
    carried = list(previous.action_items.filter(done=False).select_related("owner")) if previous else []
    return {"week_start": week, "week_end": week + datetime.timedelta(days=6), "previous": previous,
            "carried": carried}


def carry_over(review: WeeklyReview) -> list[ActionItem]:
    """Copy the open action items of the latest earlier review into ``review``."""
    previous = WeeklyReview.objects.filter(week_start__lt=review.week_start).order_by("-week_start").first()
    if previous is None:
        return []
    already = set(review.action_items.exclude(carried_from=None).values_list("carried_from_id", flat=True))
    items = [
        ActionItem(review=review, title=item.title, owner_id=item.owner_id, due=item.due, carried_from=item)
        for item in previous.action_items.filter(done=False)
        if item.pk not in already
    ]
    return ActionItem.objects.bulk_create(items)


def previous_of(review: WeeklyReview) -> WeeklyReview | None:
    return WeeklyReview.objects.filter(week_start__lt=review.week_start).order_by("-week_start").first()


def set_done(item: ActionItem, done: bool) -> None:
    item.done = done
    item.done_at = timezone.now() if done else None
    item.save(update_fields=["done", "done_at"])
