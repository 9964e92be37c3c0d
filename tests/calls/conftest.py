"""What the call area's tests share: an active cycle with organizations A and B, an open call, and a helper that
makes an organization's application (submitted or not) through the services, as the pages do."""
from __future__ import annotations

import datetime
from types import SimpleNamespace

import pytest

from portal.core.models import Cycle, CycleParticipation
from portal.engagement.calls import services
from portal.engagement.calls.models import Call

P5 = "p5.48xlarge"
TOKYO = "ap-northeast-1"


def line(count: int, weeks: int = 4, instance_type: str = P5, region: str = TOKYO) -> dict:
    return {"instance_type": instance_type, "region": region, "count": count, "weeks": weeks}


@pytest.fixture
def program(world):
    """The active cycle (A and B take part), an open call offering 16 × p5 for 4 weeks and 8 × trn1 for 4 weeks."""
    Cycle.objects.filter(status="active").update(status="archived")
    cycle = Cycle.objects.create(number=7, name="Cycle 7", status="active", starts_on=datetime.date(2026, 7, 1))
    for org in (world.org_a, world.org_b):
        CycleParticipation.objects.create(cycle=cycle, organization=org)
    call = Call.objects.create(
        cycle=cycle, title="Call for cycle 8", status="open", opens_on=datetime.date(2026, 11, 1),
        closes_on=datetime.date(2026, 12, 31), next_cycle_starts_on=datetime.date(2027, 1, 4),
        offer=[line(16), line(8, instance_type="trn1.32xlarge")],
        criteria=[{"name": "Impact", "weight": 2.0}, {"name": "Record", "weight": 1.0}])

    def apply(org, user, requested, submit=True):
        application = services.start_application(call, org, user)
        application.requested = requested
        application.save()
        if submit:
            services.submit(application, user)
            application.refresh_from_db()
        return application

    return SimpleNamespace(cycle=cycle, call=call, apply=apply)
