"""The review API: overview figures scoped by role, frozen reviews for program managers, in the schema."""
from __future__ import annotations

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from portal.review import services
from portal.review.models import ActionItem
from tests.conftest import MARKER_A
from tests.queries import assert_flat_queries
from tests.review.factories_review import grow_program, program


@pytest.fixture
def api():
    return APIClient()


def test_program_manager_gets_every_organization(world, api):
    api.force_authenticate(world.pm)
    data = api.get(reverse("review-api:overview")).json()
    assert {o["slug"] for o in data["organizations"]} == {"alpha-labs", "beta-works"}
    assert set(data) >= {"week", "totals", "heatmap", "outstanding", "lessons", "charts"}


def test_lead_gets_only_the_organizations_they_lead(world, api):
    program(3, prefix="led", lead=world.lead_a)
    api.force_authenticate(world.lead_a)
    response = api.get(reverse("review-api:overview"))
    slugs = {o["slug"] for o in response.json()["organizations"]}
    assert slugs == {"alpha-labs", "led-0000", "led-0001", "led-0002"}
    p5 = response.json()["totals"]["by_type"][0]
    assert (p5["used"], p5["quota"]) == (12, 24)  # B's quota and clusters do not count
    api.force_authenticate(world.lead_b)
    body = api.get(reverse("review-api:overview")).content.decode()
    assert MARKER_A not in body and "led-0000" not in body


@pytest.mark.parametrize("role", ["customer_a", "customer_b"])
def test_customers_are_refused(world, api, role):
    api.force_authenticate(getattr(world, role))
    assert api.get(reverse("review-api:overview")).status_code == 403


def test_overview_api_query_count_does_not_grow(world, api):
    api.force_authenticate(world.pm)
    assert_flat_queries(api, reverse("review-api:overview"), grow=grow_program(), sizes=(12, 120))


def test_frozen_reviews_for_program_managers_only(world, api):
    first = services.freeze(world.pm, now=timezone.now() - datetime.timedelta(weeks=1))
    ActionItem.objects.create(review=first, title="open item", owner=world.lead_a)
    program(1, prefix="new")
    second = services.freeze(world.pm, notes="second")
    api.force_authenticate(world.pm)
    listing = api.get(reverse("review-api:weeklyreview-list")).json()
    results = listing["results"] if isinstance(listing, dict) else listing
    assert [r["week_start"] for r in results] == [second.week_start.isoformat(), first.week_start.isoformat()]
    assert results[0]["action_items"][0]["title"] == "open item"  # carried over
    detail = api.get(reverse("review-api:weeklyreview-detail", kwargs={"pk": second.pk})).json()
    assert detail["notes"] == "second"
    assert {"label": "New 0000: clusters", "before": 0, "after": 3, "delta": 3} in detail["changes"]
    for role in ("lead_a", "customer_a"):
        api.force_authenticate(getattr(world, role))
        listing = api.get(reverse("review-api:weeklyreview-list")).json()
        assert (listing["results"] if isinstance(listing, dict) else listing) == []
        assert api.get(reverse("review-api:weeklyreview-detail", kwargs={"pk": second.pk})).status_code == 404


def test_endpoints_are_in_the_schema(world, client):
    client.force_login(world.pm)
    schema = client.get(reverse("api-schema")).content.decode()
    assert "/api/review/overview/" in schema and "/api/review/reviews/{id}/" in schema
    assert "Overview" in schema


def test_api_root_lists_the_overview_and_its_schema_is_one_object(world, client):
    import yaml

    client.force_login(world.pm)
    root = client.get(reverse("review-api:api-root")).json()
    assert set(root) == {"overview", "reviews"} and root["overview"].endswith("/api/review/overview/")
    schema = yaml.safe_load(client.get(reverse("api-schema")).content)
    ok = schema["paths"]["/api/review/overview/"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/Overview"}
