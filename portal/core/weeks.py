"""Program weeks: Monday to Sunday in the program's time zone (``TIME_ZONE``), as the weekly review counts."""
from __future__ import annotations

import datetime

from django.utils import timezone


def week_start_of(day: datetime.date) -> datetime.date:
    """The Monday of the week holding ``day``."""
    return day - datetime.timedelta(days=day.weekday())


def week_of(moment: datetime.datetime) -> datetime.date:
    """The Monday (program time) of the week holding ``moment``."""
    return week_start_of(timezone.localtime(moment).date())
