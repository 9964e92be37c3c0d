"""The program overview page: who may open it, what it shows, and a query count that does not grow."""
from __future__ import annotations

import pytest
from django.urls import reverse

from portal.review import figures
from tests.conftest import MARKER_A
from tests.queries import assert_flat_queries
from tests.review.factories_review import grow_program, program


@pytest.mark.parametrize("role", ["customer_a", "customer_b", "lead_a", "lead_b"])
def test_overview_is_for_program_managers_only(world, client, role):
    client.force_login(getattr(world, role))
    assert client.get(reverse("review:overview")).status_code == 403
    assert client.get(reverse("review:overview_csv", kwargs={"table": "organizations"})).status_code == 403
    assert client.get(reverse("review:review_list")).status_code == 403


@pytest.mark.parametrize("role", ["pm", "staff"])
def test_program_manager_and_staff_see_every_organization(world, client, role):
    program(3, prefix="extra")
    client.force_login(getattr(world, role))
    response = client.get(reverse("review:overview"))
    assert response.status_code == 200
    body = response.content.decode()
    assert MARKER_A in body and "Beta Works" in body and "Extra 0002" in body
    data = response.context["figures"]
    assert data["totals"]["organizations"] == 5


def test_overview_query_count_does_not_grow(world, client):
    """12 and 120 organizations (each with clusters, quotas, reservations and interactions): same count."""
    client.force_login(world.pm)
    url = reverse("review:overview")
    # 13 on clusters and quotas, +7 interactions (pre-aggregates and probes), +4 health, the rest outcomes, the
    # active cycle (its name heads the outcomes) and the navigation's pending quota requests, +11 accelerator-hours
    # (the window and its reservations, the organizations that left in it, the weeks and theirs, idle clusters,
    # forecast, cost per day and the busy hours of those days), +2 node remediation (the week's actions, the
    # fault-to-healthy mean), +1 the wind-down list (the archived cycles; then one per kind of live row when there
    # are some), +1 the flagged reservations: a fixed number, whatever the program's size.
    small, large = assert_flat_queries(client, url, grow=grow_program(), sizes=(12, 120), at_most=46)
    assert len(client.get(url).context["figures"]["organizations"]) == 122
    print(f"overview queries: {small} at 12 organizations, {large} at 120")


def test_organization_row_figures(world, client):
    orgs = program(2, clusters=4, prefix="row")
    client.force_login(world.pm)
    data = client.get(reverse("review:overview")).context["figures"]
    row = next(o for o in data["organizations"] if o["slug"] == orgs[0].slug)
    assert row["clusters"] == {"ready": 1, "creating": 1, "failed": 1, "deleted": 1}
    assert row["clusters_total"] == 4
    # Holding states: ready (2 nodes) and creating (2 nodes) count against the quota of 8.
    assert (row["quota_used"], row["quota_total"]) == (4, 8)
    assert row["expiring"]["count"] == 1
    p5 = next(t for t in data["totals"]["by_type"] if t["instance_type"] == "p5.48xlarge")
    assert (p5["used"], p5["quota"], p5["organizations"]) == (8, 16, 2)
    assert data["totals"]["launches_in_flight"] == 2
    assert data["week"]["launches"] == 8  # all created now
    assert data["week"]["failures"] == 2


def test_window_parameter_is_clamped(world, client):
    client.force_login(world.pm)
    assert client.get(reverse("review:overview"), {"window": "7"}).context["figures"]["window"] == 7
    assert client.get(reverse("review:overview"), {"window": "9999"}).context["figures"]["window"] == 365
    assert client.get(reverse("review:overview"), {"window": "x"}).context["figures"]["window"] == 28


def test_organizations_without_records_get_no_invented_numbers(world):
    data = figures.overview(world.pm)
    assert data["week"]["faults"] == 0 and all(w["faults"] == 0 for w in data["charts"]["faults_per_week"])
    assert all(o["health"] is None and o["validation"] is None for o in data["organizations"])  # never reported
    assert data["outstanding"] == [] and data["heatmap"]["rows"] == []
    assert "sources" not in data


def test_lead_scoped_figures_exclude_other_organizations(world):
    data = figures.overview(world.lead_b)
    assert [o["slug"] for o in data["organizations"]] == ["beta-works"]
    assert MARKER_A not in str(data)


def test_unknown_csv_table_is_404(world, client):
    client.force_login(world.pm)
    assert client.get(reverse("review:overview_csv", kwargs={"table": "nope"})).status_code == 404


def test_charts_carry_their_data_and_text_alternatives(world, client):
    import html
    import json
    import re

    program(1, prefix="chart", clusters=2)
    client.force_login(world.pm)
    body = client.get(reverse("review:overview")).content.decode()
    series = {m.group(1): json.loads(html.unescape(m.group(2)))
              for m in re.finditer(r'data-chart="([\w-]+)" data-series="([^"]*)"', body)}
    assert set(series) == {"open-per-week", "launches-per-day", "quota-by-type", "faults-per-week"}
    # Held: the ready and the creating cluster, 2 nodes each.
    assert len(series["launches-per-day"]) == 14 and series["launches-per-day"][-1]["launches"] == 2
    assert series["quota-by-type"] == [{"instance_type": "p5.48xlarge", "quota": 8, "used": 4, "organizations": 1}]
    assert body.count('role="img" aria-label=') == 4 and "static/js/review-charts.js" in body
