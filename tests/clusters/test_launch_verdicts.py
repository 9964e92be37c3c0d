"""A cluster's final state and its job's verdict commit together: whoever reads the cluster ready, failed or
deleted (a page, the API, a test polling beside a worker) reads its job finished, with its whole log."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from clusters.choices import ClusterJobKind, ClusterState, JobStatus
from clusters.launches import service as launch
from clusters.launches.pipeline import steps as pipeline
from clusters.models import FINISHED_STATES, Cluster, LaunchJob
from tests.clusters.factories_clusters import launched_cluster, run_pipeline

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def at_commit(monkeypatch):
    """For each final state a cluster moves to: what its latest job's row says once that state has committed."""
    seen = []
    real = Cluster.transition

    def transition(self, to, **kwargs):
        real(self, to, **kwargs)
        if to in FINISHED_STATES:
            def read(cluster_pk=self.pk, state=to):
                job = LaunchJob.objects.filter(cluster_id=cluster_pk).order_by("-pk").first()
                seen.append((state, job.kind, job.status, job.finished is not None, job.lease_until, job.log))
            transaction.on_commit(read)

    monkeypatch.setattr(Cluster, "transition", transition)
    return seen


def test_a_cluster_reads_ready_only_with_its_launch_job_succeeded_and_its_log_complete(world, aws, at_commit):
    cluster = launched_cluster(world.org_a, name="verdict")
    run_pipeline(cluster.jobs.get())
    [(state, kind, status, finished, lease, log)] = at_commit
    assert (state, kind, status, finished, lease) == (ClusterState.READY, ClusterJobKind.LAUNCH, JobStatus.SUCCEEDED, True,
                                                      None)
    assert log.rstrip().endswith("cluster ready")
    assert LaunchJob.objects.get(cluster=cluster).aws_errors == 0


def test_a_cluster_reads_deleted_only_with_its_delete_job_succeeded(world, aws, at_commit):
    cluster = launched_cluster(world.org_a, name="gone")
    run_pipeline(cluster.jobs.get())
    run_pipeline(launch.request_delete(Cluster.objects.get(pk=cluster.pk), confirmed=True))
    state, kind, status, finished, lease, log = at_commit[-1]
    assert (state, kind, status, finished, lease) == (ClusterState.DELETED, ClusterJobKind.DELETE, JobStatus.SUCCEEDED,
                                                      True, None)
    assert log.rstrip().endswith("cluster deleted")


def test_a_cluster_reads_failed_only_with_its_job_failed_and_the_reason_in_its_log(world, at_commit):
    cluster = launched_cluster(world.org_a, name="late", full_stack=False, blueprint="observability")
    LaunchJob.objects.filter(cluster=cluster).update(deadline=timezone.now() - timedelta(minutes=1))
    assert pipeline.step(cluster.jobs.get().pk) == pipeline.DONE
    [(state, kind, status, finished, lease, log)] = at_commit
    assert (state, kind, status, finished, lease) == (ClusterState.FAILED, ClusterJobKind.LAUNCH, JobStatus.FAILED, True,
                                                      None)
    assert "failed: The launch job did not finish within its deadline" in log
    assert LaunchJob.objects.get(cluster=cluster).error.startswith("The launch job did not finish")


def test_the_sweep_expiring_a_job_fails_its_cluster_and_the_job_in_one_commit(world, at_commit):
    cluster = launched_cluster(world.org_a, name="stuck", full_stack=False, blueprint="observability")
    job = cluster.jobs.get()
    LaunchJob.objects.filter(pk=job.pk).update(deadline=timezone.now() - timedelta(minutes=1))
    assert pipeline.expire(job.pk) is True
    assert pipeline.expire(job.pk) is False  # finished: nothing to claim
    [(state, _kind, status, finished, lease, _log)] = at_commit
    assert (state, status, finished, lease) == (ClusterState.FAILED, JobStatus.FAILED, True, None)
