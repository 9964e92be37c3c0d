"""The accelerator-hours of a known history, to the exact value: a P5 cluster of 16 nodes up 10 h, 2 nodes
unhealthy for 3 h, GPUs 60 % busy, under a reservation of 20 instances."""
from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from clusters.accounting import services
from clusters.accounting.compute import HOUR
from clusters.accounting.models import AcceleratorUsage, Granularity
from clusters.choices import ClusterState
from clusters.health.ingest import service as health
from clusters.models import Cluster
from portal.core.models import TimelineEntry
from portal.core.timeline_views import with_tag
from tests.accounting.scrapes import p5_scrape
from tests.clusters.factories_clusters import ClusterFactory
from tests.concurrency import race
from workloads.models import CapacityReservation


def start_of_history() -> datetime.datetime:
    return services.midnight(timezone.localdate() - datetime.timedelta(days=2))


def build_history(org) -> Cluster:
    """Scheduled at t0 - 1 h, ready at t0, deleting and deleted at t0 + 10 h;
    two full pulls an hour, 2 nodes with XID 79 in hours 3, 4 and 5, every GPU 60 % busy."""
    t0 = start_of_history()
    cluster = ClusterFactory(organization=org, name="known-history", instance_type="p5.48xlarge", node_count=16,
                             state=ClusterState.SCHEDULED)
    Cluster.objects.filter(pk=cluster.pk).update(created=t0 - HOUR)
    for state, at in ((ClusterState.CREATING, t0 - HOUR / 2), (ClusterState.READY, t0),
                      (ClusterState.DELETING, t0 + 10 * HOUR),
                      (ClusterState.DELETED, t0 + 10 * HOUR)):
        cluster.transition(state)
        with_tag(TimelineEntry.objects.filter(object_id=cluster.pk), state).update(occurred_at=at)
    cluster.refresh_from_db()
    for hour in range(10):
        for minute in (10, 40):
            text = p5_scrape(16, busy=0.6, unhealthy=2 if hour in (3, 4, 5) else 0)
            health.ingest(cluster, text, "pull", scope="full",
                          received_at=t0 + hour * HOUR + datetime.timedelta(minutes=minute))
    CapacityReservation.objects.create(
        organization=org, reservation_id="cr-0123456789abcdef0", instance_type_name="p5.48xlarge", count=20,
        region="ap-northeast-1", availability_zone="ap-northeast-1a", start=timezone.localdate(t0),
        end=timezone.localdate(t0))
    return cluster


@pytest.mark.django_db
def test_known_history_to_the_exact_gpu_hour(world):
    cluster = build_history(world.org_a)
    t0 = start_of_history()
    assert services.store(t0 - 3 * HOUR, t0 + 14 * HOUR) == 10
    rows = list(AcceleratorUsage.objects.filter(cluster=cluster).order_by("start"))
    assert [r.start for r in rows] == [t0 + h * HOUR for h in range(10)]
    for h, row in enumerate(rows):
        healthy = Decimal(112 if h in (3, 4, 5) else 128)
        assert (row.held, row.healthy, row.busy, row.measured, row.reports) == (
            Decimal(128), healthy, healthy * Decimal("0.6"), healthy, 2), h
    org = services.organization_figures([world.org_a.pk], t0, t0 + 10 * HOUR)[world.org_a.pk]
    assert org["reserved"] == 1600.0  # 20 instances × 8 GPUs × 10 h
    assert org["held"] == 1280.0  # 16 × 8 × 10
    assert org["healthy"] == 1232.0  # 16 × 8 × 7 + 14 × 8 × 3
    assert org["busy"] == pytest.approx(739.2, abs=1e-9)  # 60 % of 1,232
    assert org["lost_unheld"] == 320.0
    assert org["lost_unhealthy"] == 48.0
    assert org["lost_idle"] == pytest.approx(492.8, abs=1e-9)
    assert org["goodput"] == 0.462
    # Computing again, or a range that overlaps, changes nothing.
    services.store(t0, t0 + 12 * HOUR)
    assert AcceleratorUsage.objects.filter(cluster=cluster).count() == 10
    assert services.organization_figures([world.org_a.pk], t0, t0 + 10 * HOUR)[world.org_a.pk] == org
    assert services.organization_figures([world.org_b.pk], t0, t0 + 10 * HOUR) == {}


@pytest.mark.django_db
def test_roll_up_keeps_every_figure(world, settings):
    cluster = build_history(world.org_a)
    t0 = start_of_history()
    services.store(t0, t0 + 12 * HOUR)
    settings.ACCOUNTING_HOURLY_WEEKS = 0  # everything before today's midnight is rolled up
    assert services.roll_up() == 1
    day = AcceleratorUsage.objects.get(cluster=cluster)
    assert (day.granularity, day.start) == (Granularity.DAY, t0)
    assert (day.held, day.healthy, day.busy) == (Decimal(1280), Decimal(1232), Decimal("739.2"))
    assert services.organization_figures(None, t0, t0 + 24 * HOUR)[world.org_a.pk]["busy"] == pytest.approx(739.2)
    # A back-fill reaching into rolled-up days recomputes whole days: the day row is replaced, not added to.
    services.store(t0 + 2 * HOUR, t0 + 3 * HOUR)
    day = AcceleratorUsage.objects.get(cluster=cluster)
    assert (day.held, day.healthy, day.busy) == (Decimal(1280), Decimal(1232), Decimal("739.2"))


@pytest.mark.django_db
def test_held_healthy_busy_is_a_database_rule(world):
    cluster = ClusterFactory(organization=world.org_a)
    for held, healthy, busy in ((1, 2, 0), (2, 1, 2), (1, 1, -1)):
        with pytest.raises(IntegrityError), transaction.atomic():
            AcceleratorUsage.objects.create(cluster=cluster, organization=world.org_a, start=timezone.now(),
                                            held=held, healthy=healthy, busy=busy)


@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_write_the_same_rows(world, settings):
    if "postgresql" not in settings.DATABASES["default"]["ENGINE"]:
        pytest.skip("the race needs PostgreSQL")
    cluster = build_history(world.org_a)
    t0 = start_of_history()
    results = race(2, lambda i: services.store(t0, t0 + 12 * HOUR))
    assert results == [10, 10]
    rows = AcceleratorUsage.objects.filter(cluster=cluster)
    assert rows.count() == 10 and sum(r.busy for r in rows) == Decimal("739.2")
    settings.ACCOUNTING_HOURLY_WEEKS = 0
    results = race(2, lambda i: services.roll_up())
    assert sorted(results) == [0, 1]  # the second waited for the first, then found nothing left
    day = AcceleratorUsage.objects.get(cluster=cluster)
    assert (day.held, day.healthy, day.busy) == (Decimal(1280), Decimal(1232), Decimal("739.2"))
