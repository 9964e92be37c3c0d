"""Lists filtered to a program cycle: quotas, reservations, clusters, enablement and weekly reviews show the active
cycle by default (page, htmx partial, CSV, API) and a past cycle with ``?cycle=<id>``, read-only; an archived row
refuses edits with a clear message; a customer of another organization still sees nothing; the API documents and
validates the ``cycle`` parameter; query counts stay flat."""
from __future__ import annotations

import datetime

import pytest
import yaml
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from portal.core.models import Cycle, CycleParticipation
from portal.review.models import WeeklyReview, week_start_of
from tests.clusters.factories_clusters import ClusterFactory
from tests.interactions.factories_interactions import EnablementSessionFactory
from tests.workloads.factories_workloads import CapacityReservationFactory, InstanceQuotaFactory
from workloads.models import CapacityReservation, InstanceQuota

pytestmark = pytest.mark.django_db


@pytest.fixture
def cycles(world):
    """Cycle 49 (archived) and Cycle 50 (active), organizations A and B in both, and one row of each kind per
    cycle: "OLD…" in the archived one, "NEW…" in the active one."""
    Cycle.objects.filter(status="active").update(status="archived")
    old = Cycle.objects.create(number=49, name="Cycle 49", status="archived")
    new = Cycle.objects.create(number=50, name="Cycle 50", status="active")
    for cycle in (old, new):
        for org in (world.org_a, world.org_b):
            CycleParticipation.objects.create(cycle=cycle, organization=org)
    week = week_start_of(timezone.localdate())
    for cycle, tag, weeks_ago in ((old, "OLD", 20), (new, "NEW", 1)):
        InstanceQuotaFactory(organization=world.org_a, notes=f"{tag}-QUOTA", cycle=cycle)
        CapacityReservationFactory(organization=world.org_a, reservation_id=f"cr-{tag.lower()}0000000000000",
                                   cycle=cycle, end=timezone.localdate() + datetime.timedelta(days=7))
        ClusterFactory(organization=world.org_a, name=f"{tag.lower()}-cluster", cycle=cycle)
        EnablementSessionFactory(topic=f"{tag}-SESSION", audience=[world.org_a], cycle=cycle)
        WeeklyReview.objects.create(week_start=week - datetime.timedelta(weeks=weeks_ago), figures={}, cycle=cycle)
    return old, new


PAGES = {  # list page → (url name, the old row's text, the new row's text)
    "quotas": ("workloads:quota_list", "OLD-QUOTA", "NEW-QUOTA"),
    "reservations": ("workloads:quota_list", "cr-old", "cr-new"),  # the reservations ending soon, on the quota page
    "reservation list": ("workloads:reservation_list", "cr-old", "cr-new"),
    "clusters": ("clusters:cluster_list", "old-cluster", "new-cluster"),
    "enablement": ("enablement:enablement_list", "OLD-SESSION", "NEW-SESSION"),
}
APIS = {  # API list → (url name, field, the old row's value prefix)
    "quotas": ("workloads-api:instancequota-list", "notes", "OLD"),
    "reservations": ("workloads-api:capacityreservation-list", "reservation_id", "cr-old"),
    "clusters": ("clusters-api:cluster-list", "name", "old"),
    "enablement": ("enablement-api:enablementsession-list", "topic", "OLD"),
    "reviews": ("review-api:weeklyreview-list", "week_start", None),
}


def _csv(response) -> str:
    assert response["Content-Type"].startswith("text/csv")
    return b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()


def _rows(response) -> list[dict]:
    data = response.json()
    return data["results"] if isinstance(data, dict) else data


@pytest.mark.parametrize("page", PAGES)
def test_each_list_page_shows_the_active_cycle_and_a_past_one_on_request(client, world, cycles, page):
    old, new = cycles
    name, old_text, new_text = PAGES[page]
    client.force_login(world.pm)
    default = client.get(reverse(name)).content.decode()
    assert new_text in default and old_text not in default
    assert 'name="cycle"' in default  # the selector of the filter bar
    past = client.get(reverse(name), {"cycle": old.pk}).content.decode()
    assert old_text in past and new_text not in past
    assert "Cycle 49 is archived" in past
    explicit = client.get(reverse(name), {"cycle": new.pk}).content.decode()
    assert new_text in explicit and old_text not in explicit
    bad = client.get(reverse(name), {"cycle": "999999"})  # not a cycle: the active one, and the form says why
    assert bad.status_code == 200 and new_text in bad.content.decode() and old_text not in bad.content.decode()


