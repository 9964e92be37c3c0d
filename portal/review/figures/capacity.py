"""Accelerator-hours per organization and for the program over the window, week by week (the GPU-hours
waterfall: reserved → held → healthy → busy, goodput = busy ÷ reserved), and the idle capacity list, read from
the stored figures of ``clusters.accounting``, and the reservations whose last check with AWS is flagged (nine
queries whatever the number of organizations)."""
from __future__ import annotations

import datetime

from django.utils import timezone

from clusters.accounting import forecast, idle, reservation_checks, services
from portal.review.figures.scope import Scope, iso
from workloads import spend

COLUMNS = ("reserved", "held", "healthy", "busy")


def capacity_figures(scope: Scope) -> dict:
    """Per organization its window's figures and its forecast; the program's, over the window and week by
    week; the clusters idle now."""
    start = services.midnight(scope.today - datetime.timedelta(days=scope.window - 1))
    ids = None if scope.every_org else scope.org_ids
    in_scope = set(scope.org_ids)
    per_org = {oid: f for oid, f in services.organization_figures(ids, start, scope.now).items() if oid in in_scope}
    ahead = forecast_of(scope)
    # Cost Explorer's days in the window (today included, as the accelerator-hours are).
    cost = spend.cost_by_organization(scope.org_ids, timezone.localtime(start).date(),
                                      scope.today + datetime.timedelta(days=1))
    for oid in scope.org_ids:
        if oid in cost:
            figures = per_org.setdefault(oid, {})
            figures["cost_usd"] = float(cost[oid])
            busy = figures.get("busy") or 0.0
            figures["cost_per_busy_gpu_hour"] = round(float(cost[oid]) / busy, 4) if busy else None
    flagged = [{"organization_id": c.organization_id, "organization": c.organization.name,
                "reservation_id": c.reservation.reservation_id, "aws_in_use": c.aws_in_use, "aws_total": c.aws_total,
                "portal_held": c.portal_held, "checked_at": iso(c.checked_at)}
               for c in reservation_checks.flagged(scope.org_ids, scope.today)]
    for row in flagged:
        figures = per_org.setdefault(row["organization_id"], {})
        figures["reservations_flagged"] = figures.get("reservations_flagged", 0) + 1
    program = {**services.total({oid: f for oid, f in per_org.items() if "held" in f}),
               "cost_usd": float(sum(cost.values()))}
    program["cost_per_busy_gpu_hour"] = round(program["cost_usd"] / program["busy"], 4) if program["busy"] else None
    return {
        "by_org": per_org,
        "forecast": ahead,
        "program": program,
        "per_week": program_weeks(scope),
        "flagged": flagged,
        "window_start": iso(timezone.localtime(start).date()),
        "idle": idle_clusters(scope),
    }


def forecast_of(scope: Scope) -> dict[int, dict]:
    """The forecast of the organizations in scope (two queries)."""
    in_scope = set(scope.org_ids)
    ahead = forecast.forecast(None if scope.every_org else scope.org_ids, scope.now)
    return {oid: f for oid, f in ahead.items() if oid in in_scope}


def idle_clusters(scope: Scope) -> list[dict]:
    """The clusters idle now in the organizations in scope (one query)."""
    in_scope = set(scope.org_ids)
    return [{"organization": n.organization.name, "cluster": n.cluster.name, "cluster_id": n.cluster_id,
             "since": iso(n.since), "lost": float(n.lost)}
            for n in idle.open_notices(None if scope.every_org else scope.org_ids) if n.organization_id in in_scope]


def program_weeks(scope: Scope) -> list[dict]:
    """The program's figures in each of the chart's weeks (two queries)."""
    return services.program_weeks(scope.org_ids, scope.chart_mondays, scope.now)


def organization_columns(figures: dict | None) -> dict:
    """The organization row's numbers (zeros where nothing was reserved or held)."""
    figures = figures or {}
    return {**{f"gpu_hours_{key}": figures.get(key, 0.0) for key in COLUMNS}, "goodput": figures.get("goodput"),
            "cost_usd": figures.get("cost_usd"), "cost_per_busy_gpu_hour": figures.get("cost_per_busy_gpu_hour"),
            "reservations_flagged": figures.get("reservations_flagged", 0)}
