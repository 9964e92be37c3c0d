"""A scheduled switch, changed by a program manager from the page: moved to another day or cancelled, each after
a confirmation, kept in the cycle's history; quotas and reservations carried into the new cycle get a history
record saying so; the API's start has the page's summary step."""
from __future__ import annotations

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from portal.core.models import Cycle, CycleParticipation
from portal.engagement import cycles
from tests.workloads.factories_workloads import CapacityReservationFactory, InstanceQuotaFactory
from workloads.models import CapacityReservation, InstanceQuota

pytestmark = pytest.mark.django_db
API = reverse("engagement-api:cycle-start-next")


@pytest.fixture
def current(world):
    Cycle.objects.filter(status="active").update(status="archived")
    cycle = Cycle.objects.create(number=80, name="Cycle 80", status="active",
                                 starts_on=timezone.localdate() - datetime.timedelta(days=30))
    for org in (world.org_a, world.org_b):
        CycleParticipation.objects.create(cycle=cycle, organization=org)
    return cycle


@pytest.fixture
def scheduled(current, world):
    return cycles.start_next(world.pm, continuing=[world.org_a.pk],
                             starts_on=timezone.localdate() + datetime.timedelta(days=6))


def _url(cycle):
    return reverse("engagement:cycle_schedule", args=[cycle.pk])


def _form(client, cycle) -> dict:
    """The hidden fields of the page's move form, as a browser sends them back."""
    import re

    page = client.get(_url(cycle)).content.decode()
    version = re.search(r'name="_version" value="([^"]*)"', page).group(1)
    return {"_version": version}


def test_moving_the_start_asks_to_confirm_then_moves_it_and_keeps_who_did(scheduled, current, world, client):
    client.force_login(world.pm)
    listing = client.get(reverse("engagement:cycle_list")).content.decode()
    assert _url(scheduled) in listing and "Move or cancel the start" in listing
    page = client.get(_url(scheduled)).content.decode()
    assert "Move the start…" in page and "Cancel the start…" in page
    later = timezone.localdate() + datetime.timedelta(days=20)
    form = {**_form(client, scheduled), "action": "move", "starts_on": later.isoformat()}
    confirm = client.post(_url(scheduled), form)
    assert confirm.status_code == 200 and f"Confirm: start on {later:%Y-%m-%d}" in confirm.content.decode()
    scheduled.refresh_from_db()
    assert scheduled.starts_on == timezone.localdate() + datetime.timedelta(days=6)  # not yet
    response = client.post(_url(scheduled), {**form, "confirm": "yes"})
    assert response.status_code == 302
    scheduled.refresh_from_db()
    assert (scheduled.starts_on, scheduled.status) == (later, "planned")
    last = scheduled.history.order_by("-history_id").first()
    assert last.history_user == world.pm and "to " + later.isoformat() in last.history_change_reason
    assert last.history_change_reason in client.get(_url(scheduled)).content.decode()
    assert Cycle.objects.get(status="active") == current


def test_moving_the_start_to_today_switches_at_once(scheduled, current, world, client):
    InstanceQuotaFactory(organization=world.org_a, end=timezone.localdate() + datetime.timedelta(days=60))
    client.force_login(world.pm)
    form = {**_form(client, scheduled), "action": "move", "starts_on": timezone.localdate().isoformat(),
            "confirm": "yes"}
    assert client.post(_url(scheduled), form).status_code == 302
    current.refresh_from_db()
    scheduled.refresh_from_db()
    assert (current.status, scheduled.status) == ("archived", "active")
    assert InstanceQuota.objects.filter(organization=world.org_a, cycle=scheduled).exists()


def test_cancelling_the_start_removes_the_planned_cycle_and_keeps_who_cancelled(scheduled, current, world, client):
    client.force_login(world.pm)
    form = {**_form(client, scheduled), "action": "cancel"}
    confirm = client.post(_url(scheduled), form).content.decode()
    assert "Confirm: cancel the start" in confirm and Cycle.objects.filter(pk=scheduled.pk).exists()
    response = client.post(_url(scheduled), {**form, "confirm": "yes"})
    assert response.status_code == 302 and response["Location"] == reverse("engagement:cycle_list")
    assert not Cycle.objects.filter(pk=scheduled.pk).exists() and cycles.scheduled() is None
    assert Cycle.objects.get(status="active") == current
    gone = Cycle.history.filter(id=scheduled.pk, history_type="-").get()
    assert gone.history_user == world.pm and "cancelled" in gone.history_change_reason
    # The cycles page keeps the cancellation in view (program managers), by name, after the row is gone.
    listing = client.get(reverse("engagement:cycle_list")).content.decode()
    assert "Changes to scheduled starts" in listing and f"{scheduled.name}, scheduled start on" in listing
    assert world.pm.display_name in listing
    client.force_login(world.lead_a)
    assert "Changes to scheduled starts" not in client.get(reverse("engagement:cycle_list")).content.decode()
    # The next cycle can be scheduled again.
    assert cycles.start_next(world.pm, continuing=[world.org_a.pk],
                             starts_on=timezone.localdate() + datetime.timedelta(days=3)).status == "planned"


