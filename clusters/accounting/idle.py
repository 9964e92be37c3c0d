"""Idle capacity: a cluster whose healthy accelerators stay under its organization's idle share busy (default
``ACCOUNTING_IDLE_BUSY_SHARE``, 10 %) for its idle hours (default ``ACCOUNTING_IDLE_HOURS``, 24) closed hours in a
row while its organization has a reservation in force (``clusters.accounting.thresholds``). Its lead SAs
hear of it once per idle stretch (``portal.core.notifications``); the stretch's accelerator-hours lost (healthy but
idle) are kept up to date by every hourly run and listed on the lead home and in the weekly review."""
from __future__ import annotations

import datetime
from collections import defaultdict
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.utils import timezone

from clusters.accounting import thresholds
from clusters.accounting.compute import HOUR, floor_hour
from clusters.accounting.models import AcceleratorUsage, Granularity, IdleNotice
from clusters.models import Cluster
from portal.core.notifications import Event, notify
from workloads.models import CapacityReservation

LOOK_BACK = datetime.timedelta(days=14)  # an idle stretch's start is looked for this far back at most


def is_idle(row, share: Decimal) -> bool:
    """Held and healthy, utilization measured, and under ``share`` busy (a silent cluster is a health matter)."""
    return row.healthy > 0 and row.measured > 0 and row.busy < row.measured * share


def stretches(now: datetime.datetime | None = None) -> dict[int, tuple[datetime.datetime, Decimal, int]]:
    """Per cluster idle up to the last closed hour: (start of the stretch, accelerator-hours lost, hours).
    Three queries."""
    end = floor_hour(now or timezone.now())
    today = timezone.localdate(now or timezone.now())
    reserving = CapacityReservation.objects.filter(start__lte=today, end__gte=today).values("organization_id")
    rows = (AcceleratorUsage.objects.filter(granularity=Granularity.HOUR, start__gte=end - LOOK_BACK, start__lt=end,
                                            organization_id__in=reserving)
            .only("cluster_id", "organization_id", "start", "healthy", "busy", "measured")
            .order_by("cluster_id", "-start"))
    per_cluster: dict[int, list] = defaultdict(list)
    for row in rows:
        per_cluster[row.cluster_id].append(row)
    own = thresholds.for_organizations({rows[0].organization_id for rows in per_cluster.values()})
    default = thresholds.defaults()
    found = {}
    for cluster_id, latest_first in per_cluster.items():
        share = own.get(latest_first[0].organization_id, default).idle_busy_share
        expected, lost, hours, since = end - HOUR, Decimal(0), 0, None
        for row in latest_first:
            if row.start != expected or not is_idle(row, share):
                break
            since, lost, hours, expected = row.start, lost + row.healthy - row.busy, hours + 1, row.start - HOUR
        if since is not None:
            found[cluster_id] = (since, lost, hours)
    return found


def check(now: datetime.datetime | None = None) -> list[IdleNotice]:
    """Open a notice (and notify) for each cluster idle long enough, update the lost figure of open ones, end
    the notices of clusters busy again. Safe to run twice at once: the open notice is unique per cluster."""
    now = now or timezone.now()
    found = stretches(now)
    opened = []
    open_notices = {n.cluster_id: n for n in IdleNotice.objects.filter(ended__isnull=True)}
    for cluster_id, notice in open_notices.items():
        if cluster_id not in found:
            IdleNotice.objects.filter(pk=notice.pk, ended__isnull=True).update(ended=now)
        else:
            IdleNotice.objects.filter(pk=notice.pk).update(lost=found[cluster_id][1])
    candidates = [cid for cid in found if cid not in open_notices]
    clusters = list(Cluster.objects.filter(pk__in=candidates).select_related("organization"))
    own = thresholds.for_organizations({c.organization_id for c in clusters})
    for cluster in clusters:
        limits = own.get(cluster.organization_id) or thresholds.defaults()
        since, lost, hours = found[cluster.pk]
        if hours < limits.idle_hours:
            continue
        try:
            with transaction.atomic():
                notice = IdleNotice.objects.create(cluster=cluster, organization_id=cluster.organization_id,
                                                   since=since, notified_at=now, lost=lost)
                notify(Event(
                    kind="idle_capacity", organization_id=cluster.organization_id, severity="high",
                    title=f"Cluster {cluster} idle for {hours} h while its reservation is in force",
                    body=(f"Healthy accelerators under {limits.idle_busy_share:.0%} busy since "
                          f"{timezone.localtime(since):%Y-%m-%d %H:%M}: {lost:.0f} accelerator-hours lost so far."),
                    url=cluster.get_absolute_url()))
        except IntegrityError:  # another run opened it a moment ago, and notified
            continue
        opened.append(notice)
    return opened


def open_notices(organization_ids=None):
    """The idle list: open notices, longest idle first, with their clusters (one query)."""
    qs = IdleNotice.objects.filter(ended__isnull=True).select_related("cluster", "organization").order_by("since")
    return qs if organization_ids is None else qs.filter(organization_id__in=list(organization_ids))
