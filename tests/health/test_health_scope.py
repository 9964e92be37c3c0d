"""Report scope: partial pushes merge into the cluster's current health, faults clear only when their
node reported without them, silent nodes are "not reporting" wherever health is summarized; /health/
is paginated, filtered and costs the same at any size."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from clusters.health import current
from clusters.health.ingest import service as services
from clusters.health.models import ClusterHealthState, GpuFault, HealthReport, NodeHealth
from clusters.models import Cluster
from portal.core.models import TimelineEntry
from tests.health.factories_health import ClusterFactory, sample
from tests.queries import assert_flat_queries

XID79 = "dcgm_p5_xid79_missing_gpu.prom"  # ip-10-1-45-13: an XID 79 on GPU 2, GPU 5 missing
HEALTHY = "dcgm_p5_healthy.prom"  # ip-10-1-45-12


def node(host: str, faulty: bool = False) -> str:
    """One node's scrape (with the XID 79 and a missing GPU when faulty)."""
    return sample(XID79).replace("ip-10-1-45-13", host) if faulty else sample(HEALTHY).replace("ip-10-1-45-12", host)


@pytest.fixture
def cluster(world):
    return ClusterFactory(organization=world.org_a, name="alpha-train", node_count=3)


def test_per_node_pushes_merge_and_never_clear_other_nodes_faults(cluster, settings):
    settings.HEALTH_FAULT_CLEAR_AFTER = 2
    services.ingest(cluster, node("n1", faulty=True), "push")
    for _ in range(3):  # other nodes keep pushing: n1's faults stay open, nothing is re-announced
        services.ingest(cluster, node("n2"), "push")
        services.ingest(cluster, node("n3"), "push")
    open_faults = GpuFault.objects.filter(cluster=cluster, cleared_at__isnull=True)
    assert sorted(open_faults.values_list("hostname", "kind", "absent_reports")) == [
        ("n1", "missing_gpu", 0), ("n1", "xid", 0)]
    assert TimelineEntry.objects.filter(kind="fault").count() == 1
    latest = HealthReport.objects.filter(cluster=cluster).first()
    assert (latest.node_count, latest.nodes_healthy, latest.nodes_reboot, latest.xid_errors, latest.missing_gpus) == (
        3, 2, 1, 1, 1)
    assert latest.gpus_expected == 24 and latest.healthy_gpu_share == round(22 / 24, 6)
    assert latest.summary["scope"] == "nodes" and latest.summary["nodes_reported"] == 1
    assert sorted(NodeHealth.objects.filter(cluster=cluster).values_list("hostname", "verdict")) == [
        ("n1", "reboot"), ("n2", "healthy"), ("n3", "healthy")]
    # n1 reports without its faults: now they count as absent and clear
    services.ingest(cluster, node("n1"), "push")
    services.ingest(cluster, node("n1"), "push")
    assert not open_faults.exists()
    state = ClusterHealthState.objects.get(cluster=cluster)
    assert (state.worst_rank, state.open_faults, state.totals["nodes_healthy"], state.totals["xid_errors"]) == (
        0, 0, 3, 0)


def test_merged_totals_equal_a_whole_cluster_report(cluster):
    """Three one-node pushes add up to the figures of one push of the three nodes."""
    whole = node("n1", faulty=True) + "\n".join(
        line for line in (node("n2") + node("n3")).splitlines() if not line.startswith("#")) + "\n"
    other = ClusterFactory(organization=cluster.organization, name="alpha-whole", node_count=3)
    reference = services.ingest(other, whole, "push").report
    for host, faulty in (("n1", True), ("n2", False), ("n3", False)):
        merged = services.ingest(cluster, node(host, faulty), "push").report
    keys = ["node_count", "gpus_expected", "gpus_seen", "healthy_gpu_share", "nodes_healthy", "nodes_reboot",
            *[k for k, _ in HealthReport.PANELS]]
    assert {k: getattr(merged, k) for k in keys} == {k: getattr(reference, k) for k in keys}


def test_silent_and_missing_nodes_are_not_reporting(client, world, cluster, settings):
    settings.HEALTH_NODE_SILENT_MINUTES = 15
    services.ingest(cluster, node("n1"), "push", received_at=timezone.now() - timedelta(minutes=40))
    services.ingest(cluster, node("n2"), "push")
    # n1 silent for 40 minutes, n3 never seen (the cluster has 3 nodes)
    assert current.not_reporting([cluster.pk]) == {cluster.pk: 2}
    assert current.not_reporting_by_organization(type(cluster).objects.all()) == {world.org_a.pk: 2}
    client.force_login(world.lead_a)
    page = client.get(reverse("health:cluster_health", kwargs={"pk": cluster.pk})).content.decode()
    assert "2 nodes not reporting" in page
    program = client.get(reverse("health:program_health")).content.decode()
    assert "2 of 3" in program and "2 not reporting" in program
    assert "alpha-train" in client.get(reverse("health:program_health"), {"verdict": "not_reporting"}).content.decode()
    org = client.get(world.org_a.get_absolute_url()).content.decode()
    assert "2 nodes not reporting" in org
    client.force_login(world.pm)
    overview = client.get(reverse("review:overview")).content.decode()
    assert "2 nodes not reporting" in overview


def test_a_pull_is_partial_too(cluster):
    services.ingest(cluster, node("n1", faulty=True), "pull")
    services.ingest(cluster, node("n2"), "pull")  # Prometheus lost n1's target: its faults stay
    assert GpuFault.objects.filter(cluster=cluster, hostname="n1", cleared_at__isnull=True, absent_reports=0).count() == 2


def _program(world, count: int, start: int = 0):
    for i in range(start, start + count):
        org = world.org_a if i % 2 else world.org_b
        c = ClusterFactory(organization=org, name=f"c-{i:03d}", instance_type="p5.48xlarge" if i % 3 else "trn1.32xlarge",
                           node_count=1)
        services.ingest(c, node(f"h{i}", faulty=i % 7 == 0), "push")


def test_program_health_is_paginated_filtered_and_problems_first(client, world):
    _program(world, 60)
    client.force_login(world.pm)
    html = client.get(reverse("health:program_health")).content.decode()
    names = re.findall(r'/health/">(c-\d+)</a>', html)
    assert len(names) == 50 and "Page 1 of 2" in html
    faulty = {f"c-{i:03d}" for i in range(60) if i % 7 == 0}
    assert set(names[:len(faulty)]) == faulty  # every cluster with a node to reboot before the healthy ones
    second = client.get(reverse("health:program_health"), {"page": 2}).content.decode()
    assert len(re.findall(r'/health/">(c-\d+)</a>', second)) == 10
    only = client.get(reverse("health:program_health"), {"verdict": "reboot", "organization": world.org_b.slug,
                                                         "instance_type": "trn1.32xlarge"}).content.decode()
    assert re.findall(r'/health/">(c-\d+)</a>', only) == [f"c-{i:03d}" for i in range(60)
                                                          if i % 7 == 0 and i % 2 == 0 and i % 3 == 0]


def test_program_health_query_count_is_flat(client, world):
    client.force_login(world.pm)
    grow = lambda n: _program(world, n, Cluster.objects.count())  # noqa: E731
    assert_flat_queries(client, reverse("health:program_health"), grow=grow, sizes=(3, 83))