def test_a_change_made_meanwhile_refuses_the_stale_one(scheduled, world, client):
    client.force_login(world.pm)
    form = {**_form(client, scheduled), "action": "move", "confirm": "yes",
            "starts_on": (timezone.localdate() + datetime.timedelta(days=10)).isoformat()}
    cycles.reschedule(world.pm, scheduled, timezone.localdate() + datetime.timedelta(days=12))
    response = client.post(_url(scheduled), form)
    assert response.status_code == 409 and "changed this schedule meanwhile" in response.content.decode()
    scheduled.refresh_from_db()
    assert scheduled.starts_on == timezone.localdate() + datetime.timedelta(days=12)


def test_bad_input_is_refused_and_changes_nothing(scheduled, current, world, client):
    client.force_login(world.pm)
    before = scheduled.starts_on
    for data in ({"action": "move", "starts_on": "", "confirm": "yes"},
                 {"action": "move", "starts_on": "not a date", "confirm": "yes"},
                 {"action": "explode", "confirm": "yes"},
                 {"action": "move", "confirm": "yes",
                  "starts_on": (current.starts_on - datetime.timedelta(days=1)).isoformat()}):
        response = client.post(_url(scheduled), data)
        assert response.status_code == 400, data
    scheduled.refresh_from_db()
    assert scheduled.starts_on == before and scheduled.status == "planned"
    # The active cycle is not scheduled: nothing to move or cancel.
    response = client.post(_url(current), {"action": "cancel", "confirm": "yes"})
    assert response.status_code == 400 and Cycle.objects.filter(pk=current.pk, status="active").exists()


def test_only_program_managers_change_the_schedule(scheduled, world, client):
    for user in (world.lead_a, world.customer_a):
        client.force_login(user)
        assert client.get(_url(scheduled)).status_code == 403
        assert client.post(_url(scheduled), {"action": "cancel", "confirm": "yes"}).status_code == 403
    assert Cycle.objects.filter(pk=scheduled.pk).exists()


def test_carried_quotas_and_reservations_get_a_history_record(current, world):
    quota = InstanceQuotaFactory(organization=world.org_a, end=timezone.localdate() + datetime.timedelta(days=60))
    reservation = CapacityReservationFactory(organization=world.org_a,
                                             end=timezone.localdate() + datetime.timedelta(days=60))
    leaving = InstanceQuotaFactory(organization=world.org_b, end=timezone.localdate() + datetime.timedelta(days=60))
    nxt = cycles.start_next(world.pm, continuing=[world.org_a.pk])
    for model, row in ((InstanceQuota, quota), (CapacityReservation, reservation)):
        last = model.history.filter(id=row.pk).order_by("-history_id").first()
        assert (last.history_type, last.cycle_id, last.history_user) == ("~", nxt.pk, world.pm)
        assert last.history_change_reason == f"Carried over from {current.name} into {nxt.name}"
    assert InstanceQuota.history.filter(id=leaving.pk).order_by("-history_id").first().cycle_id == current.pk
    # Read as a change of cycle, by name.
    from workloads import history

    changes = history.describe(InstanceQuota, InstanceQuota.history.filter(id=quota.pk).order_by("-history_id")[0])
    assert [c.text() for c in changes] == [f"Cycle: {current.name} → {nxt.name}"]


