"""Concurrent ingestions of one cluster, on PostgreSQL with real concurrency: each thread has its own
connection and all are released together by a barrier."""
from __future__ import annotations

import pytest
from django.db import connection

from clusters.health.ingest import service as services
from clusters.health.models import ClusterHealthState, GpuFault, NodeHealth
from portal.core.models import NotificationDelivery, NotificationSetting, TimelineEntry
from tests import concurrency
from tests.health.factories_health import ClusterFactory, sample

pytestmark = pytest.mark.django_db(transaction=True)
THREADS = 8


def _race(target, n: int) -> list[BaseException]:
    """What the threads raised (the race itself: tests/concurrency.py)."""
    return [r for r in concurrency.race(n, target) if isinstance(r, BaseException)]


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="needs PostgreSQL: SQLite serializes every writer, so nothing races there")
def test_eight_concurrent_ingestions_make_one_fault_one_entry_one_notification(world):
    cluster = ClusterFactory(organization=world.org_a, name="alpha-race")
    NotificationSetting.objects.create(name="alpha", organization=world.org_a, email_recipients="a@example.com",
                                       min_severity="critical", include_internal=True)
    text = sample("dcgm_p5_xid79_missing_gpu.prom")  # one node: an XID 79 and a missing GPU

    errors = _race(lambda i: services.ingest(cluster, text, "push"), THREADS)

    assert errors == []
    keys = list(GpuFault.objects.filter(cluster=cluster, cleared_at__isnull=True).values_list("kind", "gpu"))
    assert sorted(keys) == [("missing_gpu", "5"), ("xid", "2")]  # one open fault each, not eight
    assert TimelineEntry.objects.filter(organization=world.org_a, kind="fault").count() == 1
    assert NotificationDelivery.objects.filter(event_kind="health_fault").count() == 1
    assert NodeHealth.objects.filter(cluster=cluster).count() == 1  # one row for the node, of one report
    state = ClusterHealthState.objects.get(cluster=cluster)
    assert (state.nodes_known, state.open_faults, state.totals["nodes_reboot"]) == (1, 2, 1)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL (see above)")
def test_concurrent_partial_pushes_of_different_nodes_all_count(world):
    cluster = ClusterFactory(organization=world.org_a, name="alpha-nodes", node_count=THREADS)
    text = sample("dcgm_p5_healthy.prom")

    errors = _race(lambda i: services.ingest(cluster, text.replace("ip-10-1-45-12", f"ip-10-7-0-{i}"), "push"),
                   THREADS)

    assert errors == []
    assert NodeHealth.objects.filter(cluster=cluster).count() == THREADS
    state = ClusterHealthState.objects.get(cluster=cluster)
    assert (state.nodes_known, state.totals["node_count"], state.totals["nodes_healthy"]) == (THREADS, THREADS, THREADS)
