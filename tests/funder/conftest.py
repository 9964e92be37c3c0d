"""What the funder report's tests share: an active cycle with organizations A and B, accelerator-hours, an
interaction, a milestone and a shared timeline entry of A in the quarter, and a draft quarterly report."""
from __future__ import annotations

import datetime

import pytest

from clusters.accounting.models import OrganizationDay
from portal.core import timeline
from portal.core.choices import TimelineKind
from portal.core.models import Cycle, CycleParticipation
from portal.review.funder import services
from portal.review.funder.models import FunderReport

FIRST, LAST = datetime.date(2026, 7, 1), datetime.date(2026, 9, 30)


def seed_period(world) -> Cycle:
    Cycle.objects.filter(status="active").update(status="archived")
    cycle = Cycle.objects.create(number=9, name="Cycle 9", status="active", starts_on=datetime.date(2026, 4, 1))
    for org in (world.org_a, world.org_b):
        CycleParticipation.objects.create(cycle=cycle, organization=org)
    for day, held in ((datetime.date(2026, 7, 10), 240), (datetime.date(2026, 8, 3), 480)):
        OrganizationDay.objects.create(organization=world.org_a, instance_type="p5.48xlarge", day=day, held=held,
                                       healthy=held - 16, busy=held - 64, measured=held - 16)
    OrganizationDay.objects.create(organization=world.org_b, instance_type="p5.48xlarge",
                                   day=datetime.date(2026, 8, 20), held=96, healthy=96, busy=48, measured=96)
    entry = timeline.record(world.org_a, TimelineKind.NOTE, "Pre-training run reached 1T tokens",
                            visibility="shared")
    entry.occurred_at = datetime.datetime(2026, 8, 5, 3, 0, tzinfo=datetime.UTC)
    entry.save(update_fields=["occurred_at"])
    return cycle


def draft(world, **kwargs) -> FunderReport:
    report = FunderReport(title="GENIAC 2026 Q3", kind="quarterly", period_start=FIRST, period_end=LAST, **kwargs)
    return services.create(report, world.pm)


@pytest.fixture
def quarter(world):
    seed_period(world)
    return draft(world)