def test_htmx_partials_and_csv_exports_follow_the_cycle(client, world, cycles):
    old, _ = cycles
    client.force_login(world.pm)
    for name, old_text, new_text in (("workloads:quota_list", "OLD-QUOTA", "NEW-QUOTA"),
                                     ("workloads:reservation_list", "cr-old", "cr-new"),
                                     ("clusters:cluster_list", "old-cluster", "new-cluster")):
        partial = client.get(reverse(name), HTTP_HX_REQUEST="true").content.decode()
        assert new_text in partial and old_text not in partial and "<html" not in partial
        partial = client.get(reverse(name), {"cycle": old.pk}, HTTP_HX_REQUEST="true").content.decode()
        assert old_text in partial and new_text not in partial and "Cycle 49 is archived" in partial
    for name, old_text, new_text in (("workloads:quota_list", "OLD-QUOTA", "NEW-QUOTA"),
                                     ("workloads:reservation_list", "cr-old", "cr-new"),
                                     ("clusters:cluster_list", "old-cluster", "new-cluster"),
                                     ("enablement:enablement_list", "OLD-SESSION", "NEW-SESSION")):
        csv = _csv(client.get(reverse(name), {"export": "csv"}))
        assert new_text in csv and old_text not in csv, name
        csv = _csv(client.get(reverse(name), {"export": "csv", "cycle": old.pk}))
        assert old_text in csv and new_text not in csv, name


def test_the_review_list_shows_the_active_cycle_and_freezes_only_there(client, world, cycles):
    old, new = cycles
    client.force_login(world.pm)
    reviews = {r.cycle_id: r.week_start.isoformat() for r in WeeklyReview.objects.all()}
    default = client.get(reverse("review:review_list")).content.decode()
    assert reviews[new.pk] in default and reviews[old.pk] not in default and "Freeze this week" in default
    past = client.get(reverse("review:review_list"), {"cycle": old.pk}).content.decode()
    assert reviews[old.pk] in past and reviews[new.pk] not in past
    assert "Freeze this week" not in past and "Cycle 49 is archived" in past


def test_a_past_cycle_is_read_only_no_buttons_and_edits_refused_with_the_reason(client, world, cycles):
    old, new = cycles
    client.force_login(world.pm)
    page = client.get(reverse("workloads:quota_list"), {"cycle": old.pk}).content.decode()
    assert reverse("workloads:quota_add") not in page and "/edit/" not in page
    current = client.get(reverse("workloads:quota_list")).content.decode()
    assert reverse("workloads:quota_add") in current and "/edit/" in current
    reservations = client.get(reverse("workloads:reservation_list"), {"cycle": old.pk}).content.decode()
    assert reverse("workloads:reservation_add") not in reservations and "/edit/" not in reservations
    reservations = client.get(reverse("workloads:reservation_list")).content.decode()
    assert reverse("workloads:reservation_add") in reservations and "/edit/" in reservations
    sessions = client.get(reverse("enablement:enablement_list"), {"cycle": old.pk}).content.decode()
    assert reverse("enablement:enablement_add") not in sessions
    assert reverse("enablement:enablement_add") in client.get(reverse("enablement:enablement_list")).content.decode()

    from workloads.enablement.models import EnablementAttendance, EnablementSession

    session = EnablementSession.objects.get(cycle=old)
    current_session = EnablementSession.objects.get(cycle=new)
    add_url = reverse("enablement:enablement_attendance", args=[session.pk])
    assert add_url not in client.get(session.get_absolute_url()).content.decode()  # no attendance form
    assert reverse("enablement:enablement_attendance", args=[current_session.pk]) in client.get(
        current_session.get_absolute_url()).content.decode()
    added = client.post(add_url, {"organization": world.org_a.pk, "attendee": "x", "satisfaction": 5})
    assert added.status_code == 403 and "Cycle 49, which is archived" in added.content.decode()
    assert not EnablementAttendance.objects.filter(session=session).exists()

    quota = InstanceQuota.objects.get(cycle=old)
    reservation = CapacityReservation.objects.get(cycle=old)
    for url in (reverse("workloads:quota_edit", args=[quota.pk]),
                reverse("workloads:reservation_edit", args=[reservation.pk])):
        for response in (client.get(url), client.post(url, {"count": 1})):
            assert response.status_code == 403
            assert "Cycle 49, which is archived" in response.content.decode()
    assert client.get(reverse("workloads-api:instancequota-detail", args=[quota.pk])).status_code == 200  # readable
    api = client.patch(reverse("workloads-api:instancequota-detail", args=[quota.pk]), {"count": 1},
                       content_type="application/json")
    assert api.status_code == 403 and "Cycle 49, which is archived" in api.json()["detail"]
    changed = client.patch(reverse("workloads-api:capacityreservation-detail", args=[reservation.pk]), {"count": 1},
                           content_type="application/json")
    assert changed.status_code == 403 and "archived" in changed.json()["detail"]
    quota.refresh_from_db()
    reservation.refresh_from_db()
    assert (quota.count, reservation.count) == (16, 8)


def test_a_customer_of_another_organization_sees_nothing_in_any_cycle(client, world, cycles):
    old, new = cycles
    client.force_login(world.customer_b)
    for cycle in (None, old.pk, new.pk):
        params = {"cycle": cycle} if cycle else {}
        for name in ("clusters:cluster_list", "enablement:enablement_list"):
            page = client.get(reverse(name), params).content.decode()
            assert "ZZ-ORG-A-SECRET" not in page and "old-cluster" not in page and "new-cluster" not in page
            assert "SESSION" not in page
        for api, _field, _prefix in APIS.values():
            response = client.get(reverse(api), params)
            assert response.status_code in (200, 403) and (response.status_code == 403 or _rows(response) == [])
    # Customer A sees its own clusters of the past cycle, and the cycles it took part in are offered.
    client.force_login(world.customer_a)
    assert [r["name"] for r in _rows(client.get(reverse("clusters-api:cluster-list"), {"cycle": old.pk}))] == [
        "old-cluster"]