def test_the_api_answers_the_summary_first_then_starts_on_confirmation(current, world, client):
    InstanceQuotaFactory(organization=world.org_a, end=timezone.localdate() + datetime.timedelta(days=60))
    InstanceQuotaFactory(organization=world.org_b, end=timezone.localdate() + datetime.timedelta(days=60))
    client.force_login(world.pm)
    body = {"continuing": [world.org_a.slug]}
    for _ in range(2):
        response = client.post(API, body, content_type="application/json")
        assert response.status_code == 200, response.content
        summary = response.json()
        assert summary["confirm_required"] is True and summary["at_once"] is True
        assert (summary["continuing"], summary["leaving"]) == ([world.org_a.slug], [world.org_b.slug])
        assert summary["carried"]["quota"] == 1 and summary["wind_down"]["quota"] == 1
    assert Cycle.objects.get(status="active") == current and not Cycle.objects.filter(number=81).exists()
    refused = client.post(API, {"continuing": []}, content_type="application/json")
    assert refused.status_code == 400
    key = {"HTTP_IDEMPOTENCY_KEY": "start-cycle-81"}
    first = client.post(API, {**body, "confirm": True}, content_type="application/json", **key)
    again = client.post(API, {**body, "confirm": True}, content_type="application/json", **key)
    assert first.status_code == again.status_code == 201 and first.json() == again.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Cycle.objects.filter(number=81).count() == 1 and Cycle.objects.get(status="active").number == 81


def test_the_overview_lists_what_leaving_organizations_still_hold_to_wind_down(current, world, client):
    from tests.clusters.factories_clusters import ready_cluster

    overview = reverse("review:overview")
    ready_cluster(world.org_b, name="beta-leaving")
    InstanceQuotaFactory(organization=world.org_b, end=timezone.localdate() + datetime.timedelta(days=60))
    ready_cluster(world.org_a, name="alpha-staying")
    client.force_login(world.pm)
    assert "To wind down" not in client.get(overview).content.decode()  # nobody has left yet
    summary = client.post(reverse("engagement:cycle_start_next"), {"continuing": [world.org_a.pk]}).content.decode()
    left = summary[summary.index("<h3>To wind down"):]
    assert "1 cluster not deleted" in left and "1 quota in force" in left and "beta-leaving" in left
    cycles.start_next(world.pm, continuing=[world.org_a.pk])
    page = client.get(overview).content.decode()
    assert "To wind down" in page and "beta-leaving" in page and world.org_b.name in page
    section = page[page.index("To wind down"):]
    assert "alpha-staying" not in section and current.name in section
    # The row names what to end first (its link), then whose it is: a phone shows that without scrolling.
    row = section[section.index("beta-leaving") - 200:section.index("beta-leaving")]
    assert "<td><a href=" in row and world.org_b.name not in row
    client.force_login(world.lead_b)  # the overview is the program manager's
    assert client.get(overview).status_code == 403


def test_the_next_cycle_is_named_after_the_current_one_unless_named(current, world, client):
    from portal.core.models import Cycle as C

    assert cycles.next_name(C(number=3, name="GENIAC Cycle 3")) == "GENIAC Cycle 4"
    assert cycles.next_name(C(number=3, name="Spring 2026")) == "Cycle 4"
    assert cycles.next_name(C(number=3, name="Cycle 13")) == "Cycle 4"
    client.force_login(world.pm)
    assert "Empty: “Cycle 81”." in client.get(reverse("engagement:cycle_start_next")).content.decode()


def test_a_leaving_organizations_page_lists_what_it_still_holds(current, world, client):
    from tests.clusters.factories_clusters import ready_cluster

    ready_cluster(world.org_b, name="beta-still-running")
    reservation = CapacityReservationFactory(organization=world.org_b,
                                             end=timezone.localdate() + datetime.timedelta(days=60))
    nxt = cycles.start_next(world.pm, continuing=[world.org_a.pk])
    for user in (world.customer_b, world.lead_b, world.pm):
        client.force_login(user)
        page = client.get(world.org_b.get_absolute_url()).content.decode()
        assert f"{world.org_b.name} does not take part in {nxt.name}" in page, user
        assert "beta-still-running" in page and reservation.reservation_id in page
    client.force_login(world.customer_a)  # the continuing organization's page has no such section
    assert "does not take part in" not in client.get(world.org_a.get_absolute_url()).content.decode()


def test_the_lead_home_marks_an_organization_that_left_the_active_cycle(current, world, client):
    from portal.core.models import Membership

    Membership.objects.get_or_create(user=world.lead_b, organization=world.org_a, role="lead_sa")
    client.force_login(world.lead_b)
    home = reverse("portal:lead_home")
    assert "to wind down" not in client.get(home).content.decode()
    nxt = cycles.start_next(world.pm, continuing=[world.org_a.pk])
    page = client.get(home).content.decode()
    cards = page[page.index("card-list"):page.index("</ul>", page.index("card-list"))]
    beta = cards[cards.index(world.org_b.name):]
    alpha = cards[cards.index(world.org_a.name):]
    assert f"Not in {nxt.name}: to wind down" in beta.split("</li>")[0]
    assert "to wind down" not in alpha.split("</li>")[0]
