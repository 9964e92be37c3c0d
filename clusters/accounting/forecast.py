"""At the last two weeks' burn, what each reservation and quota in force will have delivered by its end, and
when the organization's allocation runs out.

"Delivered" is busy accelerator-hours (capacity that became training) of the organization's clusters of the
instance type, shared between its reservations (or quotas) of that type in force by their instance counts.
Quotas and reservations are instance counts over dates, and launches are refused past the quota, so an
allocation runs out on the last day of its last quota, or of its last reservation when that comes first
(nothing runs past the capacity reserved); the forecast says how much of it will
have been used by then. Two queries whatever the number of organizations: the busy hours are summed in the
database (a correlated subquery per reservation or quota on the day rows' index), not read day by day.
"""
from __future__ import annotations

import datetime
from collections import defaultdict
from decimal import Decimal

from django.db.models import CharField, DecimalField, F, OuterRef, Q, Subquery, Sum, Value
from django.db.models.expressions import Case, When
from django.db.models.functions import Coalesce, Concat, Substr
from django.utils import timezone

from clusters.accounting.compute import accelerators_per_node
from clusters.accounting.models import OrganizationDay
from clusters.accounting.services import midnight
from portal.core.cycle_filter import in_active_cycle
from workloads.models import CapacityReservation, InstanceQuota
from workloads.validators import base_instance_type

BURN_DAYS = 14
_DECIMAL = DecimalField(max_digits=20, decimal_places=4)


def _hours(start: datetime.date, end: datetime.date) -> Decimal:
    """Hours from ``start``'s program midnight to the end of ``end`` (dates are inclusive)."""
    return Decimal((midnight(end + datetime.timedelta(days=1)) - midnight(start)).total_seconds()) / 3600


def _busy_from(since) -> Coalesce:
    """The busy accelerator-hours of the outer row's organization and instance type (``ml.`` or not) from the
    day ``since`` (a date or an outer reference) on: a correlated subquery, summed in the database on the day
    rows' unique index (organization, instance type, day)."""
    days = (OrganizationDay.objects.filter(organization_id=OuterRef("organization_id"), day__gte=since)
            .filter(Q(instance_type=OuterRef("base_type")) | Q(instance_type=Concat(Value("ml."), OuterRef("base_type"))))
            .order_by().values("organization_id").annotate(total=Sum("busy")).values("total")[:1])
    return Coalesce(Subquery(days, output_field=_DECIMAL), Value(Decimal(0)), output_field=_DECIMAL)


def _rows(qs, burn_start: datetime.date, *extra: str) -> list[dict]:
    """Each row in force with the busy hours of its organization and type since its start and since
    ``burn_start`` (one query)."""
    return list(qs.annotate(
        base_type=Case(When(instance_type_name__startswith="ml.", then=Substr("instance_type_name", 4)),
                       default=F("instance_type_name"), output_field=CharField()),
    ).annotate(busy_since_start=_busy_from(OuterRef("start")), busy_burn=_busy_from(burn_start))
        .values("pk", "organization_id", "instance_type_name", "count", "start", "end", "busy_since_start",
                "busy_burn", *extra))


def forecast(organization_ids, now: datetime.datetime | None = None) -> dict[int, dict]:
    now = now or timezone.now()
    today = timezone.localdate(now)
    # In force today and of the active cycle (a reservation left in an archived cycle is not this cycle's to deliver).
    reservations = in_active_cycle(CapacityReservation.objects.filter(end__gte=today, start__lte=today))
    quotas = in_active_cycle(InstanceQuota.objects.filter(end__gte=today, start__lte=today))
    if organization_ids is not None:
        ids = list(organization_ids)
        reservations, quotas = (qs.filter(organization_id__in=ids) for qs in (reservations, quotas))
    burn_start = today - datetime.timedelta(days=BURN_DAYS)
    dated = [("reservation", r) for r in _rows(reservations, burn_start, "reservation_id")]
    dated += [("quota", r) for r in _rows(quotas, burn_start)]
    if not dated:
        return {}
    counts: dict[tuple[str, int, str], int] = defaultdict(int)
    for kind, r in dated:
        counts[(kind, r["organization_id"], base_instance_type(r["instance_type_name"]))] += r["count"]
    reserved_until: dict[tuple[int, str], datetime.date] = {}
    for kind, r in dated:
        key = (r["organization_id"], base_instance_type(r["instance_type_name"]))
        if kind == "reservation" and (key not in reserved_until or r["end"] > reserved_until[key]):
            reserved_until[key] = r["end"]
    elapsed = Decimal((now - midnight(today)).total_seconds()) / 3600
    found: dict[int, dict] = defaultdict(lambda: {"reservations": [], "quotas": [], "runs_out": None})
    for kind, r in dated:
        type_name = base_instance_type(r["instance_type_name"])
        key = (r["organization_id"], type_name)
        share = Decimal(r["count"]) / counts[(kind, *key)]
        delivered = share * r["busy_since_start"]
        burn = share * r["busy_burn"] / (BURN_DAYS * 24 + elapsed)
        # A quota burns only while reserved capacity of its type lasts (when there is any).
        horizon = min(r["end"], reserved_until.get(key, r["end"])) if kind == "quota" else r["end"]
        remaining = max(Decimal(0), _hours(today, horizon) - elapsed)
        allocated = r["count"] * accelerators_per_node(type_name) * _hours(r["start"], r["end"])
        by_end = min(Decimal(allocated), delivered + burn * remaining)
        entry = {"name": r.get("reservation_id") or f"{r['count']} × {r['instance_type_name']}",
                 "end": r["end"].isoformat(), "allocated": float(allocated), "delivered": round(float(delivered), 1),
                 "by_end": round(float(by_end), 1),
                 "share": round(float(by_end / allocated), 4) if allocated else None}
        org = found[r["organization_id"]]
        org["reservations" if kind == "reservation" else "quotas"].append(entry)
        if kind == "quota" and (org["runs_out"] is None or r["end"].isoformat() > org["runs_out"]):
            org["runs_out"] = r["end"].isoformat()
    for org in found.values():
        # Capacity ends with what is reserved: a quota allowed past the last reservation in force has nothing
        # to run on, so no forecast goes beyond the end of what is reserved or allowed, whichever comes first.
        if org["reservations"] and org["runs_out"] is not None:
            org["runs_out"] = min(org["runs_out"], max(e["end"] for e in org["reservations"]))
        org["reservations"].sort(key=lambda e: e["end"])
        org["quotas"].sort(key=lambda e: e["end"])
    return dict(found)
