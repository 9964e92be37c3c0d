"""Launches through a real worker process on Redis: end to end, and surviving a killed worker."""
from __future__ import annotations

import signal
import time

import pytest
from django.urls import reverse

from clusters.choices import ClusterState
from clusters.models import Cluster, Stack
from clusters.tasks import sweep_launch_jobs
from portal.aws import client as aws_client
from tests.clusters.conftest import start_worker, stop_worker
from tests.clusters.factories_clusters import launched_cluster
from tests.conftest import redis_url

WORKER_ENV = {"CLUSTERS_POLL_SECONDS": "1", "CLUSTERS_LEASE_SECONDS": "3"}
pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_ready(aws):
    import redis as redis_lib

    from portal.celery import app

    url = redis_url()
    if not url:
        pytest.skip("Redis is not reachable")
    redis_lib.Redis.from_url(url).flushdb()
    # Another test may have pointed the app at a broker that is gone: publish through a fresh pool.
    app.conf.broker_url = app.conf.broker_write_url = url
    app._pool = None
    app.amqp._producer_pool = None
    return url


def _wait(predicate, timeout=90, sweep=False):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sweep:
            sweep_launch_jobs()
        if predicate():
            return True
        time.sleep(0.5)
    return False


def test_a_launch_through_the_api_becomes_ready_on_a_real_worker(client, world, aws, redis_ready, quotas):
    worker = start_worker(aws, "launch", WORKER_ENV)
    try:
        client.force_login(world.lead_a)
        response = client.post(reverse("clusters-api:cluster-list"), {
            "organization": world.org_a.slug, "name": "real", "blueprint": "parallelcluster", "full_stack": True,
            "parameters": {"network": {"AvailabilityZone": "ap-northeast-1a"},
                           "storage": {"CreateHomeFileSystem": "true"},
                           "cluster": {"ComputeInstanceType": "p5.48xlarge", "ComputeMaxCount": "2"}},
        }, content_type="application/json")
        assert response.status_code == 202, response.content
        cluster = Cluster.objects.get(pk=response.json()["id"])
        assert _wait(lambda: Cluster.objects.get(pk=cluster.pk).state == ClusterState.READY), \
            Cluster.objects.get(pk=cluster.pk).error_message
        cluster.refresh_from_db()
        assert cluster.outputs["HeadNodeIp"] and cluster.jobs.get().status == "succeeded"
    finally:
        stop_worker(worker)


def test_a_killed_worker_leaves_no_duplicate_stack_and_the_launches_finish(world, aws, redis_ready, settings):
    settings.CLUSTERS_STUCK_SECONDS = 2
    clusters = [launched_cluster(world.org_a if i % 2 else world.org_b, name=f"k{i}") for i in range(6)]
    worker = start_worker(aws, "doomed", WORKER_ENV)
    try:
        for cluster in clusters:
            from clusters import launch

            launch.dispatch(cluster.jobs.get())
        # Kill it as soon as the first stack exists: the others are mid-step, queued or prefetched.
        assert _wait(lambda: Stack.objects.exclude(stack_id="").exists(), timeout=60)
    finally:
        stop_worker(worker, signal.SIGKILL)
    started = Stack.objects.exclude(stack_id="").count()
    assert Cluster.objects.filter(state=ClusterState.READY).count() < len(clusters)
    replacement = start_worker(aws, "replacement", WORKER_ENV)
    try:
        assert _wait(lambda: Cluster.objects.filter(state=ClusterState.READY).count() == len(clusters),
                     timeout=120, sweep=True), list(Cluster.objects.values_list("name", "state", "error_message"))
    finally:
        stop_worker(replacement)
    assert started >= 1
    for org in (world.org_a, world.org_b):
        summaries = aws_client("cloudformation", organization=org).list_stacks()["StackSummaries"]
        names = [s["StackName"] for s in summaries if s["StackName"].startswith("geniac-")
                 and "PclusterClusterProvider" not in s["StackName"]]
        ours = list(Stack.objects.filter(cluster__organization=org).values_list("stack_name", flat=True))
        assert sorted(names) == sorted(ours)  # each stack exactly once, none missing
