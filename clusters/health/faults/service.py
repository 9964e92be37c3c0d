"""Reconcile one summary's faults with the cluster's open GpuFaults, in a constant number of queries.

A fault is identified by (host, kind, GPU, EFA device, XID code): the same GPU raising a different
XID is a new fault. Present faults are refreshed, new ones opened, absent ones counted and cleared
after ``HEALTH_FAULT_CLEAR_AFTER`` reports. New critical faults make one timeline entry and one
notification per report (not one per fault: a rack losing power must not flood the timeline).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings

from clusters.health.faults.stalls import KIND as STALL_KIND
from clusters.health.models import GpuFault, HealthReport
from clusters.health.readers.summary import Fault
from portal.core.choices import FAULT_SEVERITY_RANK
from portal.core.weeks import week_of

UPDATED_FIELDS = ["last_seen", "absent_reports", "value", "severity", "severity_rank", "verdict", "meaning",
                  "action", "uuid", "pod", "last_report"]


@dataclass
class Reconciled:
    opened: list[GpuFault] = field(default_factory=list)
    updated: list[GpuFault] = field(default_factory=list)
    cleared: list[GpuFault] = field(default_factory=list)

    @property
    def new_critical(self) -> list[GpuFault]:
        return [f for f in self.opened if f.severity == "critical"]


def key_of(fault: Fault) -> tuple:
    return (fault.hostname, fault.kind, "" if fault.gpu is None else str(fault.gpu), fault.device or "",
            fault.xid or 0)


def reconcile(report: HealthReport, faults: list[Fault], clear_after: int | None = None,
              covered: set[str] | None = None) -> Reconciled:
    """Apply ``faults`` (info-level ones are kept in the summary only) to the cluster's open faults.

    ``covered`` is the set of nodes the report speaks for (None: the whole cluster): an open fault of
    a node outside it is left alone, since that node did not report without it."""
    clear_after = clear_after or settings.HEALTH_FAULT_CLEAR_AFTER
    now = report.received_at
    seen: dict[tuple, Fault] = {}
    for fault in faults:
        if fault.severity != "info":
            seen.setdefault(key_of(fault), fault)
    # The stalled-training fault is the cluster's, not a node's: ``stalls`` opens and clears it.
    open_faults = {f.key: f for f in GpuFault.objects.filter(cluster_id=report.cluster_id, cleared_at__isnull=True)
                   .exclude(kind=STALL_KIND)}
    result = Reconciled()
    for key, fault in seen.items():
        row = open_faults.pop(key, None)
        if row is None:
            result.opened.append(_new(report, fault, now))
        else:
            _refresh(row, fault, report, now)
            result.updated.append(row)
    for row in open_faults.values():
        if covered is not None and row.hostname not in covered:
            continue
        row.absent_reports += 1
        if row.absent_reports >= clear_after:
            row.cleared_at = now
            result.cleared.append(row)
        else:
            result.updated.append(row)
    if result.opened:
        GpuFault.objects.bulk_create(result.opened)
    if result.updated:
        GpuFault.objects.bulk_update(result.updated, UPDATED_FIELDS)
    if result.cleared:
        GpuFault.objects.bulk_update(result.cleared, ["absent_reports", "cleared_at"])
    return result


def _new(report: HealthReport, fault: Fault, now) -> GpuFault:
    return GpuFault(
        cluster_id=report.cluster_id, hostname=fault.hostname[:255],
        gpu="" if fault.gpu is None else str(fault.gpu)[:32], device=(fault.device or "")[:64],
        uuid=(fault.uuid or "")[:80], kind=fault.kind, xid=fault.xid, severity=fault.severity,
        severity_rank=FAULT_SEVERITY_RANK[fault.severity], verdict=fault.verdict, meaning=fault.meaning[:300],
        action=fault.action[:300], value=fault.value, pod=(fault.pod or "")[:255], first_seen=now,
        first_week=week_of(now), last_seen=now, last_report=report,
    )


def _refresh(row: GpuFault, fault: Fault, report: HealthReport, now) -> None:
    row.last_seen = now
    row.absent_reports = 0
    row.value = fault.value
    row.severity = fault.severity
    row.severity_rank = FAULT_SEVERITY_RANK[fault.severity]
    row.verdict = fault.verdict
    row.meaning = fault.meaning[:300]
    row.action = fault.action[:300]
    row.uuid = (fault.uuid or row.uuid)[:80]
    row.pod = (fault.pod or row.pod)[:255]
    row.last_report = report
