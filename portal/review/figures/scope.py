"""Who asks and when: the :class:`Scope` every figure source takes, and the date helpers they share."""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from django.utils import timezone
from django.utils.functional import cached_property

from portal.review.models import week_start_of

CHART_WEEKS = 12
CHART_DAYS = 14
DEFAULT_WINDOW = 28
MAX_WINDOW = 365


@dataclass
class Scope:
    """Every figure is computed for the rows ``user`` may view, at ``now``."""

    user: object
    now: datetime.datetime
    window: int = DEFAULT_WINDOW
    org_ids: list[int] = field(default_factory=list)
    every_org: bool = False  # the user views every organization: no need to pass their ids to queries

    @cached_property
    def today(self) -> datetime.date:
        return timezone.localtime(self.now).date()

    @cached_property
    def week_start(self) -> datetime.date:
        return week_start_of(self.today)

    @cached_property
    def week_start_at(self) -> datetime.datetime:
        return at(self.week_start)

    @cached_property
    def chart_mondays(self) -> list[datetime.date]:
        """The Mondays of the charts' CHART_WEEKS weeks, the current one last."""
        return [self.week_start - datetime.timedelta(weeks=CHART_WEEKS - 1 - i) for i in range(CHART_WEEKS)]

    @property
    def window_start(self) -> datetime.datetime:
        return self.now - datetime.timedelta(days=self.window)

    @property
    def previous_window_start(self) -> datetime.datetime:
        return self.now - datetime.timedelta(days=2 * self.window)


def at(day: datetime.date) -> datetime.datetime:
    """Midnight of ``day`` in the program's time zone."""
    return timezone.make_aware(datetime.datetime.combine(day, datetime.time.min))


def iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def days(delta: datetime.timedelta) -> int:
    return max(0, delta.days)


def clean_window(raw) -> int:
    try:
        value = int(raw)
    except (TypeError, ValueError):
        return DEFAULT_WINDOW
    return min(MAX_WINDOW, max(1, value))
