"""The customer's status section on the organization page, and the lead SA's home sections."""
from __future__ import annotations

import datetime

from django.urls import reverse
from django.utils import timezone

from clusters.models import Cluster
from tests.conftest import MARKER_A
from tests.workloads.factories_workloads import CapacityReservationFactory


def _cluster(org, name, state, **kw):
    return Cluster.objects.create(organization=org, name=name, instance_type="p5.48xlarge", node_count=2, state=state,
                                  **kw)


def test_customer_sees_their_clusters_and_next_expiry(world, client):
    _cluster(world.org_a, "alpha-train", "ready")
    _cluster(world.org_a, "alpha-broken", "failed", error_message="EFA security group missing self rule")
    _cluster(world.org_b, "beta-train", "creating")
    day = timezone.localdate()
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0aaaaaaaaaaaaaaaa", end=day + datetime.timedelta(days=9))
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0bbbbbbbbbbbbbbbb", end=day + datetime.timedelta(days=40))
    client.force_login(world.customer_a)
    body = client.get(world.org_a.get_absolute_url()).content.decode()
    assert "alpha-train" in body and "Ready" in body and "alpha-broken" in body
    # The failure in the portal's words; AWS's own text is for lead SAs (portal/provider_errors.py).
    assert "EFA security group" not in body and "Your lead SA has the details" in body
    assert "beta-train" not in body
    assert "cr-0aaaaaaaaaaaaaaaa" in body and (day + datetime.timedelta(days=9)).isoformat() in body


def test_customer_of_another_organization_gets_nothing(world, client):
    _cluster(world.org_a, "alpha-train", "ready")
    client.force_login(world.customer_b)
    assert client.get(world.org_a.get_absolute_url()).status_code == 404
    body = client.get(world.org_b.get_absolute_url()).content.decode()
    assert "alpha-train" not in body and MARKER_A not in body


def test_lead_home_shows_launches_in_flight_and_failures(world, client):
    _cluster(world.org_a, "alpha-new", "creating")
    _cluster(world.org_a, "alpha-bad", "failed", error_message="CREATE_FAILED FSx")
    _cluster(world.org_b, "beta-new", "scheduled")
    client.force_login(world.lead_a)
    body = client.get(reverse("portal:lead_home")).content.decode()
    assert "alpha-new" in body and "alpha-bad" in body and "CREATE_FAILED FSx" in body
    assert "beta-new" not in body


def test_lead_home_query_count_does_not_grow(world, client, django_assert_max_num_queries):
    client.force_login(world.lead_a)
    for n in (3, 30):
        Cluster.objects.filter(organization=world.org_a).delete()
        for i in range(n):
            _cluster(world.org_a, f"c{i}", "creating")
        with django_assert_max_num_queries(12):
            assert client.get(reverse("portal:lead_home")).status_code == 200


def test_organization_page_query_count_does_not_grow(world, client):
    """The whole page (every app's sections), at 3 and at 30 clusters."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(world.customer_a)
    counts = []
    for n in (3, 30):
        Cluster.objects.filter(organization=world.org_a).delete()
        for i in range(n):
            _cluster(world.org_a, f"c{i}", "ready")
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(world.org_a.get_absolute_url()).status_code == 200
        counts.append(len(ctx.captured_queries))
    assert counts[0] == counts[1], counts
