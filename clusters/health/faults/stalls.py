""""Training stalled?": a cluster that was busy and sits near zero with its EFA traffic flat for its organization's
stall minutes (default ``ACCOUNTING_STALL_MINUTES``, 15) opens one cluster-wide fault (``KIND``), cleared when work
resumes. A hung collective keeps every GPU of a large run waiting without an error anywhere: the GPUs go idle and
the EFA counters stop moving at the same time, which is what this looks for.

Read from the reports' ``summary["utilization"]`` (``clusters.health.readers.summary.HealthSummary.utilization``): the
healthy nodes' mean busy share and the cluster's EFA traffic counters (``efa_bytes``, bytes since boot, over
``efa_nodes`` nodes). Per report, after the faults are reconciled and under the ingestion's lock on the cluster:

- **stalled** when the latest reports, back over at least the stall minutes, are all under
  ``ACCOUNTING_STALL_BUSY_SHARE`` busy, the report before them was at least ``ACCOUNTING_STALL_WAS_BUSY_SHARE``
  busy (a cluster idle for hours is idle capacity, not a stall), and the EFA traffic over the stretch stays under
  ``ACCOUNTING_STALL_EFA_BYTES_PER_SECOND`` per node. Without EFA counters nothing is opened: flat GPUs alone are
  often a checkpoint or a data-loader wait.
- **resumed** (the fault is cleared) when a report is busy again or its EFA traffic moves.

One open fault per cluster: the open-fault unique key (hostname, GPU and device blank) holds it even where two
checks run at once outside the lock. A new fault is announced like a critical GPU fault (timeline, notification).
The fault keeps the traces that opened it (``GpuFault.evidence``).
"""
from __future__ import annotations

import datetime

from django.conf import settings
from django.db import IntegrityError, transaction

from clusters.health.models import GpuFault, HealthReport
from portal.core.choices import FAULT_SEVERITY_RANK
from portal.core.signals import Hook
from portal.core.weeks import week_of

KIND = "training_stalled"
MEANING = "training stalled? GPUs near idle with EFA traffic flat after a busy run"
ACTION = ("look for a hung collective: the job's last log lines, NCCL_DEBUG=INFO output, a py-spy dump of a rank; "
          "requeue from the last checkpoint if it does not move")
TRACE_POINTS = 40


def _point(received_at: datetime.datetime, utilization) -> dict | None:
    if not isinstance(utilization, dict):
        return None
    return {"at": received_at.isoformat(), "busy": utilization.get("busy"),
            "efa_bytes": utilization.get("efa_bytes"), "efa_nodes": utilization.get("efa_nodes") or 0}


def trace(cluster_id: int, now: datetime.datetime, minutes: int) -> list[dict]:
    """The cluster's reports up to ``now`` from twice the stall minutes back (and 30 minutes more, to find the
    busy report before a stretch), oldest first, as points (one query). Each point after the first carries the
    EFA traffic rate per node since the point before (``efa_rate``, bytes/s; None where it cannot be told)."""
    since = now - datetime.timedelta(minutes=2 * minutes + 30)
    rows = (HealthReport.objects.filter(cluster_id=cluster_id, received_at__gte=since, received_at__lte=now)
            .order_by("received_at", "pk").values_list("received_at", "summary__utilization"))
    points = [p for p in (_point(at, u) for at, u in rows) if p is not None]
    for before, after in zip(points, points[1:], strict=False):
        after["efa_rate"] = rate(before, after)
    if points:
        points[0].setdefault("efa_rate", None)
    return points


def rate(before: dict, after: dict) -> float | None:
    """EFA bytes per second per node between two points; None when not comparable (counters missing, other
    nodes counted, a counter reset)."""
    if before["efa_bytes"] is None or after["efa_bytes"] is None or not after["efa_nodes"] \
            or before["efa_nodes"] != after["efa_nodes"]:
        return None
    seconds = (datetime.datetime.fromisoformat(after["at"]) - datetime.datetime.fromisoformat(before["at"])).total_seconds()
    grown = after["efa_bytes"] - before["efa_bytes"]
    if seconds <= 0 or grown < 0:
        return None
    return grown / seconds / after["efa_nodes"]


