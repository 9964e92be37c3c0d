"""Starting the next cycle keeps the live program whole: running clusters (with their health), quotas and
reservations in force move into the new cycle for the organizations that continue, history stays where it
happened, a leaving organization's resources are listed to wind down (and its clusters can still be torn down), a
later start date schedules the switch for beat to make that day, the page asks to confirm, and two program managers
starting at once start one cycle."""
from __future__ import annotations

import datetime

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from clusters.models import Cluster
from portal.core.models import Cycle, CycleCarry, CycleParticipation, Organization, User
from portal.engagement import cycles
from portal.review.figures.overview import overview
from workloads.models import CapacityReservation, InstanceQuota

START = reverse("engagement:cycle_start_next")
LEAVING = ("minato-medical", "kaze-weather")  # minato has a ready cluster and a reservation running on


def _text(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def _running(names_from) -> set[str]:
    """Clusters not deleted: running, launching, or failed (still to retry or tear down)."""
    return {c.name for c in names_from.exclude(state="deleted")}


@pytest.mark.django_db
def test_the_next_cycle_as_a_program_manager_starts_it_on_the_demo(client):
    call_command("seed_demo")
    pm, lead, kotoba = (User.objects.get(username=u) for u in ("pm", "lead", "kotoba"))
    old = Cycle.objects.get(status="active")
    running = _running(Cluster.objects.all())
    leaving_running = _running(Cluster.objects.filter(organization__slug__in=LEAVING))
    assert "kotoba-p5-pretrain" in running and leaving_running == {"minato-p5", "minato-p5-stalled"}
    kotoba_org = Organization.objects.get(slug="kotoba-labs")
    kotoba_cluster = Cluster.objects.get(name="kotoba-p5-pretrain")
    before = overview(pm)
    assert len(before["organizations"]) == 12

    def live_view():
        client.force_login(pm)
        listed = _text(client.get(reverse("clusters:cluster_list")))
        page = _text(client.get(reverse("review:overview")))
        client.force_login(lead)
        cluster_page = _text(client.get(kotoba_cluster.get_absolute_url()))
        client.force_login(kotoba)
        org_page = _text(client.get(kotoba_org.get_absolute_url()))
        return listed, page, cluster_page, org_page

    listed, page, cluster_page, org_page = live_view()
    assert all(name in listed for name in running) and "Live figures for 12 organizations" in page
    assert "Delete…" in cluster_page
    assert "kotoba-p5-pretrain" in org_page and "cr-0a1b2c3d4e5f60001" in org_page and "No clusters yet" not in org_page

    # The program manager chooses who continues, reads the summary, then confirms.
    client.force_login(pm)
    continuing = list(old.participations.exclude(organization__slug__in=LEAVING).values_list("organization", flat=True))
    form = {"name": "GENIAC Cycle 4", "continuing": continuing}
    summary = _text(client.post(START, form))
    assert "Confirm: start the next cycle now" in summary
    assert "Minato Medical" in summary and "Kaze Weather" in summary  # leaving
    assert "minato-p5" in summary and "To wind down" in summary
    assert "kotoba-p5-pretrain" in summary  # carried over
    assert Cycle.objects.get(status="active") == old  # nothing happened yet
    response = client.post(START, {**form, "confirm": "yes"})
    assert response.status_code == 302
    new = Cycle.objects.get(status="active")
    old.refresh_from_db()
    assert (new.name, old.status) == ("GENIAC Cycle 4", "archived")

    # What was live stays live, for the organizations that continue.
    assert _running(Cluster.objects.filter(cycle=new)) == running - leaving_running
    assert _running(Cluster.objects.filter(cycle=old)) == leaving_running
    assert InstanceQuota.objects.filter(cycle=new, organization=kotoba_org).exists()
    assert CapacityReservation.objects.get(reservation_id="cr-0a1b2c3d4e5f60001").cycle == new
    listed, page, cluster_page, org_page = live_view()
    assert all(name in listed for name in running - leaving_running) and "minato-p5" not in listed
    assert "Delete…" in cluster_page
    assert "kotoba-p5-pretrain" in org_page and "cr-0a1b2c3d4e5f60001" in org_page and "No clusters yet" not in org_page
    assert "Live figures for 10 organizations" in page
    # The quota page (active cycle by default) still shows the organization's quota in force, and the carried
    # cluster takes writes again: it belongs to the active cycle now.
    client.force_login(kotoba)
    quotas = client.get(reverse("workloads:quota_list"))
    assert {q.pk for q in quotas.context["object_list"]} == set(
        InstanceQuota.objects.filter(organization=kotoba_org).values_list("pk", flat=True))
    from portal.core import access

    kotoba_cluster.refresh_from_db()
    assert access.can(lead, access.LAUNCH, kotoba_cluster) and not access.in_archived_cycle(kotoba_cluster)
    after = overview(pm)
    minato = Cluster.objects.get(name="minato-p5")
    expected = dict(before["totals"]["clusters"])
    for leaving in Cluster.objects.filter(name__in=leaving_running):
        expected[leaving.state] -= 1
    assert {k: v for k, v in after["totals"]["clusters"].items() if v} == {k: v for k, v in expected.items() if v}
    assert {o["slug"] for o in after["organizations"]}.isdisjoint(LEAVING)

    # A leaving organization's resources: listed to wind down, read-only, and the cluster can still be torn down.
    client.force_login(pm)
    wind_down = _text(client.get(reverse("engagement:cycle_list")))
    assert "To wind down" in wind_down and "minato-p5" in wind_down and "cr-0a1b2c3d4e5f60006" in wind_down
    minato_lead = User.objects.get(username="lead3")
    client.force_login(minato_lead)
    minato_page = _text(client.get(minato.get_absolute_url()))
    assert "Delete…" in minato_page and "Retry" not in minato_page
    response = client.post(reverse("clusters:cluster_delete", args=[minato.pk]), {"confirm_name": minato.name})
    assert response.status_code == 302
    assert Cluster.objects.get(pk=minato.pk).state == "deleting"

    # History stays where it happened: the old cycle's report still counts the clusters launched in it.
    report_old, report_new = cycles.report(old)["totals"], cycles.report(new)["totals"]
    assert report_old["clusters"] == Cluster.objects.count() - Cluster.objects.filter(
        organization__slug="kaze-weather").count()
    assert report_new["clusters"] == 0
    assert CycleCarry.objects.filter(cycle=new, from_cycle=old, kind="cluster").count() == len(running - leaving_running)


@pytest.fixture
def current(world):
    Cycle.objects.filter(status="active").update(status="archived")
    cycle = Cycle.objects.create(number=60, name="Cycle 60", status="active",
                                 starts_on=timezone.localdate() - datetime.timedelta(days=30))
    for org in (world.org_a, world.org_b):
        CycleParticipation.objects.create(cycle=cycle, organization=org)
    return cycle


@pytest.mark.django_db
def test_a_later_start_date_schedules_the_switch_and_beat_makes_it_that_day(current, world, client):
    from portal.engagement.tasks import switch_cycles
    from tests.clusters.factories_clusters import ready_cluster
    from tests.workloads.factories_workloads import CapacityReservationFactory

    cluster = ready_cluster(world.org_a, name="alpha-live")
    ending = CapacityReservationFactory(organization=world.org_a, end=timezone.localdate() + datetime.timedelta(days=3))
    lasting = CapacityReservationFactory(organization=world.org_a, end=timezone.localdate() + datetime.timedelta(days=90))
    day = timezone.localdate() + datetime.timedelta(days=6)
    client.force_login(world.pm)
    form = {"continuing": [world.org_a.pk], "starts_on": day.isoformat()}
    summary = _text(client.post(START, form))
    assert f"Confirm: schedule the next cycle for {day:%Y-%m-%d}" in summary
    response = client.post(START, {**form, "confirm": "yes"})
    assert response.status_code == 302
    nxt = Cycle.objects.get(number=61)
    current.refresh_from_db()
    assert (current.status, nxt.status, nxt.starts_on) == ("active", "planned", day)  # not archived at once
    assert cluster.__class__.objects.get(pk=cluster.pk).cycle == current
    assert "is scheduled to start on" in _text(client.get(reverse("engagement:cycle_list")))
    # A second scheduling is refused while one is pending.
    response = client.post(START, {**form, "confirm": "yes"})
    assert response.status_code == 400 and "already scheduled" in response.content.decode()

    assert switch_cycles((day - datetime.timedelta(days=1)).isoformat()) is None  # the day before: nothing
    assert Cycle.objects.get(status="active") == current
    assert switch_cycles(day.isoformat()) == nxt.pk  # that day
    assert switch_cycles(day.isoformat()) is None  # and once
    current.refresh_from_db()
    nxt.refresh_from_db()
    assert (current.status, current.ends_on, nxt.status) == ("archived", day - datetime.timedelta(days=1), "active")
    assert Cluster.objects.get(pk=cluster.pk).cycle == nxt
    # In force on the new cycle's first day: carried; ended before it: stays.
    assert CapacityReservation.objects.get(pk=lasting.pk).cycle == nxt
    assert CapacityReservation.objects.get(pk=ending.pk).cycle == current


def test_beat_declares_the_switch():
    from django.conf import settings

    assert any(e["task"] == "engagement.switch_cycles" for e in settings.CELERY_BEAT_SCHEDULE.values())


@pytest.mark.django_db
def test_without_confirmation_nothing_starts(current, world, client):
    client.force_login(world.pm)
    assert "Review what will happen" in _text(client.get(START))
    for _ in range(2):
        _text(client.post(START, {"continuing": [world.org_a.pk]}))
    assert Cycle.objects.get(status="active") == current and not Cycle.objects.filter(number=61).exists()


@pytest.mark.django_db
def test_carried_models_are_labelled_and_outcomes_show_one_cycle(current, world, client):
    from portal.engagement.models import Milestone
    from tests.engagement.factories_engagement import TrainedModelFactory

    Milestone.objects.create(organization=world.org_a, kind="model_released", reached_on=current.starts_on)
    TrainedModelFactory(organization=world.org_a, name="Alpha-Done", released_on=current.starts_on)
    TrainedModelFactory(organization=world.org_a, name="Alpha-Training")
    nxt = cycles.start_next(world.pm, continuing=[world.org_a.pk])
    Milestone.objects.create(organization=world.org_a, kind="onboarded", reached_on=timezone.localdate())
    client.force_login(world.pm)
    page = _text(client.get(reverse("engagement:outcome_list")))
    assert "Alpha-Training" in page and "carried over from Cycle 60" in page and "Alpha-Done" not in page
    assert timezone.localdate().isoformat() in page and current.starts_on.isoformat() not in page
    past = _text(client.get(reverse("engagement:outcome_list"), {"cycle": current.pk}))
    assert "Alpha-Done" in past and "Alpha-Training" in past and current.starts_on.isoformat() in past
    assert "carried over from" not in past
    overview_page = _text(client.get(reverse("review:overview")))
    assert f"Outcomes in {nxt.name}" in overview_page and "carried over from Cycle 60" in overview_page
    assert "Alpha-Done" not in overview_page
    # The export (and the PDF, from the same figures) carries the label too, and one cycle's milestones only.
    from tests.engagement.test_outcomes import _body

    exported = _body(client.get(reverse("review:overview_csv", args=["outcomes"])))
    assert "Alpha-Training" in exported and "carried over from Cycle 60" in exported and "Alpha-Done" not in exported
    assert current.starts_on.isoformat() not in exported


@pytest.mark.django_db(transaction=True)
def test_two_program_managers_starting_at_once_start_one_cycle(world):
    from django.db import connection
    from django.test import Client

    from tests.concurrency import race

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite admits one writer at a time (CI runs this on PostgreSQL)")
    Cycle.objects.filter(status="active").update(status="archived")
    old = Cycle.objects.create(number=70, name="Cycle 70", status="active")
    CycleParticipation.objects.create(cycle=old, organization=world.org_a)
    other_pm = User.objects.create(username="pm2", is_program_manager=True)
    clients = []
    for user in (world.pm, other_pm):
        c = Client()
        c.force_login(user)
        clients.append(c)
    form = {"continuing": [world.org_a.pk], "confirm": "yes"}
    codes = race(2, lambda i: clients[i].post(START, form).status_code)
    assert sorted(codes) == [302, 400], codes
    assert Cycle.objects.filter(status="active").count() == 1
    assert Cycle.objects.filter(number=71).count() == 1 and not Cycle.objects.filter(number=72).exists()
    assert CycleParticipation.objects.filter(cycle__number=71).count() == 1
