"""Demo enablement, modeled on the case study: the program's distributed-training workshop (84 attendees, average
4.75). Idempotent."""
from __future__ import annotations

import datetime

from portal.core import timeline
from portal.core.choices import TimelineKind
from portal.core.stored_text import message
from workloads.enablement.models import EnablementAttendance, EnablementSession
from workloads.enablement.timeline_texts import SESSION

WORKSHOP_TOPIC = "Distributed training on AWS: P5, EFA and FSx for Lustre"


def seed(context: dict) -> None:
    _workshop(context["organizations"], context["pm"])


def _workshop(orgs: dict, pm) -> None:
    session, created = EnablementSession.objects.get_or_create(
        topic=WORKSHOP_TOPIC,
        defaults={"kind": "workshop", "date": datetime.date(2026, 10, 16), "created_by": pm,
                  "description": "Hands-on: launching a cluster from the reference architecture, running nccl-tests, "
                                 "reading the EFA provider line, FSx for Lustre throughput."},
    )
    if not created:
        return
    session.audience.set(orgs.values())
    # 84 participants from the twelve organizations: 63 gave 5, 21 gave 4 (average 4.75).
    org_list = list(orgs.values())
    EnablementAttendance.objects.bulk_create(
        EnablementAttendance(session=session, organization=org_list[i % len(org_list)],
                             attendee=f"Participant {i + 1:02d}", satisfaction=5 if i < 63 else 4)
        for i in range(84)
    )
    for org in org_list:
        timeline.record(org, TimelineKind.ENABLEMENT, message(SESSION, kind=session.kind, topic=session.topic),
                        source=session, actor=pm)
