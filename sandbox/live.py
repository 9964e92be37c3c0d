"""The demo's clusters keep reporting while the demo runs. A real cluster's exporters push every minute or so; the
demo's emulated ones pushed once, when it was seeded, and their nodes read "not reporting" once
``HEALTH_NODE_SILENT_MINUTES`` had passed. ``refresh`` pushes, through the real ingestion service, what each ready
cluster's nodes would send now: the same figures as they were seeded, with a fault still open kept open (an
XID 79 node that was not remediated still reports it) and a fault since cleared left cleared. Nodes a remediation is
acting on are left out: their own emulated exporters report once they are back (sandbox/aws/moto_*_nodes.py).
``manage.py push_demo_health`` runs it in a loop beside the demo's worker and beat (``manage.py run_demo``); the
product's own settings schedule nothing of it."""
from __future__ import annotations

import datetime

from django.utils import timezone

from clusters.choices import ClusterState
from clusters.health import current
from clusters.health.choices import Source
from clusters.health.ingest import service as services
from clusters.health.models import GpuFault, NodeHealth
from clusters.models import Cluster
from clusters.remediation.choices import ActionState
from clusters.remediation.models import RemediationNode
from sandbox import accelerator_hours as demo_accounting
from sandbox import health as demo_health

# Well inside HEALTH_NODE_SILENT_MINUTES (15): a cluster is pushed again once its last report is this old.
REPORT_EVERY = datetime.timedelta(minutes=2)
# Actions under way on a node: it reboots or is replaced, and reports again on its own when it is back. A node whose
# action waits for approval runs as before and keeps reporting.
_ACTING = (ActionState.APPROVED, ActionState.RUNNING, ActionState.VERIFYING)
# Open faults a node's seeded exposition carries (dcgm_p5_xid79_missing_gpu.prom).
_SAMPLE_FAULTS = ("xid", "missing_gpu")


def scrape_now(cluster: Cluster) -> tuple[str, str] | None:
    """What the cluster's exporters send now and the report's scope, or None for a cluster with nothing to send."""
    accounting = {name: percent for _slug, name, percent, _reservation in demo_accounting.CLUSTERS}
    if cluster.name in accounting:  # the accounting story: near full, idle for days, stalled with its traffic flat
        if cluster.name == demo_accounting.STALLED:
            return demo_accounting._moved(demo_accounting._scrape(cluster, 1), 5 * demo_accounting.MOVING), current.FULL
        return demo_accounting._scrape(cluster, accounting[cluster.name]), current.FULL
    busy = set(RemediationNode.objects.filter(cluster=cluster, active=True, action__state__in=_ACTING)
               .values_list("hostname", flat=True))
    hosts = [h for h in NodeHealth.objects.filter(cluster=cluster).order_by("hostname")
             .values_list("hostname", flat=True) if h not in busy]
    if not hosts:
        return None
    if demo_health.is_trainium(cluster):
        return demo_health.trainium_scrape(hosts), current.NODES
    faulty = set(GpuFault.objects.filter(cluster=cluster, cleared_at__isnull=True, kind__in=_SAMPLE_FAULTS)
                 .values_list("hostname", flat=True))
    efa = NodeHealth.objects.filter(cluster=cluster, efa_devices_seen__gt=0).exists()
    return demo_health.nodes_scrape(hosts, faulty, efa=efa), current.NODES


def refresh(now: datetime.datetime | None = None) -> int:
    """Push a report for every ready cluster whose last one is older than ``REPORT_EVERY``; returns how many."""
    now = now or timezone.now()
    pushed = 0
    for cluster in (Cluster.objects.filter(state=ClusterState.READY, health_state__last_report_at__lt=now - REPORT_EVERY)
                    .select_related("organization").order_by("pk")):
        made = scrape_now(cluster)
        if made is None:
            continue
        text, scope = made
        services.ingest(cluster, text, Source.PUSH, received_at=now, scope=scope)
        pushed += 1
    return pushed
