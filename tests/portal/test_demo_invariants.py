"""The seeded demo obeys the rules the product enforces: nobody over quota, every ready cluster built from a
blueprint whose configuration renders and reporting the health of all its nodes, held ≥ healthy ≥ busy, and every
table's total the sum of its rows. Run on SQLite and on PostgreSQL (``DATABASE_URL``)."""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.management import call_command
from django.urls import reverse

from clusters.blueprints import pcluster_config
from clusters.choices import ClusterState
from clusters.health import current
from clusters.models import Cluster
from portal.core.models import User
from portal.review.figures import overview
from sandbox import spend as demo_spend
from workloads import prices, usage
from workloads.models import CostDay

# The seed counts every organization and user: it needs a database without the world the other tests use.
pytestmark = pytest.mark.world_per_test


@pytest.fixture
def demo(db, aws, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_demo")
    return User.objects.get(username="pm")


def test_nobody_is_over_quota(demo):
    over = [(r.organization_slug, r.instance_type_name, r.region, r.used, r.quota)
            for r in usage.usage_rows(demo) if r.over]
    assert over == []


def test_every_ready_cluster_has_a_blueprint_renders_its_configuration_and_reports_every_node(demo, client):
    ready = list(Cluster.objects.filter(state=ClusterState.READY).select_related("blueprint", "organization"))
    assert ready
    assert [c.name for c in ready if c.blueprint is None] == []
    for cluster in ready:
        if cluster.blueprint.kind == "parallelcluster":
            text = pcluster_config.for_cluster(cluster)
            assert text and "<network:" not in text and "<storage:" not in text, cluster.name
    # Every cluster has reported, every node of it, the Trainium one with neuron-monitor's figures.
    silent = current.not_reporting([c.pk for c in ready])
    assert {c.name: silent.get(c.pk) for c in ready if silent.get(c.pk, 1)} == {}
    assert any("trn1" in c.instance_type for c in ready)


def test_the_trainium_cluster_reports_its_nodes_healthy_and_busy_from_neuron_monitor(demo, client):
    from clusters.health.models import NodeHealth

    trn = Cluster.objects.get(state=ClusterState.READY, instance_type__contains="trn1")
    nodes = NodeHealth.objects.filter(cluster=trn)
    assert nodes.count() == trn.node_count
    assert set(nodes.values_list("verdict", flat=True)) == {"healthy"}
    assert all(n.efa_devices_seen == 8 for n in nodes)
    report = trn.health_reports.order_by("-received_at").first()
    client.force_login(demo)
    page = client.get(reverse("health:cluster_health", kwargs={"pk": trn.pk})).content.decode()
    assert "not reporting" not in page, report.summary


def test_the_demo_keeps_every_ready_cluster_reporting_while_it_runs(demo):
    """Twenty minutes after the seed every node would read "not reporting"; the demo's pushes keep them current,
    with the faults still open (the XID 79 node, the stalled run) kept open."""
    import datetime

    from django.utils import timezone

    from clusters.health.models import GpuFault
    from sandbox import live as demo_live

    ready = list(Cluster.objects.filter(state=ClusterState.READY))
    later = timezone.now() + datetime.timedelta(minutes=20)
    assert sum(current.not_reporting([c.pk for c in ready], now=later).values()) > 0
    open_before = set(GpuFault.objects.filter(cleared_at__isnull=True).values_list("cluster__name", "hostname", "kind"))
    assert demo_live.refresh(later) == len(ready)
    assert current.not_reporting([c.pk for c in ready], now=later) == {c.pk: 0 for c in ready}
    open_after = set(GpuFault.objects.filter(cleared_at__isnull=True).values_list("cluster__name", "hostname", "kind"))
    assert open_before <= open_after and {kind for _c, _h, kind in open_before} >= {"xid", "missing_gpu"}
    assert demo_live.refresh(later) == 0  # every report is current


def test_held_healthy_busy_and_totals_add_up(demo, client):
    figures = overview(demo)
    rows = [*figures["organizations"], *figures["capacity"]["departed"]]
    for o in rows:
        assert o["gpu_hours_held"] >= o["gpu_hours_healthy"] >= o["gpu_hours_busy"] >= 0, o["name"]
    program = figures["capacity"]["program"]
    shown = [o for o in rows if o["gpu_hours_reserved"] or o["gpu_hours_held"] or o["cost_usd"]]
    for key in ("reserved", "held", "healthy", "busy"):
        assert program[key] == pytest.approx(sum(o[f"gpu_hours_{key}"] for o in shown), abs=0.01), key
    assert program["cost_usd"] == pytest.approx(sum(o["cost_usd"] or 0 for o in shown), abs=0.01)
    totals = figures["totals"]["by_type"]
    assert sum(t["used"] for t in totals) == sum(r.used for r in usage.usage_rows(demo))
    # An organization without clusters or reservations costs nothing; one with them costs what they do.
    billed = set(CostDay.objects.values_list("organization__slug", flat=True))
    held = set(Cluster.objects.exclude(state__in=["failed", "deleted"]).values_list("organization__slug", flat=True))
    assert billed and billed <= held | set(
        CostDay.objects.filter(organization__capacity_reservations__isnull=False)
        .values_list("organization__slug", flat=True))
    # What an organization is billed follows its capacity: never more than its reserved and held instance-hours
    # at the dearest rate of the price table, plus its storage (Tsubasa read 254,686 USD in 14 days for two P5).
    dearest = max(prices.ON_DEMAND.values())
    for o in shown:
        if o["cost_usd"]:
            instance_hours = Decimal(str(o["gpu_hours_reserved"] + o["gpu_hours_held"])) / 8
            storage = 30 * prices.storage_day(demo_spend.DATASET_GB, max(prices.S3_STANDARD_GB_MONTH.values()))
            assert Decimal(str(o["cost_usd"])) <= instance_hours * dearest * Decimal("1.05") + storage, o["name"]
    client.force_login(demo)
    assert client.get(reverse("workloads:quota_list")).content.decode().count("over quota") == 0
