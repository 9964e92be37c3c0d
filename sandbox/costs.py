"""Demo cost: each organization's Cost Explorer days built from the capacity the demo gave it (its stored
accelerator-hours and its reservations, priced by ``workloads.prices``) and fetched through the real service
(``sandbox.spend``). It runs after the accounting seeds, which store the hours it reads."""
from __future__ import annotations

import datetime
from collections import defaultdict
from decimal import Decimal

from django.utils import timezone

from clusters.accounting.models import OrganizationDay
from sandbox import spend as demo_spend


def held_by_day(org, start: datetime.date, end: datetime.date) -> dict[datetime.date, dict[str, Decimal]]:
    """Accelerator-hours ``org`` held per day and instance type in [start, end) (one query)."""
    held: dict[datetime.date, dict[str, Decimal]] = defaultdict(dict)
    for row in OrganizationDay.objects.filter(organization=org, day__gte=start, day__lt=end).values(
            "day", "instance_type", "held"):
        held[row["day"]][row["instance_type"]] = row["held"]
    return dict(held)


def seed(context: dict) -> dict:
    today = timezone.localdate()
    start = today - datetime.timedelta(days=demo_spend.WINDOW_DAYS)
    for org in context.get("organizations", {}).values():
        demo_spend.seed_organization(org, held_by_day(org, start, today), today)
    return context
