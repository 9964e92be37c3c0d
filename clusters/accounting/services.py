"""Writing the stored accelerator-hours (upsert per key, roll-up per day) and reading them per organization and
cluster for a window, with the GPU-hours reserved from the reservations in force and the losses named."""
from __future__ import annotations

import datetime
import functools
import zoneinfo
from collections import defaultdict
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from clusters.accounting.compute import HOUR, accelerators_per_node, compute, floor_hour, q
from clusters.accounting.models import AcceleratorUsage, Granularity, OrganizationDay
from portal.core import locks
from workloads.models import CapacityReservation

FIGURES = ("held", "healthy", "busy", "measured")
ZERO = Decimal(0)


def hourly_cutoff(now: datetime.datetime | None = None) -> datetime.datetime:
    """Hourly rows older than this (a program midnight ``ACCOUNTING_HOURLY_WEEKS`` back) are rolled up per day."""
    today = timezone.localdate(now or timezone.now())
    return midnight(today - datetime.timedelta(weeks=settings.ACCOUNTING_HOURLY_WEEKS))


def midnight(day: datetime.date) -> datetime.datetime:
    """The program midnight starting ``day`` (cached: the review asks for the same few hundred days thousands of
    times, and each time zone conversion costs)."""
    return _midnight(day, timezone.get_current_timezone_name())


@functools.lru_cache(maxsize=4096)
def _midnight(day: datetime.date, zone: str) -> datetime.datetime:
    return datetime.datetime.combine(day, datetime.time.min, tzinfo=zoneinfo.ZoneInfo(zone))


def store(start: datetime.datetime, end: datetime.datetime, cluster_ids=None) -> int:
    """Compute the closed hours in [start, end) and upsert one row per (cluster, hour): running it again, or
    twice at once, leaves the same rows (``INSERT … ON CONFLICT DO UPDATE``, keys in one order). A range reaching
    into the rolled-up weeks is widened to whole program days and rolled up again. Returns the rows written."""
    end = min(end, floor_hour(timezone.now()))
    cutoff = hourly_cutoff()
    if start < cutoff:
        start = midnight(timezone.localtime(start).date())
        end = max(end, min(cutoff, midnight(timezone.localtime(end).date() + datetime.timedelta(days=1))))
    rows = [AcceleratorUsage(cluster_id=f.cluster_id, organization_id=f.organization_id, start=f.start,
                             granularity=Granularity.HOUR, held=f.held, healthy=f.healthy, busy=f.busy,
                             measured=f.measured, reports=f.reports)
            for f in sorted(compute(start, end, cluster_ids), key=lambda f: (f.cluster_id, f.start))]
    with transaction.atomic():
        AcceleratorUsage.objects.bulk_create(
            rows, batch_size=2000, update_conflicts=True, unique_fields=["cluster", "start"],
            update_fields=["organization", "granularity", "held", "healthy", "busy", "measured", "reports",
                           "computed_at"])
    if start < cutoff:
        roll_up()
    summarize(timezone.localtime(start).date(), timezone.localtime(end - datetime.timedelta(microseconds=1)).date())
    return len(rows)


def summarize(first: datetime.date, last: datetime.date) -> int:
    """Recompute the organizations' day rows of the program days ``first`` .. ``last`` from the clusters' rows,
    under one lock (a second run waits, then recomputes from what the first committed)."""
    tz = timezone.get_current_timezone()
    with transaction.atomic():
        locks.hold("accounting", "days")
        sums = (AcceleratorUsage.objects.filter(start__gte=midnight(first),
                                                start__lt=midnight(last + datetime.timedelta(days=1)))
                .annotate(day=TruncDate("start", tzinfo=tz))
                .values("organization_id", "cluster__instance_type", "day")
                .annotate(**{f: Sum(f) for f in FIGURES}).order_by("organization_id", "cluster__instance_type", "day"))
        rows = [OrganizationDay(organization_id=r["organization_id"], instance_type=r["cluster__instance_type"],
                                day=r["day"], **{f: r[f] for f in FIGURES}) for r in sums]
        OrganizationDay.objects.filter(day__gte=first, day__lte=last).delete()
        OrganizationDay.objects.bulk_create(rows, batch_size=5000)
    return len(rows)


