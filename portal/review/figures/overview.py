"""The whole program overview: the organizations' rows and every source's figures, as JSON values.

The same dictionary renders the live overview, is stored as a frozen weekly review and is served by the API.
No source loops over organizations with queries: the number of queries is the same for 12 or 1,200
organizations (asserted in tests/review/test_review_overview.py).
"""
from __future__ import annotations

import datetime

from django.utils import timezone

from portal.engagement import cycles
from portal.engagement import outcomes as engagement_outcomes
from portal.review.figures.capacity import capacity_figures, forecast_of, idle_clusters, organization_columns, program_weeks
from portal.review.figures.clusters import cluster_figures
from portal.review.figures.health import health_figures
from portal.review.figures.interactions import SEVERITIES, heatmap, interaction_figures, lessons, outstanding
from portal.review.figures.organizations import lead_names, organization_rows, workload_names
from portal.review.figures.quotas import quota_figures
from portal.review.figures.remediation import remediation_figures
from portal.review.figures.scope import DEFAULT_WINDOW, Scope

# The figure families of the overview, each a function of the Scope returning JSON values.
SOURCES = {
    "clusters": cluster_figures,
    "quotas": quota_figures,
    "interactions": interaction_figures,
    "health": health_figures,
    "capacity": capacity_figures,
    "remediation": remediation_figures,
}


def overview(user, *, window: int = DEFAULT_WINDOW, now: datetime.datetime | None = None) -> dict:
    """Every figure of the program overview, as JSON values, for the rows ``user`` may view."""
    scope = Scope(user=user, now=now or timezone.now(), window=window)
    active_cycle = cycles.active()
    org_rows = organization_rows(scope)
    leads = lead_names(scope)
    workloads = workload_names(scope)
    found = {name: source(scope) for name, source in SOURCES.items()}
    clusters, quotas, interactions, health = (found[n] for n in ("clusters", "quotas", "interactions", "health"))
    organizations = []
    for org in org_rows:
        oid = org["id"]
        inter = interactions["by_org"].get(oid, {})
        quota = quotas["by_org"].get(oid, {"used": 0, "total": 0})
        org_health = health["by_org"].get(oid, {})
        organizations.append({
            **org,
            "workloads": workloads.get(oid, []),
            "leads": leads.get(oid, []),
            "clusters": clusters["by_org"].get(oid, {}),
            "clusters_total": sum(clusters["by_org"].get(oid, {}).values()),
            "health": org_health.get("verdict"),
            "validation": org_health.get("validation"),
            # What the two sentences above say, kept so a frozen week reads in each reader's language (texts.py).
            "health_facts": org_health.get("health_facts"),
            "validation_facts": org_health.get("validation_facts"),
            "open": inter.get("open", {s: 0 for s in SEVERITIES}),
            "open_total": inter.get("open_total", 0),
            "oldest_open_days": inter.get("oldest_open_days"),
            "last_contact": inter.get("last_contact"),
            "quota_used": quota["used"],
            "quota_total": quota["total"],
            "expiring": quotas["expiring"].get(oid, {"count": 0, "next": None}),
            **organization_columns(found["capacity"]["by_org"].get(oid)),
            "forecast": found["capacity"]["forecast"].get(oid),
        })
    return {
        "generated_at": scope.now.isoformat(),
        "week_start": scope.week_start.isoformat(),
        "window": scope.window,
        "organizations": organizations,
        "totals": {
            "by_type": quotas["by_type"],
            "clusters": clusters["states"],
            "launches_in_flight": clusters["in_flight"],
            "validated_clusters": health["validated_clusters"],
            "organizations": len(org_rows),
            "remediation_fault_to_healthy_hours": found["remediation"]["week"]["fault_to_healthy_hours"],
        },
        "week": {
            **interactions["week"],
            "launches": clusters["week_launches"],
            "failures": clusters["week_failures"],
            "faults": health["week_faults"],
            "remediations": found["remediation"]["week"]["proposed"],
            "remediations_healed": found["remediation"]["week"]["healed"],
        },
        "heatmap": heatmap(scope, org_rows),
        "outstanding": outstanding(scope),
        "lessons": lessons(scope),
        # The active cycle's outcomes only (a row never mixes two cycles' milestones), named on the page.
        "outcomes": engagement_outcomes.figures(scope.user),
        "outcomes_cycle": str(active_cycle or ""),
        # Accelerator-hours: the program's waterfall over the window and per week, and the idle clusters.
        "capacity": {key: found["capacity"][key] for key in ("program", "per_week", "window_start", "idle", "flagged", "departed")},
        "charts": {
            "open_per_week": interactions["per_week"],
            "launches_per_day": clusters["per_day"],
            "quota_by_type": quotas["by_type"],
            "faults_per_week": health["per_week"],
        },
    }


def _capacity_table(scope: Scope, org_rows: list[dict]) -> dict:
    return {"capacity": {"per_week": program_weeks(scope)}}


def _idle_table(scope: Scope, org_rows: list[dict]) -> dict:
    return {"capacity": {"idle": idle_clusters(scope)}}


def _forecast_table(scope: Scope, org_rows: list[dict]) -> dict:
    ahead = forecast_of(scope)
    return {"organizations": [{"name": org["name"], "forecast": ahead.get(org["id"])} for org in org_rows]}


# Tables (``portal.review.exports.TABLES``) whose CSV needs one source only: each computes the figures its table
# reads, in the shape :func:`overview` gives them, and nothing else (the capacity table has twelve rows whatever
# the program's size: only the organizations' list and their reservations' hours grow with it).
TABLE_FIGURES = {"capacity": _capacity_table, "idle": _idle_table, "forecast": _forecast_table}


def table_figures(user, table: str, *, window: int = DEFAULT_WINDOW, now: datetime.datetime | None = None) -> dict:
    """The figures the export of ``table`` reads: for the tables of ``TABLE_FIGURES`` theirs alone, for the
    others the whole overview. Either way the table's rows are those of :func:`overview`'s."""
    if table not in TABLE_FIGURES:
        return overview(user, window=window, now=now)
    scope = Scope(user=user, now=now or timezone.now(), window=window)
    return TABLE_FIGURES[table](scope, organization_rows(scope))
