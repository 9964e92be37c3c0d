"""Accelerator-hours per organization and for the program over the window, week by week (the GPU-hours
waterfall: reserved → held → healthy → busy, goodput = busy ÷ reserved), and the idle capacity list, read from
the stored figures of ``clusters.accounting`` (seven queries whatever the number of organizations)."""
from __future__ import annotations

import datetime

from django.utils import timezone

from clusters.accounting import forecast, idle, services
from portal.review.figures.scope import Scope, iso

COLUMNS = ("reserved", "held", "healthy", "busy")


def capacity_figures(scope: Scope) -> dict:
    """Per organization its window's figures and weeks, and its forecast; the program's; the clusters idle
    now."""
    start = services.midnight(scope.today - datetime.timedelta(days=scope.window - 1))
    ids = None if scope.every_org else scope.org_ids
    per_org = services.organization_figures(ids, start, scope.now, weeks=scope.chart_mondays)
    per_org = {oid: f for oid, f in per_org.items() if oid in set(scope.org_ids)}
    weeks = []
    for i, monday in enumerate(scope.chart_mondays):
        week = services.total({oid: f["weeks"][i] for oid, f in per_org.items()})
        weeks.append({"week": monday.isoformat(), **week})
    notices = idle.open_notices(ids)
    ahead = forecast.forecast(ids, scope.now)
    return {
        "by_org": per_org,
        "forecast": {oid: f for oid, f in ahead.items() if oid in set(scope.org_ids)},
        "program": services.total(per_org),
        "per_week": weeks,
        "window_start": iso(timezone.localtime(start).date()),
        "idle": [{"organization": n.organization.name, "cluster": n.cluster.name, "cluster_id": n.cluster_id,
                  "since": iso(n.since), "lost": float(n.lost)} for n in notices if n.organization_id in scope.org_ids],
    }


def organization_columns(figures: dict | None) -> dict:
    """The organization row's numbers (zeros where nothing was reserved or held)."""
    figures = figures or {}
    return {**{f"gpu_hours_{key}": figures.get(key, 0.0) for key in COLUMNS}, "goodput": figures.get("goodput")}
