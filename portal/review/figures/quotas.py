"""Quota used of total per organization and per instance type; the active cycle's reservations ending within 14
days."""
from __future__ import annotations

import datetime
from collections import defaultdict

from django.db.models import Count, Min

from portal.core.cycle_filter import in_active_cycle
from portal.review.figures.scope import Scope, iso
from workloads import usage
from workloads.models import CapacityReservation, InstanceQuota

EXPIRY_DAYS = 14


def quota_figures(scope: Scope) -> dict:
    """Quota used of total per organization and per instance type; reservations ending within 14 days."""
    quotas = usage.quota_totals(InstanceQuota.objects.restrict(scope.user), scope.today)
    held = usage.held(None if scope.every_org else scope.org_ids)
    org_ids = set(scope.org_ids)
    by_org: dict[int, dict[str, int]] = defaultdict(lambda: {"used": 0, "total": 0})
    by_type: dict[str, dict] = {}
    type_orgs: dict[str, set[int]] = defaultdict(set)
    for key in set(quotas) | set(held):
        org_id, type_name, _region = key
        if org_id not in org_ids:
            continue
        quota, used = quotas.get(key, 0), held.get(key, 0)
        by_org[org_id]["used"] += used
        by_org[org_id]["total"] += quota
        t = by_type.setdefault(type_name, {"instance_type": type_name, "quota": 0, "used": 0, "organizations": 0})
        t["quota"] += quota
        t["used"] += used
        if quota:
            type_orgs[type_name].add(org_id)
    for name, t in by_type.items():
        t["organizations"] = len(type_orgs[name])
    last_day = scope.today + datetime.timedelta(days=EXPIRY_DAYS)
    expiring = {
        r["organization_id"]: {"count": r["n"], "next": iso(r["next"])}
        for r in in_active_cycle(CapacityReservation.objects.restrict(scope.user))
        .filter(end__gte=scope.today, end__lte=last_day)
        .values("organization_id").annotate(n=Count("id"), next=Min("end")).order_by()
    }
    return {
        "by_org": {k: dict(v) for k, v in by_org.items()},
        "by_type": sorted(by_type.values(), key=lambda t: t["instance_type"]),
        "expiring": expiring,
    }
