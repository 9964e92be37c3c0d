"""Accelerator-hours of closed hours, from stored data only: the cluster's state history (its timeline), its
size and instance type, and the health reports received in the hour.

- **held**: instances × accelerators per instance while the cluster is up (ready, or deleting: the instances
  run until the stack is gone), prorated to the seconds of the hour it was up.
- **healthy**: the mean over the hour's reports of the healthy nodes (the report's merged node verdicts) ×
  accelerators per node, prorated like held. An hour without a report counts nothing healthy: silent nodes are
  not healthy, and neither are degraded, reset, reboot or replace verdicts.
- **busy**: healthy × the healthy nodes' mean utilization over the hour's reports (each report's
  ``summary["utilization"]``, read by ``clusters.health.readers.summary.busy_of``). Where no report measured it, busy is
  0 and ``measured`` says so.

Figures are Decimals with four places, clamped so that held ≥ healthy ≥ busy on every row.
"""
from __future__ import annotations

import datetime
from collections import defaultdict
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

from django.contrib.contenttypes.models import ContentType

from clusters.choices import ClusterState
from clusters.health.models import HealthReport
from clusters.models import Cluster
from portal.core import instance_types
from portal.core.models import TimelineEntry

HOUR = datetime.timedelta(hours=1)
UP_STATES = frozenset({ClusterState.READY, ClusterState.DELETING})
PLACES = Decimal("0.0001")
_STATES = frozenset(ClusterState.values)


@dataclass(frozen=True)
class HourFigures:
    cluster_id: int
    organization_id: int
    start: datetime.datetime
    held: Decimal
    healthy: Decimal
    busy: Decimal
    measured: Decimal
    reports: int


def q(value) -> Decimal:
    return Decimal(value).quantize(PLACES, rounding=ROUND_HALF_EVEN)


def floor_hour(moment: datetime.datetime) -> datetime.datetime:
    moment = moment.astimezone(datetime.UTC)
    return moment.replace(minute=0, second=0, microsecond=0)


def accelerators_per_node(instance_type: str) -> int:
    itype = instance_types.find(instance_type)
    return itype.accelerator_count if itype else 0


def up_intervals(cluster: Cluster, changes: list[tuple[datetime.datetime, str]],
                 until: datetime.datetime) -> list[tuple[datetime.datetime, datetime.datetime]]:
    """When the cluster was up, from its state changes in time order (``until`` closes an open interval). A
    cluster without recorded changes (made before the timeline recorded them) is taken as in its current state
    since it was created."""
    if not changes:
        return [(cluster.created, until)] if cluster.state in UP_STATES else []
    intervals = []
    since = None
    for moment, state in changes:
        if state in UP_STATES and since is None:
            since = moment
        elif state not in UP_STATES and since is not None:
            intervals.append((since, moment))
            since = None
    if since is not None:
        intervals.append((since, until))
    return intervals


def seconds_up(intervals, start: datetime.datetime, end: datetime.datetime) -> float:
    return sum(max(0.0, (min(b, end) - max(a, start)).total_seconds()) for a, b in intervals)


def state_changes(cluster_ids: list[int], until: datetime.datetime) -> dict[int, list[tuple[datetime.datetime, str]]]:
    """Each cluster's recorded state changes (``Cluster.transition`` writes one timeline entry per move, tagged
    with the new state) before ``until``, in time order. One query; the tags are read here rather than filtered
    with a JSON ``contains`` lookup, which SQLite (the demo's database) does not have."""
    found: dict[int, list] = defaultdict(list)
    rows = (TimelineEntry.objects.filter(content_type=ContentType.objects.get_for_model(Cluster),
                                         object_id__in=cluster_ids, occurred_at__lt=until)
            .order_by("occurred_at", "id").values_list("object_id", "occurred_at", "tags"))
    for object_id, moment, tags in rows:
        if not isinstance(tags, list) or "cluster" not in tags:
            continue
        state = next((tag for tag in tags[1:] if tag in _STATES), None)
        if state:
            found[object_id].append((moment, state))
    return found


def candidates(start: datetime.datetime, end: datetime.datetime, cluster_ids=None):
    """Clusters that may have been up between ``start`` and ``end``: made before the end, not finished before
    the start."""
    qs = Cluster.objects.filter(created__lt=end).exclude(
        state__in=[ClusterState.DELETED, ClusterState.FAILED], updated__lt=start)
    if cluster_ids is not None:
        qs = qs.filter(pk__in=cluster_ids)
    return list(qs.only("pk", "organization_id", "instance_type", "node_count", "state", "created", "updated"))


def compute(start: datetime.datetime, end: datetime.datetime, cluster_ids=None) -> list[HourFigures]:
    """The figures of every closed hour in [start, end) of every cluster up in it (three queries)."""
    start, end = floor_hour(start), floor_hour(end)
    clusters = candidates(start, end, cluster_ids)
    if not clusters:
        return []
    ids = [c.pk for c in clusters]
    changes = state_changes(ids, end)
    reports: dict[tuple[int, datetime.datetime], list[tuple[int, dict | None]]] = defaultdict(list)
    for cluster_id, received_at, healthy, utilization in (
            HealthReport.objects.filter(cluster_id__in=ids, received_at__gte=start, received_at__lt=end)
            .values_list("cluster_id", "received_at", "nodes_healthy", "summary__utilization").order_by()):
        reports[(cluster_id, floor_hour(received_at))].append((healthy, utilization))
    out = []
    for cluster in clusters:
        per_node = accelerators_per_node(cluster.instance_type)
        intervals = up_intervals(cluster, changes.get(cluster.pk, []), end)
        if not per_node or not intervals:
            continue
        hour = max(start, floor_hour(intervals[0][0]))
        while hour < end:
            up = seconds_up(intervals, hour, hour + HOUR)
            if up > 0:
                out.append(hour_figures(cluster, per_node, hour, up, reports.get((cluster.pk, hour), [])))
            hour += HOUR
    return out


def hour_figures(cluster: Cluster, per_node: int, hour: datetime.datetime, up_seconds: float,
                 reports: list[tuple[int, dict | None]]) -> HourFigures:
    share = Decimal(up_seconds) / Decimal(3600)
    held = q(cluster.node_count * per_node * share)
    healthy = measured = busy = Decimal(0)
    if reports:
        nodes = Decimal(sum(min(n, cluster.node_count) for n, _ in reports)) / len(reports)
        healthy = min(held, q(nodes * per_node * share))
        weighted = [(u["healthy_measured"], Decimal(str(u["busy"]))) for _, u in reports
                    if isinstance(u, dict) and u.get("busy") is not None and u.get("healthy_measured")]
        if weighted:
            fraction = sum(n * b for n, b in weighted) / sum(n for n, _ in weighted)
            measured = healthy * len(weighted) / len(reports)
            busy = min(healthy, q(measured * fraction))
            measured = min(healthy, q(measured))
    return HourFigures(cluster.pk, cluster.organization_id, hour, held, healthy, busy, measured, len(reports))
