"""Enablement sessions: who sees and runs them, attendance per organization, satisfaction."""
import datetime

import pytest
from django.urls import reverse

from portal.core.models import TimelineEntry
from tests.interactions.factories_interactions import AttendanceFactory, EnablementSessionFactory
from workloads.enablement.models import EnablementAttendance, EnablementSession


@pytest.fixture
def workshop(world):
    session = EnablementSessionFactory(topic="Distributed training on P5", audience=[world.org_a, world.org_b])
    for i in range(63):
        AttendanceFactory(session=session, organization=world.org_a if i % 2 else world.org_b,
                          attendee=f"A{i}", satisfaction=5)
    for i in range(21):
        AttendanceFactory(session=session, organization=world.org_a, attendee=f"B{i}", satisfaction=4)
    return session


def test_average_score_over_all_attendees(client, world, workshop):
    client.force_login(world.pm)
    page = client.get(reverse("enablement:enablement_list")).content.decode()
    assert "4.75 / 5" in page and "<td>84</td>" in page
    detail = client.get(workshop.get_absolute_url()).content.decode()
    assert "<strong>4.75</strong>" in detail


def test_customers_see_sessions_their_organization_was_invited_to_and_only_their_attendees(client, world, workshop):
    private = EnablementSessionFactory(topic="PRIVATE-A onboarding", audience=[world.org_a])
    AttendanceFactory(session=private, organization=world.org_a, attendee="ALPHA-ENGINEER")
    client.force_login(world.customer_b)
    page = client.get(reverse("enablement:enablement_list")).content.decode()
    assert "Distributed training on P5" in page and "PRIVATE-A" not in page
    assert client.get(private.get_absolute_url()).status_code == 404
    detail = client.get(workshop.get_absolute_url())
    names = {a.attendee for a in detail.context["attendances"]}
    assert names and all(a.organization_id == world.org_b.pk for a in detail.context["attendances"])
    assert "ALPHA-ENGINEER" not in detail.content.decode()
    api = client.get(reverse("enablement-api:enablementattendance-list")).json()
    assert {r["organization"] for r in api["results"]} == {world.org_b.pk}


def test_program_managers_create_sessions_for_any_organizations(client, world):
    client.force_login(world.pm)
    data = {"kind": "lab", "topic": "EFA hands-on", "date": "2026-11-20", "description": "",
            "audience": [world.org_a.pk, world.org_b.pk]}
    assert client.post(reverse("enablement:enablement_add"), data).status_code == 302
    session = EnablementSession.objects.get(topic="EFA hands-on")
    assert set(session.audience.all()) == {world.org_a, world.org_b} and session.created_by == world.pm
    assert TimelineEntry.objects.filter(kind="enablement").count() == 2


def test_lead_sas_and_customers_cannot_write_sessions(client, world):
    """A lead SA of one invited organization must not rewrite what every other organization reads."""
    session = EnablementSessionFactory(topic="Joint", description="original", audience=[world.org_a, world.org_b])
    data = {"kind": "workshop", "topic": "Joint (rewritten)", "date": "2026-11-20",
            "description": "[click](https://phish.example)", "audience": [world.org_a.pk]}
    for user in (world.lead_a, world.customer_a):
        client.force_login(user)
        assert client.get(reverse("enablement:enablement_add")).status_code == 403
        assert client.post(reverse("enablement:enablement_add"), data).status_code == 403
        assert client.get(reverse("enablement:enablement_edit", args=[session.pk])).status_code == 403
        assert client.post(reverse("enablement:enablement_edit", args=[session.pk]), data).status_code == 403
        assert "Edit</a>" not in client.get(session.get_absolute_url()).content.decode()
    session.refresh_from_db()
    assert (session.topic, session.description) == ("Joint", "original")
    assert set(session.audience.all()) == {world.org_a, world.org_b}
    assert EnablementSession.objects.count() == 1


def test_lead_sas_record_attendance_for_their_organizations(client, world):
    session = EnablementSessionFactory(audience=[world.org_a, world.org_b])
    client.force_login(world.lead_a)
    page = client.get(session.get_absolute_url())
    assert list(page.context["attendance_form"].fields["organization"].queryset) == [world.org_a]
    client.post(reverse("enablement:enablement_attendance", args=[session.pk]),
                {"organization": world.org_a.pk, "attendee": "Aiko", "satisfaction": 5})
    assert EnablementAttendance.objects.filter(attendee="Aiko", organization=world.org_a).exists()


@pytest.mark.parametrize(("score", "ok"), [(1, True), (5, True), (0, False), (6, False)])
def test_satisfaction_is_one_to_five(client, world, score, ok):
    session = EnablementSessionFactory(audience=[world.org_a])
    client.force_login(world.lead_a)
    client.post(reverse("enablement:enablement_attendance", args=[session.pk]),
                {"organization": world.org_a.pk, "attendee": "Ken", "satisfaction": score})
    assert EnablementAttendance.objects.filter(attendee="Ken").exists() is ok


def test_attendance_only_for_organizations_one_may_write_for(client, world):
    session = EnablementSessionFactory(audience=[world.org_a, world.org_b])
    client.force_login(world.lead_a)
    client.post(reverse("enablement:enablement_attendance", args=[session.pk]),
                {"organization": world.org_b.pk, "attendee": "Intruder", "satisfaction": 5})
    assert not EnablementAttendance.objects.exists()
    client.force_login(world.customer_a)
    assert client.post(reverse("enablement:enablement_attendance", args=[session.pk]),
                       {"organization": world.org_a.pk, "attendee": "Me", "satisfaction": 5}).status_code == 403


def test_api_lists_sessions_with_scores(client, world):
    """Query counts: tests/interactions/test_interactions_views.py (TestEnablementApi)."""
    client.force_login(world.customer_a)
    for i in range(3):
        session = EnablementSessionFactory(audience=[world.org_a], date=datetime.date(2026, 1, 1 + i))
        AttendanceFactory(session=session, organization=world.org_a, satisfaction=4)
    rows = client.get(reverse("enablement-api:enablementsession-list")).json()["results"]
    assert len(rows) == 3 and all(r["attendance_count"] == 1 and r["average_score"] == 4.0 for r in rows)
