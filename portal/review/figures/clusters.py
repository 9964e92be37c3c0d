"""Clusters by state per organization, launches per day, this week's launches and failures (three queries), of
the active program cycle."""
from __future__ import annotations

import datetime
from collections import defaultdict

from django.db.models import Count, Q
from django.db.models.functions import TruncDate

from clusters.models import Cluster
from portal.core.cycle_filter import in_active_cycle
from portal.review.figures.scope import CHART_DAYS, Scope, at


def cluster_figures(scope: Scope) -> dict:
    """Clusters by state per organization; launches per day; this week's launches and failures. A past cycle's
    clusters are its history (browsable on the cluster list with ``?cycle=``), not the program's state."""
    qs = in_active_cycle(Cluster.objects.restrict(scope.user))
    by_org: dict[int, dict[str, int]] = defaultdict(dict)
    states: dict[str, int] = defaultdict(int)
    for r in qs.values("organization_id", "state").annotate(n=Count("id")).order_by():
        by_org[r["organization_id"]][r["state"]] = r["n"]
        states[r["state"]] += r["n"]
    first_day = scope.today - datetime.timedelta(days=CHART_DAYS - 1)
    daily = {r["day"]: r for r in qs.filter(created__gte=at(first_day)).annotate(day=TruncDate("created"))
             .values("day").annotate(n=Count("id"), failed=Count("id", filter=Q(state="failed"))).order_by()}
    per_day = []
    for i in range(CHART_DAYS):
        day = first_day + datetime.timedelta(days=i)
        r = daily.get(day, {})
        per_day.append({"day": day.isoformat(), "launches": r.get("n", 0), "failed": r.get("failed", 0)})
    week = qs.aggregate(
        launches=Count("id", filter=Q(created__gte=scope.week_start_at)),
        failures=Count("id", filter=Q(state="failed", updated__gte=scope.week_start_at)),
    )
    return {
        "by_org": dict(by_org),
        "states": dict(states),
        "per_day": per_day,
        "week_launches": week["launches"],
        "week_failures": week["failures"],
        "in_flight": states.get("scheduled", 0) + states.get("creating", 0),
    }