def roll_up(now: datetime.datetime | None = None) -> int:
    """Sum the hourly rows older than the cutoff into one row per (cluster, program day), replacing that day's
    row, and delete them. Under one lock: a second roll-up waits and then finds nothing left to sum."""
    cutoff = hourly_cutoff(now)
    with transaction.atomic():
        locks.hold("accounting", "roll-up")
        old = AcceleratorUsage.objects.filter(granularity=Granularity.HOUR, start__lt=cutoff)
        sums = (old.annotate(day=TruncDate("start", tzinfo=timezone.get_current_timezone()))
                .values("cluster_id", "organization_id", "day")
                .annotate(**{f: Sum(f) for f in FIGURES}, n=Sum("reports")).order_by("cluster_id", "day"))
        rows = [AcceleratorUsage(cluster_id=r["cluster_id"], organization_id=r["organization_id"],
                                 start=midnight(r["day"]), granularity=Granularity.DAY,
                                 reports=r["n"], **{f: r[f] for f in FIGURES}) for r in sums]
        old.delete()
        AcceleratorUsage.objects.bulk_create(
            rows, batch_size=2000, update_conflicts=True, unique_fields=["cluster", "start"],
            update_fields=["organization", "granularity", *FIGURES, "reports", "computed_at"])
    return len(rows)


def catch_up(now: datetime.datetime | None = None) -> int:
    """The hourly task: the last ``ACCOUNTING_RECOMPUTE_HOURS`` closed hours again (late reports count), then
    the roll-up."""
    end = floor_hour(now or timezone.now())
    written = store(end - HOUR * settings.ACCOUNTING_RECOMPUTE_HOURS, end)
    roll_up(now)
    return written


def _empty() -> dict:
    return {"reserved": ZERO, "held": ZERO, "healthy": ZERO, "busy": ZERO, "measured": ZERO}


def reserved_spans(reservations) -> list[tuple[datetime.datetime, datetime.datetime, Decimal]]:
    """``reservations`` (dicts of count, instance type, start and end dates) as (from, until, accelerators): in
    force from the start day's program midnight to the end day's last second."""
    zone = timezone.get_current_timezone_name()
    return [(_midnight(r["start"], zone), _midnight(r["end"] + datetime.timedelta(days=1), zone),
             Decimal(r["count"] * accelerators_per_node(r["instance_type_name"]))) for r in reservations]


def reserved_hours(reservations, start: datetime.datetime, end: datetime.datetime, *, spans=None) -> Decimal:
    """Accelerator-hours of ``reservations`` (or of their ``spans``, made once by :func:`reserved_spans` when the
    same reservations are asked about many windows) that fall in [start, end)."""
    total = ZERO
    for a, b, accelerators in reserved_spans(reservations) if spans is None else spans:
        a, b = max(start, a), min(end, b)
        if b > a:
            total += accelerators * Decimal((b - a).total_seconds())
    return q(total / Decimal(3600))


def with_losses(figures: dict) -> dict:
    """The figures (Decimals) as floats with the losses named and goodput (busy ÷ reserved)."""
    reserved, held, healthy, busy = (figures[k] for k in ("reserved", "held", "healthy", "busy"))
    return {
        "reserved": float(reserved), "held": float(held), "healthy": float(healthy), "busy": float(busy),
        "measured": float(figures["measured"]),
        "lost_unheld": float(max(ZERO, reserved - held)),
        "lost_unhealthy": float(held - healthy),
        "lost_idle": float(healthy - busy),
        "goodput": round(float(busy / reserved), 4) if reserved else None,
        "busy_share": round(float(busy / healthy), 4) if healthy else None,
    }


def organization_figures(organization_ids, start: datetime.datetime, end: datetime.datetime) -> dict:
    """Per organization, accelerator-hours reserved, held, healthy and busy in the program days from ``start``'s
    to ``end``'s (reserved up to ``end``), with the losses. Two queries on the day rows whatever the number of
    organizations: ``organization_ids`` None means every organization."""
    days, reservations = _restricted(organization_ids)
    first_day, last_day = timezone.localtime(start).date(), timezone.localtime(end).date()
    start = midnight(first_day)
    found: dict[int, dict] = defaultdict(_empty)
    for r in (days.filter(day__gte=first_day, day__lte=last_day).values("organization_id")
              .annotate(**{f: Sum(f) for f in FIGURES}).order_by()):
        found[r["organization_id"]].update({f: r[f] for f in FIGURES})
    by_org = _reservations_by_org(reservations, start, end)
    result = {}
    for oid in set(found) | set(by_org):
        figures = found[oid]
        figures["reserved"] = reserved_hours(None, start, end, spans=reserved_spans(by_org.get(oid, [])))
        result[oid] = with_losses(figures)
    return result


