"""The customer's status section on the organization page, and the lead SA's home sections."""
from __future__ import annotations

import datetime

from django.urls import reverse
from django.utils import timezone

from tests.clusters.factories_clusters import ClusterFactory
from tests.conftest import MARKER_A
from tests.queries import assert_flat_queries
from tests.workloads.factories_workloads import CapacityReservationFactory


def test_customer_sees_their_clusters_and_next_expiry(world, client):
    ClusterFactory(organization=world.org_a, name="alpha-train", state="ready")
    ClusterFactory(organization=world.org_a, name="alpha-broken", state="failed", error_message="EFA security group missing self rule")
    ClusterFactory(organization=world.org_b, name="beta-train", state="creating")
    day = timezone.localdate()
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0aaaaaaaaaaaaaaaa", end=day + datetime.timedelta(days=9))
    CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0bbbbbbbbbbbbbbbb", end=day + datetime.timedelta(days=40))
    client.force_login(world.customer_a)
    body = client.get(world.org_a.get_absolute_url()).content.decode()
    assert "alpha-train" in body and "Ready" in body and "alpha-broken" in body
    # The failure in the portal's words; AWS's own text is for lead SAs (portal/core/provider_errors.py).
    assert "EFA security group" not in body and "Your lead SA has the details" in body
    assert "beta-train" not in body
    assert "cr-0aaaaaaaaaaaaaaaa" in body and (day + datetime.timedelta(days=9)).isoformat() in body


def test_customer_of_another_organization_gets_nothing(world, client):
    ClusterFactory(organization=world.org_a, name="alpha-train", state="ready")
    client.force_login(world.customer_b)
    assert client.get(world.org_a.get_absolute_url()).status_code == 404
    body = client.get(world.org_b.get_absolute_url()).content.decode()
    assert "alpha-train" not in body and MARKER_A not in body


def test_lead_home_shows_launches_in_flight_and_failures(world, client):
    ClusterFactory(organization=world.org_a, name="alpha-new", state="creating")
    ClusterFactory(organization=world.org_a, name="alpha-bad", state="failed", error_message="CREATE_FAILED FSx")
    ClusterFactory(organization=world.org_b, name="beta-new", state="scheduled")
    client.force_login(world.lead_a)
    body = client.get(reverse("portal:lead_home")).content.decode()
    assert "alpha-new" in body and "alpha-bad" in body and "CREATE_FAILED FSx" in body
    assert "beta-new" not in body


def test_lead_home_query_count_does_not_grow(world, client):
    client.force_login(world.lead_a)
    grow = lambda n: ClusterFactory.create_batch(n, organization=world.org_a, state="creating")  # noqa: E731
    # +1: which of the lead's organizations left the active cycle (the "to wind down" badge).
    # 14: the failed remediation section reads its actions in one query.
    assert_flat_queries(client, reverse("portal:lead_home"), grow=grow, sizes=(3, 30), at_most=14)


def test_organization_page_query_count_does_not_grow(world, client):
    """The whole page (every app's sections), at 3 and at 30 clusters."""
    client.force_login(world.customer_a)
    grow = lambda n: ClusterFactory.create_batch(n, organization=world.org_a, state="ready")  # noqa: E731
    assert_flat_queries(client, world.org_a.get_absolute_url(), grow=grow, sizes=(3, 30))
