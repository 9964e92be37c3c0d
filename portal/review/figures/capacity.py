"""Accelerator-hours per organization and for the program over the window, week by week (the GPU-hours
waterfall: reserved → held → healthy → busy, goodput = busy ÷ reserved), and the idle capacity list, read from
the stored figures of ``clusters.accounting``, and the reservations whose last check with AWS is flagged (eleven
queries whatever the number of organizations)."""
from __future__ import annotations

import datetime

from django.db.models import Q
from django.utils import timezone

from clusters.accounting import forecast, idle, reservation_checks, services
from portal.core.choices import CycleStatus
from portal.core.models import CycleParticipation, Organization
from portal.review.figures.scope import Scope, iso
from workloads import spend

COLUMNS = ("reserved", "held", "healthy", "busy")


def capacity_figures(scope: Scope) -> dict:
    """Per organization its window's figures and its forecast; the program's, over the window and week by
    week; the clusters idle now.

    The window counts every organization that took part in it: one that left when the next cycle started is
    still in the days it was there (``departed``, rows of their own), so starting a cycle does not change the
    past. Every row shown (hours reserved or held, or a cost) is in the program's total, and only those. The
    cost is Cost Explorer's days in the window, named (``cost_from`` .. ``cost_to``), and the cost per busy
    GPU-hour divides it by the busy hours of those same days, never by a longer window's."""
    start = services.midnight(scope.today - datetime.timedelta(days=scope.window - 1))
    first_day = timezone.localtime(start).date()
    departed = departed_rows(scope, first_day)
    in_window = [*scope.org_ids, *(d["id"] for d in departed)]
    ids = None if scope.every_org else in_window
    in_scope = set(in_window)
    per_org = {oid: f for oid, f in services.organization_figures(ids, start, scope.now).items() if oid in in_scope}
    ahead = forecast_of(scope)
    # Cost Explorer's days in the window (today included, as the accelerator-hours are).
    cost = spend.cost_by_organization_day(in_window, first_day, scope.today + datetime.timedelta(days=1))
    busy = services.busy_by_day(list(cost), first_day, scope.today) if cost else {}
    program_cost, program_busy, cost_days = 0.0, 0.0, set()
    for oid, by_day in cost.items():
        figures = per_org.setdefault(oid, {})
        busy_then = sum(hours for day, hours in busy.get(oid, {}).items() if day in by_day)
        figures.update(cost_of(by_day, busy_then))
        program_cost += figures["cost_usd"]
        program_busy += busy_then
        cost_days.update(by_day)
    flagged = [{"organization_id": c.organization_id, "organization": c.organization.name,
                "reservation_id": c.reservation.reservation_id, "aws_in_use": c.aws_in_use, "aws_total": c.aws_total,
                "portal_held": c.portal_held, "checked_at": iso(c.checked_at)}
               for c in reservation_checks.flagged(in_window, scope.today)]
    for row in flagged:
        figures = per_org.setdefault(row["organization_id"], {})
        figures["reservations_flagged"] = figures.get("reservations_flagged", 0) + 1
    program = {**services.total({oid: f for oid, f in per_org.items() if "held" in f}),
               "cost_usd": round(program_cost, 2),
               "cost_per_busy_gpu_hour": round(program_cost / program_busy, 4) if program_busy else None,
               "cost_from": iso(min(cost_days)) if cost_days else None,
               "cost_to": iso(max(cost_days)) if cost_days else None}
    for row in departed:
        row.update(organization_columns(per_org.get(row["id"])))
    return {
        "by_org": per_org,
        "departed": [row for row in departed if shown(row)],
        "forecast": ahead,
        "program": program,
        "per_week": program_weeks(scope),
        "flagged": flagged,
        "window_start": iso(first_day),
        "idle": idle_clusters(scope),
    }


def cost_of(by_day: dict, busy_then: float) -> dict:
    """An organization's cost over the days Cost Explorer reported, which days, and per busy GPU-hour of those
    days."""
    total = float(sum(by_day.values()))
    return {"cost_usd": round(total, 2), "cost_from": iso(min(by_day)), "cost_to": iso(max(by_day)),
            "cost_per_busy_gpu_hour": round(total / busy_then, 4) if busy_then else None}


def shown(row: dict) -> bool:
    """Whether the accelerator-hours table shows an organization's row: it reserved or held some, or it cost
    something (the program's total is the sum of exactly these rows)."""
    return bool(row.get("gpu_hours_reserved") or row.get("gpu_hours_held") or row.get("cost_usd"))


def departed_rows(scope: Scope, first_day: datetime.date) -> list[dict]:
    """The organizations the user may view that are not in the live program any more but took part in a cycle
    that overlapped the window (one query)."""
    live = set(scope.org_ids)
    overlapping = (CycleParticipation.objects.exclude(cycle__status=CycleStatus.PLANNED)
                   .filter(Q(cycle__ends_on__isnull=True) | Q(cycle__ends_on__gte=first_day))
                   .filter(Q(cycle__starts_on__isnull=True) | Q(cycle__starts_on__lte=scope.today))
                   .values("organization_id"))
    rows = Organization.objects.restrict(scope.user).filter(pk__in=overlapping).order_by("name").values("id", "name", "slug")
    return [{**row, "departed": True} for row in rows if row["id"] not in live]


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
            "cost_from": figures.get("cost_from"), "cost_to": figures.get("cost_to"),
            "reservations_flagged": figures.get("reservations_flagged", 0)}
