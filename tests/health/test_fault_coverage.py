"""Fault reconciliation by coverage (clusters/health/faults/service.py): a report clears only what it speaks for.

A push of some nodes says nothing about the others: their open faults stay exactly as they were. A node the
report covers and shows clean has its faults counted absent (and cleared after HEALTH_FAULT_CLEAR_AFTER
reports); on a covered node each fault is judged by itself, so a GPU still faulty keeps its fault while a
recovered one clears. A whole-cluster report speaks for every node.
"""
from __future__ import annotations

import pytest

from clusters.health import current
from clusters.health.faults import service as faults
from clusters.health.ingest import service as services
from clusters.health.models import GpuFault
from clusters.health.readers.summary import Fault
from tests.health.factories_health import ClusterFactory, GpuFaultFactory

MODEL = "NVIDIA H100 80GB HBM3"


def scrape(hosts: dict[str, set[int]]) -> str:
    """P5 nodes of 8 GPUs; ``hosts`` maps each host to the GPUs that report XID 79 (fallen off the bus)."""
    lines = ["# TYPE DCGM_FI_DEV_XID_ERRORS gauge", "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge"]
    for n, (host, bad) in enumerate(hosts.items()):
        for g in range(8):
            labels = f'gpu="{g}",UUID="GPU-{n:04d}-{g:04d}",modelName="{MODEL}",Hostname="{host}"'
            lines.append(f"DCGM_FI_DEV_XID_ERRORS{{{labels}}} {79 if g in bad else 0}")
            lines.append(f"DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{labels}}} 0.5")
    return "\n".join(lines) + "\n"


def open_faults(cluster) -> list[tuple[str, str, int]]:
    rows = GpuFault.objects.filter(cluster=cluster, cleared_at__isnull=True)
    return sorted(rows.values_list("hostname", "gpu", "absent_reports"))


@pytest.fixture
def cluster(world, settings):
    settings.HEALTH_FAULT_CLEAR_AFTER = 1  # one report without a fault clears it: coverage alone decides
    return ClusterFactory(organization=world.org_a, name="alpha-coverage", node_count=3)


def test_a_push_of_some_nodes_leaves_the_other_nodes_faults_alone(cluster):
    services.ingest(cluster, scrape({"n1": {0}, "n2": {3}, "n3": {5}}), "push", scope=current.FULL)
    assert open_faults(cluster) == [("n1", "0", 0), ("n2", "3", 0), ("n3", "5", 0)]
    services.ingest(cluster, scrape({"n1": set()}), "push", scope=current.NODES)  # n1 clean; n2, n3 silent
    assert open_faults(cluster) == [("n2", "3", 0), ("n3", "5", 0)]
    assert GpuFault.objects.get(cluster=cluster, hostname="n1").cleared_at is not None


def test_on_a_covered_node_a_recovered_gpu_clears_and_a_faulty_one_stays(cluster):
    services.ingest(cluster, scrape({"n1": {0, 1}, "n2": {2}}), "push", scope=current.FULL)
    services.ingest(cluster, scrape({"n1": {1}}), "push", scope=current.NODES)
    assert open_faults(cluster) == [("n1", "1", 0), ("n2", "2", 0)]


def test_a_whole_cluster_report_speaks_for_the_nodes_it_does_not_list(cluster):
    services.ingest(cluster, scrape({"n1": {0}, "n2": {3}}), "push", scope=current.FULL)
    services.ingest(cluster, scrape({"n1": {0}}), "push", scope=current.FULL)  # n2 gone from the cluster's report
    assert open_faults(cluster) == [("n1", "0", 0)]


def test_reconcile_counts_absence_only_on_covered_nodes(world):
    cluster = ClusterFactory(organization=world.org_a, name="alpha-reconcile")
    report = services.ingest(cluster, scrape({"n9": set()}), "push").report
    covered_fault = GpuFaultFactory(cluster=cluster, hostname="n1", gpu="0")
    other_fault = GpuFaultFactory(cluster=cluster, hostname="n2", gpu="0")
    still = GpuFaultFactory(cluster=cluster, hostname="n1", gpu="4")
    present = Fault(hostname="n1", kind="xid", severity="critical", verdict="reboot", meaning="XID 79",
                    action="reboot", gpu=4, xid=79)
    result = faults.reconcile(report, [present], clear_after=2, covered={"n1"})
    assert [f.pk for f in result.cleared] == []
    rows = {f.pk: f for f in GpuFault.objects.filter(cluster=cluster)}
    assert (rows[covered_fault.pk].absent_reports, rows[covered_fault.pk].cleared_at) == (1, None)
    assert (rows[other_fault.pk].absent_reports, rows[other_fault.pk].cleared_at) == (0, None)
    assert (rows[still.pk].absent_reports, rows[still.pk].last_report_id) == (0, report.pk)
    result = faults.reconcile(report, [present], clear_after=2, covered={"n1"})
    assert [f.pk for f in result.cleared] == [covered_fault.pk]
    assert GpuFault.objects.get(pk=other_fault.pk).absent_reports == 0
    result = faults.reconcile(report, [present], clear_after=1, covered=None)  # the whole cluster
    assert [f.pk for f in result.cleared] == [other_fault.pk]
