"""Alertmanager notifications (through SNS) turned into the faults a push of the same series would open.

An alert names its signal (``geniac_kind``, set by the generated rules in :mod:`clusters.health.alerts.rules`), the
node (``Hostname``/``hostname``/``instance``), the GPU or EFA device, and its value. Rather than restate what
each signal means, the alert is turned back into the reading it stands for and judged by the summary itself
(:func:`clusters.health.readers.summary.summarize`, with a zero baseline for counters): the fault that comes out has
the kind, severity, verdict, meaning and action a push would have given it. A firing alert opens that fault
(or refreshes the open one with its key: duplicates merge); a resolved alert clears it.

Which cluster: the SNS topic belongs to one organization's observability stack (its ``AlertTopicArn`` output);
within that organization the alert's ``geniac_cluster_id`` label, else its ``cluster`` label (the name the
Prometheus agent puts on every series), picks the cluster. Alerts of a topic the portal does not know, or of a
cluster outside the topic's organization, are ignored (and counted in the answer).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from clusters.health.alerts import rules as alerts
from clusters.health.ingest.service import _announce
from clusters.health.models import ClusterHealthState, GpuFault
from clusters.health.readers import xid
from clusters.health.readers.prometheus import EfaReading, GpuReading, Scrape, host_of
from clusters.health.readers.summary import DEGRADED, STATE_VERSION, Fault, summarize
from clusters.health.readers.thresholds import EFA_THRESHOLDS
from clusters.models import Cluster
from portal.core import instance_types, json_input
from portal.core.choices import FAULT_SEVERITY_RANK
from portal.core.weeks import week_of

GPU_FIELDS = {"uncorrectable_remapped_rows": "uncorrectable_remapped_rows", "row_remap_failure": "row_remap_failure",
              "ecc_dbe": "ecc_dbe", "thermal_violation": "thermal_violation", "power_violation": "power_violation"}
EFA_KIND_TO_COUNTER = {row.kind: counter for counter, row in EFA_THRESHOLDS.items()}


@dataclass
class Applied:
    opened: list[GpuFault] = field(default_factory=list)
    refreshed: list[GpuFault] = field(default_factory=list)
    cleared: list[GpuFault] = field(default_factory=list)
    ignored: int = 0
    clusters: set[int] = field(default_factory=set)

    def describe(self) -> str:
        return (f"{len(self.opened)} opened, {len(self.refreshed)} refreshed, {len(self.cleared)} cleared, "
                f"{self.ignored} ignored")


def _number(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def to_faults(alert: dict, cluster) -> list[Fault]:
    """The faults a push would open for the reading this alert stands for (none: info level or unjudgeable)."""
    labels, notes = alert.get("labels") or {}, alert.get("annotations") or {}
    kind = labels.get("geniac_kind", "")
    host = host_of(labels)
    value = _number(notes.get("value"))
    gpu = labels.get("gpu")
    gpu_key = int(gpu) if gpu and gpu.isdigit() else gpu
    itype = instance_types.find(cluster.instance_type)
    if kind == alerts.NOT_REPORTING:
        return [Fault(host, kind, xid.WARNING, DEGRADED, "the node has not answered a scrape",
                      "check that the node is up and its exporters run")]
    scrape, previous = Scrape(), {"v": STATE_VERSION, "gpu": {host: {}}, "efa": {host: {}}, "xid": {host: {}}}
    if kind == "xid" and gpu is not None:
        code = _number(notes.get("xid")) or value
        if not code:
            return []
        reading = GpuReading(host, gpu_key, uuid=labels.get("UUID"), xid=int(code), xid_message=labels.get("err_msg"))
        scrape.gpus = {host: {gpu_key: reading}}
    elif kind in GPU_FIELDS and gpu is not None and value is not None:
        reading = GpuReading(host, gpu_key, uuid=labels.get("UUID"), **{GPU_FIELDS[kind]: value})
        scrape.gpus = {host: {gpu_key: reading}}
    elif kind in EFA_KIND_TO_COUNTER and labels.get("device") and value is not None:
        device = labels["device"]
        scrape.efa = {host: {device: EfaReading(host, device, **{EFA_KIND_TO_COUNTER[kind]: value})}}
    elif kind == alerts.MISSING_GPU and isinstance(gpu_key, int) and itype and itype.gpus and gpu_key < itype.gpus:
        scrape.gpus = {host: {i: GpuReading(host, i) for i in range(itype.gpus) if i != gpu_key}}
    else:
        return []
    summary = summarize(scrape, itype if kind == alerts.MISSING_GPU else None, previous)
    return [f for f in summary.faults if f.kind == kind and f.severity != xid.INFO]


def clusters_of_topic(topic_arn: str) -> list[int]:
    """The organizations whose observability stack publishes to this topic (normally one)."""
    return list(Cluster.objects.filter(outputs__AlertTopicArn=topic_arn).values_list("organization_id", flat=True))


def _cluster_for(labels: dict, organizations: list[int], cache: dict):
    ident, name = labels.get("geniac_cluster_id", ""), labels.get("cluster", "")
    key = (ident, name)
    if key not in cache:
        found = Cluster.objects.filter(organization_id__in=organizations)
        if ident.isdigit():
            found = found.filter(pk=int(ident))
        elif name:
            found = found.filter(name=name)
        else:
            found = found.none()
        cache[key] = found.first()
    return cache[key]


def apply(topic_arn: str, body: str) -> Applied:
    """Open or clear the faults of every alert in one notification (the Alertmanager JSON the rules' template prints)."""
    try:
        payload = json_input.loads(body)
    except ValueError:
        payload = None
    items = payload.get("alerts") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        raise ValueError("the notification is not an alert manager message")
    organizations = clusters_of_topic(topic_arn)
    result, cache, per_cluster = Applied(), {}, {}
    for alert in items:
        if not isinstance(alert, dict):
            result.ignored += 1
            continue
        cluster = _cluster_for(alert.get("labels") or {}, organizations, cache) if organizations else None
        if cluster is None:
            result.ignored += 1
            continue
        per_cluster.setdefault(cluster.pk, (cluster, []))[1].append(alert)
    for cluster, cluster_alerts in per_cluster.values():
        _apply_to_cluster(cluster, cluster_alerts, result)
    return result


def _open_key(fault: Fault) -> dict:
    return {"hostname": fault.hostname[:255], "kind": fault.kind, "gpu": "" if fault.gpu is None else str(fault.gpu)[:32],
            "device": (fault.device or "")[:64], "xid": fault.xid}


def _apply_to_cluster(cluster, cluster_alerts: list[dict], result: Applied) -> None:
    """In one transaction, serialized with the cluster's ingestions by the same row lock."""
    now = timezone.now()
    with transaction.atomic():
        list(Cluster.objects.select_for_update().filter(pk=cluster.pk).values_list("pk"))
        opened = []
        for alert in cluster_alerts:
            found = to_faults(alert, cluster)
            if not found:
                result.ignored += 1
            for fault in found:
                row = GpuFault.objects.filter(cluster_id=cluster.pk, cleared_at__isnull=True, **_open_key(fault)).first()
                if alert.get("status") == "resolved":
                    if row is not None:
                        row.cleared_at = now
                        row.save(update_fields=["cleared_at"])
                        result.cleared.append(row)
                elif row is not None:
                    row.last_seen, row.absent_reports, row.value = now, 0, fault.value
                    row.save(update_fields=["last_seen", "absent_reports", "value"])
                    result.refreshed.append(row)
                else:
                    row = GpuFault.objects.create(
                        cluster_id=cluster.pk, uuid=(fault.uuid or "")[:80], severity=fault.severity,
                        severity_rank=FAULT_SEVERITY_RANK[fault.severity], verdict=fault.verdict,
                        meaning=fault.meaning[:300], action=fault.action[:300], value=fault.value,
                        pod=(fault.pod or "")[:255], first_seen=now, first_week=week_of(now), last_seen=now,
                        **_open_key(fault))
                    opened.append(row)
        result.opened.extend(opened)
        result.clusters.add(cluster.pk)
        counts = GpuFault.objects.filter(cluster_id=cluster.pk, cleared_at__isnull=True).aggregate(
            n=Count("pk"), critical=Count("pk", filter=Q(severity="critical")))
        ClusterHealthState.objects.filter(cluster_id=cluster.pk).update(
            open_faults=counts["n"], critical_faults=counts["critical"])
        critical = [f for f in opened if f.severity == "critical"]
        if critical:  # the timeline entry and notification a push's new critical faults make
            _announce(cluster, SimpleNamespace(received_at=now, pk=None), critical)