def _low(point: dict) -> bool:
    return point["busy"] is not None and point["busy"] < settings.ACCOUNTING_STALL_BUSY_SHARE


def stalled(points: list[dict], minutes: int) -> bool:
    """Whether the latest points are a stall (see the module's docstring)."""
    if not points or not _low(points[-1]):
        return False
    first = len(points) - 1
    while first > 0 and _low(points[first - 1]):
        first -= 1
    if first == 0 or (points[first - 1]["busy"] or 0) < settings.ACCOUNTING_STALL_WAS_BUSY_SHARE:
        return False  # no busy report before the stretch in sight: idle, not stalled
    start, end = datetime.datetime.fromisoformat(points[first]["at"]), datetime.datetime.fromisoformat(points[-1]["at"])
    if end - start < datetime.timedelta(minutes=minutes):
        return False
    rates = [p.get("efa_rate") for p in points[first + 1:]]
    return bool(rates) and all(r is not None and r < settings.ACCOUNTING_STALL_EFA_BYTES_PER_SECOND for r in rates)


def resumed(points: list[dict]) -> bool:
    """Work moves again: the latest report is busy, or its EFA traffic moves."""
    if not points:
        return False
    last = points[-1]
    moving = last.get("efa_rate") is not None and last["efa_rate"] >= settings.ACCOUNTING_STALL_EFA_BYTES_PER_SECOND
    return not _low(last) or moving


# How long near-zero work must last to be a stall, per organization: the thresholds are capacity accounting's (its
# lead SAs set them per organization), which sits above health and provides the reader when ready.
STALL_MINUTES = Hook("the organization's stall window in minutes", provider="accounting")


def check(cluster, report: HealthReport, *, maybe_open: bool = True) -> GpuFault | None:
    """After ``report`` was stored: open the cluster's stall fault (returned when new) or clear it. Call it
    inside the ingestion's transaction (which holds the cluster's lock). ``maybe_open`` False (the cluster had
    no open fault before this report) spares the look for an open one. A report without utilization costs no
    query, a busy one at most one (the clearing update); only a report near zero reads the trace."""
    utilization = (report.summary or {}).get("utilization")
    busy = utilization.get("busy") if isinstance(utilization, dict) else None
    if busy is None:
        return None
    now = report.received_at
    still_open = GpuFault.objects.filter(cluster_id=cluster.pk, kind=KIND, cleared_at__isnull=True)
    if busy >= settings.ACCOUNTING_STALL_BUSY_SHARE:  # work resumed, if it had stalled
        if maybe_open:
            still_open.update(cleared_at=now, last_seen=now, last_report=report)
        return None
    minutes = STALL_MINUTES(cluster.organization_id)
    points = trace(cluster.pk, now, minutes)
    open_fault = still_open.first() if maybe_open else None
    if open_fault is not None:
        if resumed(points):
            open_fault.cleared_at = now
            open_fault.evidence = {**open_fault.evidence, "resumed": points[-1]}
            open_fault.save(update_fields=["cleared_at", "evidence"])
        else:
            GpuFault.objects.filter(pk=open_fault.pk).update(last_seen=now, last_report=report)
        return None
    if not stalled(points, minutes):
        return None
    fault = GpuFault(
        cluster_id=cluster.pk, hostname="", kind=KIND, severity="critical", severity_rank=FAULT_SEVERITY_RANK["critical"],
        verdict="degraded", meaning=MEANING[:300], action=ACTION[:300], value=busy, first_seen=now,
        first_week=week_of(now), last_seen=now, last_report=report,
        evidence={"minutes": minutes, "busy_under": settings.ACCOUNTING_STALL_BUSY_SHARE,
                  "efa_bytes_per_second_under": settings.ACCOUNTING_STALL_EFA_BYTES_PER_SECOND,
                  "trace": points[-TRACE_POINTS:]})
    try:
        with transaction.atomic():
            fault.save()
    except IntegrityError:  # another check opened it a moment ago
        return None
    return fault
