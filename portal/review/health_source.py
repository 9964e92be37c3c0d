"""Health and validation figures, read from the health app's models (GpuFault, ValidationRun, HealthReport).

Kept apart from figures.py because those models land separately; ``figures`` returns ``None`` (no figures,
never a guess) when the fields it reads are not there.
"""
from __future__ import annotations

import datetime

from django.db.models import Count, Q

CHART_WEEKS = 12


def _fields(model) -> set[str]:
    return {f.name for f in model._meta.get_fields()} if model is not None else set()


def figures(scope, GpuFault, ValidationRun, HealthReport) -> dict | None:
    from portal.review.figures import _at

    fault_fields, run_fields = _fields(GpuFault), _fields(ValidationRun)
    if not {"cluster", "first_seen"} <= fault_fields or not {"cluster", "verdict"} <= run_fields:
        return None
    faults = GpuFault.objects.restrict(scope.user)
    starts = [_at(scope.week_start - datetime.timedelta(weeks=CHART_WEEKS - 1 - i)) for i in range(CHART_WEEKS)]
    per_week_q = {
        f"w{i}": Count("id", filter=Q(first_seen__gte=start, first_seen__lt=start + datetime.timedelta(weeks=1)))
        for i, start in enumerate(starts)
    }
    agg = faults.aggregate(week=Count("id", filter=Q(first_seen__gte=scope.week_start_at)), **per_week_q)
    per_week = [{"week": start.date().isoformat(), "faults": agg[f"w{i}"]} for i, start in enumerate(starts)]
    by_org: dict[int, dict] = {}
    open_faults = Q(cleared_at__isnull=True) if "cleared_at" in fault_fields else Q()
    for r in faults.filter(open_faults).values("cluster__organization_id").annotate(n=Count("id")).order_by():
        by_org.setdefault(r["cluster__organization_id"], {})["open_faults"] = r["n"]
    runs = ValidationRun.objects.restrict(scope.user)
    validated = 0
    for r in runs.values("cluster__organization_id").annotate(
        passed=Count("cluster", filter=Q(verdict="pass"), distinct=True),
        failed=Count("cluster", filter=~Q(verdict="pass"), distinct=True),
    ).order_by():
        entry = by_org.setdefault(r["cluster__organization_id"], {})
        entry["validation"] = f"{r['passed']} passed" + (f", {r['failed']} not passed" if r["failed"] else "")
        validated += r["passed"]
    for entry in by_org.values():
        n = entry.get("open_faults", 0)
        entry["verdict"] = f"{n} open fault{'s' if n != 1 else ''}" if n else "healthy"
    return {"available": True, "by_org": by_org, "per_week": per_week, "week_faults": agg["week"],
            "validated_clusters": validated}
