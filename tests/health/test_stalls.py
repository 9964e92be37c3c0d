"""Training stalled?: a busy cluster whose GPUs drop near zero with its EFA traffic flat for the stall minutes opens
one cluster-wide fault (announced like a critical GPU fault, with the traces that opened it), cleared when work
resumes; never for a cluster idle from the start or without EFA counters; one per cluster under concurrent checks."""
from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from clusters.accounting.models import AccountingSettings
from clusters.choices import ClusterState
from clusters.health.faults import stalls
from clusters.health.ingest import service as health
from clusters.health.models import GpuFault, HealthReport
from portal.core.models import NotificationDelivery, NotificationSetting, TimelineEntry
from tests.accounting.scrapes import p5_scrape
from tests.clusters.factories_clusters import ClusterFactory
from tests.concurrency import race

MINUTE = datetime.timedelta(minutes=1)
BUSY_RATE = 5_000_000_000  # bytes a second per node while the run's collectives move
NODES = 4


def reports(cluster, start, busy_then_flat: list[tuple[float, bool]], *, efa: bool = True, bytes0: int = 10**12):
    """One full pull every 5 minutes from ``start``: (busy share, EFA traffic moving) each."""
    counter = bytes0
    for i, (busy, moving) in enumerate(busy_then_flat):
        if moving and i:
            counter += BUSY_RATE * 300
        health.ingest(cluster, p5_scrape(NODES, busy=busy, efa_bytes=counter if efa else None), "pull",
                      scope="full", received_at=start + 5 * i * MINUTE)


def stall_faults(cluster):
    return GpuFault.objects.filter(cluster=cluster, kind=stalls.KIND)


@pytest.fixture
def cluster(world):
    return ClusterFactory(organization=world.org_a, node_count=NODES, state=ClusterState.READY)


@pytest.mark.django_db
def test_a_busy_run_that_goes_flat_opens_one_fault_announced_and_cleared_on_resume(
        world, cluster, client, django_capture_on_commit_callbacks):
    NotificationSetting.objects.create(name="#program", email_recipients="sre@example.com", min_severity="critical",
                                       include_internal=True)
    start = timezone.now() - datetime.timedelta(hours=2)
    busy = [(0.9, True)] * 6
    with django_capture_on_commit_callbacks(execute=True):
        # Low from the 7th report on (t + 30 min): 10 minutes low is not yet a stall, 15 is.
        reports(cluster, start, busy + [(0.01, False)] * 3)
        assert not stall_faults(cluster).exists()
        reports(cluster, start + 45 * MINUTE, [(0.01, False)], bytes0=10**12 + BUSY_RATE * 300 * 5)
        fault = stall_faults(cluster).get()
        assert (fault.hostname, fault.severity, fault.cleared_at) == ("", "critical", None)
        assert fault.first_seen == start + 45 * MINUTE
        trace = fault.evidence["trace"]
        assert [p["busy"] for p in trace[-4:]] == [0.01] * 4 and trace[-5]["busy"] == 0.9
        assert trace[-1]["efa_rate"] == 0 and trace[-5]["efa_rate"] == BUSY_RATE
        # More flat reports: still the one fault, no second announcement; per-node reconciliation leaves it open.
        reports(cluster, start + 50 * MINUTE, [(0.01, False)] * 2, bytes0=10**12 + BUSY_RATE * 300 * 5)
        assert stall_faults(cluster).filter(cleared_at__isnull=True).count() == 1
    assert NotificationDelivery.objects.filter(event_kind="health_fault").count() == 1
    assert TimelineEntry.objects.filter(title__contains="training stalled?").count() == 1
    # The cluster's health page shows it with its traces, to the organization only.
    client.force_login(world.customer_a)
    page = client.get(reverse("health:cluster_health", args=[cluster.pk])).content.decode()
    assert "training stalled?" in page and "EFA traffic" in page
    api = client.get(reverse("health-api:gpufault-list"), {"open": "true", "cluster": cluster.pk}).json()
    (row,) = [r for r in (api["results"] if isinstance(api, dict) else api) if r["kind"] == stalls.KIND]
    assert row["evidence"]["trace"][-1]["busy"] == 0.01 and row["hostname"] == ""
    client.force_login(world.customer_b)
    assert client.get(reverse("health:cluster_health", args=[cluster.pk])).status_code == 404
    # Work resumes: cleared.
    reports(cluster, start + 60 * MINUTE, [(0.9, True)], bytes0=10**12 + BUSY_RATE * 300 * 6)
    fault.refresh_from_db()
    assert fault.cleared_at == start + 60 * MINUTE


@pytest.mark.django_db
def test_idle_from_the_start_or_without_efa_counters_is_not_a_stall(world, cluster):
    start = timezone.now() - datetime.timedelta(hours=3)
    reports(cluster, start, [(0.01, False)] * 12)  # never busy in sight: idle capacity, not a stall
    other = ClusterFactory(organization=world.org_a, node_count=NODES, state=ClusterState.READY)
    reports(other, start, [(0.9, True)] * 4 + [(0.01, False)] * 8, efa=False)  # flat GPUs, EFA unknown
    moving = ClusterFactory(organization=world.org_a, node_count=NODES, state=ClusterState.READY)
    reports(moving, start, [(0.9, True)] * 4 + [(0.01, True)] * 8)  # GPUs low but traffic moves
    assert not GpuFault.objects.filter(kind=stalls.KIND).exists()


@pytest.mark.django_db
def test_the_organizations_stall_minutes_are_used(world, cluster):
    AccountingSettings.objects.create(organization=world.org_a, stall_minutes=30)
    start = timezone.now() - datetime.timedelta(hours=2)
    reports(cluster, start, [(0.9, True)] * 4 + [(0.01, False)] * 5)  # 20 minutes low
    assert not stall_faults(cluster).exists()
    reports(cluster, start + 45 * MINUTE, [(0.01, False)] * 2, bytes0=10**12 + BUSY_RATE * 300 * 3)  # 30 minutes
    assert stall_faults(cluster).count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="concurrent writers need PostgreSQL (SQLite serializes the whole database)")
def test_concurrent_checks_open_one_fault(world, monkeypatch):
    cluster = ClusterFactory(organization=world.org_a, node_count=NODES, state=ClusterState.READY)
    start = timezone.now() - datetime.timedelta(hours=2)
    GpuFault.objects.filter(kind=stalls.KIND).delete()
    # The history of a stall, stored without the check (as if the checks had not run yet).
    real_check = stalls.check
    with monkeypatch.context() as patched:
        patched.setattr(stalls, "check", lambda cluster, report, **kwargs: None)
        reports(cluster, start, [(0.9, True)] * 4 + [(0.01, False)] * 5)
    assert stalls.check is real_check and not stall_faults(cluster).exists()
    report = HealthReport.objects.filter(cluster=cluster).latest("received_at")
    results = race(4, lambda i: stalls.check(cluster, report))
    assert not [r for r in results if isinstance(r, BaseException)]
    assert len([r for r in results if r is not None]) == 1
    assert stall_faults(cluster).count() == 1