def busy_by_day(organization_ids, first: datetime.date, last: datetime.date) -> dict[int, dict[datetime.date, float]]:
    """Each organization's busy accelerator-hours per program day from ``first`` to ``last`` (one query): what a
    cost known for some days only is divided by."""
    days, _ = _restricted(organization_ids)
    found: dict[int, dict[datetime.date, float]] = defaultdict(dict)
    for r in (days.filter(day__gte=first, day__lte=last).values("organization_id", "day")
              .annotate(busy=Sum("busy")).order_by()):
        found[r["organization_id"]][r["day"]] = float(r["busy"])
    return dict(found)


def program_weeks(organization_ids, weeks: list[datetime.date], end: datetime.datetime) -> list[dict]:
    """The program's figures week by week (``weeks``, their Mondays; the last one up to ``end``), summed over
    the organizations ``organization_ids`` (None: every one), with the losses and goodput of the sums.

    Two queries and no per-organization figures: the day rows are summed per program day in the database (a
    dozen weeks are some eighty rows whatever the program's size), and only the reserved hours are worked out per
    organization (each organization's rounded to four places, as its own figures are) from its reservations'
    spans, made once."""
    if not weeks:
        return []
    days, reservations = _restricted(organization_ids)
    sums = {w: _empty() for w in weeks}
    for r in (days.filter(day__gte=min(weeks), day__lte=timezone.localtime(end).date()).values("day")
              .annotate(**{f: Sum(f) for f in FIGURES}).order_by()):
        week = r["day"] - datetime.timedelta(days=r["day"].weekday())  # the program's weeks start on Monday
        if week in sums:
            for f in FIGURES:
                sums[week][f] += r[f]
    bounds = [(w, midnight(w), min(end, midnight(w + datetime.timedelta(days=7)))) for w in weeks]
    for rows in _reservations_by_org(reservations, bounds[0][1], end).values():
        spans = reserved_spans(rows)
        for w, week_start, week_end in bounds:
            sums[w]["reserved"] += reserved_hours(None, week_start, week_end, spans=spans)
    return [{"week": w.isoformat(), **with_losses(sums[w])} for w in weeks]


def _restricted(organization_ids):
    days = OrganizationDay.objects.all()
    reservations = CapacityReservation.objects.all()
    if organization_ids is not None:
        days = days.filter(organization_id__in=list(organization_ids))
        reservations = reservations.filter(organization_id__in=list(organization_ids))
    return days, reservations


def _reservations_by_org(reservations, start: datetime.datetime, end: datetime.datetime) -> dict[int, list]:
    """The reservations in force some day from ``start``'s to ``end``'s, per organization (one query)."""
    by_org: dict[int, list] = defaultdict(list)
    for r in reservations.filter(start__lte=timezone.localtime(end).date(),
                                 end__gte=timezone.localtime(start).date()).values(
            "organization_id", "count", "instance_type_name", "start", "end"):
        by_org[r["organization_id"]].append(r)
    return by_org


def cluster_figures(cluster_ids, start: datetime.datetime, end: datetime.datetime) -> dict[int, dict]:
    """Per cluster, accelerator-hours held, healthy and busy in [start, end) (one query)."""
    rows = (AcceleratorUsage.objects.filter(cluster_id__in=list(cluster_ids), start__gte=start, start__lt=end)
            .values("cluster_id").annotate(**{f: Sum(f) for f in FIGURES}, hours=Count("pk", filter=Q(
                granularity=Granularity.HOUR))).order_by())
    return {r["cluster_id"]: with_losses({"reserved": ZERO, **{f: r[f] for f in FIGURES}}) for r in rows}


def total(per_org: dict) -> dict:
    """The program's figures: the organizations' summed, goodput recomputed."""
    sums = _empty()
    for figures in per_org.values():
        for f in ("reserved", "held", "healthy", "busy", "measured"):
            sums[f] += Decimal(str(figures[f]))
    return with_losses(sums)