@pytest.mark.parametrize("api", APIS)
def test_the_api_lists_filter_by_cycle(client, world, cycles, api):
    old, new = cycles
    name, field, prefix = APIS[api]
    client.force_login(world.pm)
    default = _rows(client.get(reverse(name)))
    past = _rows(client.get(reverse(name), {"cycle": old.pk}))
    assert len(default) == len(past) == 1
    if prefix:
        assert str(past[0][field]).startswith(prefix) and not str(default[0][field]).startswith(prefix)
    else:
        reviews = {r.cycle_id: r.week_start.isoformat() for r in WeeklyReview.objects.all()}
        assert (default[0][field], past[0][field]) == (reviews[new.pk], reviews[old.pk])
    # Like every related-row filter of the API: a plain id, one without rows an empty page, not an id a 400.
    assert _rows(client.get(reverse(name), {"cycle": "999999"})) == []
    bad = client.get(reverse(name), {"cycle": "abc"})
    assert bad.status_code == 400 and "cycle" in str(bad.json())


def test_the_page_offers_only_cycles_the_users_organizations_took_part_in(client, world, cycles):
    old, new = cycles
    CycleParticipation.objects.filter(cycle=old, organization=world.org_b).delete()
    client.force_login(world.customer_b)
    page = client.get(reverse("clusters:cluster_list")).content.decode()
    assert "Cycle 50" in page and "Cycle 49" not in page
    refused = client.get(reverse("clusters:cluster_list"), {"cycle": old.pk}).content.decode()
    assert "Cycle 49 is archived" not in refused  # not a choice: the active cycle is shown
    client.force_login(world.customer_a)
    assert "Cycle 49" in client.get(reverse("clusters:cluster_list")).content.decode()


def test_the_schema_documents_the_cycle_parameter(client, world):
    client.force_login(world.staff)
    schema = yaml.safe_load(client.get(reverse("api-schema")).content)
    for path in ("/api/workloads/quotas/", "/api/workloads/reservations/", "/api/clusters/clusters/",
                 "/api/interactions/enablement-sessions/", "/api/review/reviews/"):
        matches = [p for p in schema["paths"] if p.endswith(path.split("/api", 1)[1]) or p == path]
        assert matches, path
        params = {p["name"]: p for p in schema["paths"][matches[0]]["get"]["parameters"]}
        assert "cycle" in params and "active cycle" in params["cycle"].get("description", ""), path


@pytest.mark.parametrize("name, api", [("workloads:quota_list", "workloads-api:instancequota-list"),
                                       ("clusters:cluster_list", "clusters-api:cluster-list")])
def test_query_counts_stay_flat_with_the_cycle_filter(client, world, cycles, name, api,
                                                      django_assert_max_num_queries):
    old, _ = cycles
    client.force_login(world.pm)
    counts = []
    for size in (2, 20):
        for i in range(size):
            InstanceQuotaFactory(organization=world.org_a, cycle=old, notes=f"q{size}-{i}")
            ClusterFactory(organization=world.org_a, cycle=old, name=f"c{size}-{i}")
        for params in ({"cycle": old.pk}, {}):
            with CaptureQueriesContext(connection) as page, django_assert_max_num_queries(40):
                assert client.get(reverse(name), params).status_code == 200
            with CaptureQueriesContext(connection) as listing:
                assert client.get(reverse(api), params).status_code == 200
            counts.append((len(page), len(listing)))
    assert counts[0] == counts[2] and counts[1] == counts[3], counts


def test_the_organization_page_shows_the_active_cycles_figures(client, world, cycles):
    old, new = cycles
    from clusters.models import Cluster

    Cluster.objects.update(state="ready")
    client.force_login(world.pm)
    page = client.get(world.org_a.get_absolute_url()).content.decode()
    assert "new-cluster" in page and "old-cluster" not in page
    assert "cr-new" in page and "cr-old" not in page


def test_the_overview_counts_the_active_cycles_clusters_and_reservations(client, world, cycles):
    """The program overview (page and API) is the active cycle's state: the archived cycle's cluster and
    reservation are history, not launches or reservations ending soon."""
    client.force_login(world.pm)
    for figures in (client.get(reverse("review-api:overview")).json(),
                    client.get(reverse("review:overview")).context["figures"]):
        a = next(row for row in figures["organizations"] if row["id"] == world.org_a.pk)
        assert a["clusters_total"] == 1, a["clusters"]
        assert a["expiring"]["count"] == 1
        assert sum(figures["totals"]["clusters"].values()) == 1
        assert figures["week"]["launches"] == 1
