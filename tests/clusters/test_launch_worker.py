"""Launches through a real worker process on Redis: end to end, and surviving a killed worker."""
from __future__ import annotations

import signal
import time

import pytest
from django.urls import reverse

from clusters.choices import ClusterState
from clusters.models import Cluster, Stack
from clusters.tasks import sweep_launch_jobs
from portal.core.aws import client as aws_client
from tests.clusters.conftest import start_worker
from tests.conftest import redis_url
from tests.workers import stop_worker

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


def _launch_report(cluster_pk: int) -> str:
    """What a failed wait leaves to read: the cluster, its jobs and the end of this process's worker log."""
    from pathlib import Path

    from django.conf import settings

    cluster = Cluster.objects.get(pk=cluster_pk)
    jobs = list(cluster.jobs.order_by("pk").values("pk", "kind", "status", "attempts", "polls", "aws_errors",
                                                   "dispatched_at", "started", "finished", "lease_until",
                                                   "heartbeat", "log"))
    log = Path(settings.TEST_VAR_DIR) / "celery-worker.log"
    tail = log.read_text(errors="replace").splitlines()[-30:] if log.exists() else []
    return "\n".join([f"cluster {cluster.name}: {cluster.state} {cluster.failure_reason} {cluster.error_message!r}",
                      *map(repr, jobs), "worker log:", *tail])


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
            _launch_report(cluster.pk)
        cluster.refresh_from_db()
        assert cluster.outputs["HeadNodeIp"] and cluster.jobs.get().status == "succeeded"
    finally:
        stop_worker(worker)


def test_an_eks_launch_becomes_ready_on_a_real_worker_and_shows_on_the_board(client, world, aws, redis_ready, quotas):
    from clusters.launches import kubernetes

    worker = start_worker(aws, "launch-eks", WORKER_ENV)
    try:
        client.force_login(world.lead_a)
        response = client.post(reverse("clusters-api:cluster-list"), {
            "organization": world.org_a.slug, "name": "eks-real", "blueprint": "hyperpod-eks", "full_stack": True,
            "parameters": {"network": {"AvailabilityZone": "ap-northeast-1a"},
                           "storage": {"CreateHomeFileSystem": "true"},
                           "cluster": {"WorkerInstanceType": "ml.p5.48xlarge", "WorkerCount": "2"}},
        }, content_type="application/json")
        assert response.status_code == 202, response.content
        cluster = Cluster.objects.get(pk=response.json()["id"])
        assert _wait(lambda: Cluster.objects.get(pk=cluster.pk).state in (ClusterState.READY, ClusterState.FAILED)), \
            _launch_report(cluster.pk)
        cluster.refresh_from_db()
        assert cluster.jobs.count() == 1, _launch_report(cluster.pk)
        job = cluster.jobs.get()
        assert cluster.state == ClusterState.READY and job.status == "succeeded", _launch_report(cluster.pk)
        assert cluster.orchestrator == "hyperpod-eks" and cluster.outputs["EksClusterArn"]
        assert "applied 5 objects in the EKS cluster" in job.log
        # What the worker applied is in the cluster's API server (the embedded endpoint, in this process).
        volume = kubernetes.connect(cluster).get("/api/v1/persistentvolumes/fsx-pv")
        assert volume["spec"]["csi"]["volumeHandle"] == cluster.outputs["LustreFileSystemId"]
        board = client.get(reverse("clusters:launch_day"))
        assert board.status_code == 200 and b"1 cluster \xc2\xb7 nothing in progress" in board.content
        assert b"eks-real" in client.get(reverse("clusters:cluster_list")).content
    finally:
        stop_worker(worker)


def _burst(world, count: int) -> list[Cluster]:
    """``count`` launches submitted through the launch service for organizations A and B (sent on commit)."""
    from clusters.launches import service as launch
    from tests.workloads.factories_workloads import InstanceQuotaFactory

    for org in (world.org_a, world.org_b):
        InstanceQuotaFactory(organization=org, instance_type_name="p5.48xlarge", count=2 * count)
    clusters = []
    for i in range(count):
        org = world.org_a if i % 2 else world.org_b
        submitted = launch.submit(launch.LaunchRequest(
            organization=org, name=f"k{i}", blueprint="parallelcluster", region=org.home_region, full_stack=True,
            parameters={"network": {"AvailabilityZone": "ap-northeast-1a"}, "storage": {"CreateHomeFileSystem": "true"},
                        "cluster": {"ComputeInstanceType": "p5.48xlarge", "ComputeMaxCount": "2"}}))
        assert submitted.created and submitted.dispatched
        clusters.append(submitted.cluster)
    return clusters


def test_a_worker_killed_during_a_burst_of_20_launches_costs_no_launch_and_no_duplicate(world, aws, redis_ready,
                                                                                          settings):
    """SIGKILL mid-burst: the sweep finds the dead worker's jobs once their heartbeat is older than
    CLUSTERS_STUCK_SECONDS and their lease ran out (short here, a minute each by default), and a new
    worker finishes them; adoption by tag keeps each stack single."""
    from clusters.models import LaunchJob

    settings.CLUSTERS_STUCK_SECONDS = 2
    worker = start_worker(aws, "doomed", WORKER_ENV)
    try:
        clusters = _burst(world, 20)
        # Kill it once the burst is under way: some launches mid-step, others queued or prefetched.
        assert _wait(lambda: Stack.objects.exclude(stack_id="").count() >= 3, timeout=60)
    finally:
        stop_worker(worker, signal.SIGKILL)
    killed_at = time.monotonic()
    from django.utils import timezone

    killed_wall = timezone.now()
    open_at_kill = set(LaunchJob.objects.filter(finished__isnull=True).values_list("pk", flat=True))
    assert open_at_kill, "the burst finished before the kill; nothing was tested"
    replacement = start_worker(aws, "replacement", WORKER_ENV)
    resumed_after = None
    try:
        def settled():
            nonlocal resumed_after
            if resumed_after is None and not LaunchJob.objects.filter(
                    pk__in=open_at_kill, finished__isnull=True, heartbeat__lt=killed_wall).exists():
                resumed_after = time.monotonic() - killed_at
            return not Cluster.objects.filter(state__in=[ClusterState.SCHEDULED, ClusterState.CREATING]).exists()

        assert _wait(settled, timeout=240, sweep=True), \
            list(Cluster.objects.values_list("name", "state", "error_message"))
    finally:
        stop_worker(replacement)
    print(f"\n{len(open_at_kill)} of 20 launches open at the kill; all resumed after {resumed_after:.1f} s")
    states = dict(Cluster.objects.values_list("name", "state"))
    assert set(states.values()) <= {ClusterState.READY, ClusterState.FAILED}, states
    for cluster in Cluster.objects.filter(state=ClusterState.FAILED):
        assert cluster.failure_reason and cluster.error_message, cluster.name
    assert not LaunchJob.objects.filter(finished__isnull=True).exists()
    assert Cluster.objects.filter(state=ClusterState.READY).count() == len(clusters)  # nothing here makes one fail
    for org in (world.org_a, world.org_b):
        summaries = aws_client("cloudformation", organization=org).list_stacks()["StackSummaries"]
        names = [s["StackName"] for s in summaries if s["StackName"].startswith("geniac-")
                 and "PclusterClusterProvider" not in s["StackName"]]
        ours = list(Stack.objects.filter(cluster__organization=org).values_list("stack_name", flat=True))
        assert sorted(names) == sorted(ours)  # each stack exactly once, none missing
