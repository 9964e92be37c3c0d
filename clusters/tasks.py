"""Celery tasks of the launch pipeline (queue "launches"): they take primary keys and poll by retrying.

Launch jobs are the "launch" kind of ``portal.core.jobs``: the one sweep (``portal.jobs.sweep``) fails the jobs past
their deadline, then sends the jobs the broker never got and the jobs whose worker died (no heartbeat for
``CLUSTERS_STUCK_SECONDS``, lease run out). ``clusters.tasks.sweep_launch_jobs``, the name the beat schedule used
before, still sweeps launch jobs alone.
"""
from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.db.models import Q

from clusters.choices import ClusterJobKind
from clusters.launches.pipeline import steps as pipeline
from clusters.models import LaunchJob
from portal.core.jobs import registry


def _run(task, job_id: int, attempt: int | None):
    outcome = pipeline.step(job_id, attempt)
    if outcome == pipeline.POLL:
        raise task.retry(countdown=settings.CLUSTERS_POLL_SECONDS)
    return outcome


@shared_task(bind=True, name="clusters.tasks.launch_cluster", max_retries=None, acks_late=True)
def launch_cluster(self, job_id: int, attempt: int | None = None) -> str:
    """Create the cluster's stacks in order, polling each until it completes or fails.

    ``attempt`` is the job's send number (see ``launch.dispatch``); retries carry it along."""
    return _run(self, job_id, attempt)


@shared_task(bind=True, name="clusters.tasks.delete_cluster", max_retries=None, acks_late=True)
def delete_cluster(self, job_id: int, attempt: int | None = None) -> str:
    """Delete the cluster's stacks in reverse order."""
    return _run(self, job_id, attempt)


def task_for(job: LaunchJob):
    return delete_cluster if job.kind == ClusterJobKind.DELETE else launch_cluster


LAUNCH = registry.register(registry.JobKindSpec(
    name="launch", model=LaunchJob, task=task_for, stuck_setting="CLUSTERS_STUCK_SECONDS",
    # a job past its deadline is failed by expire_overdue, not sent again
    only=lambda now: Q(deadline__isnull=True) | Q(deadline__gte=now),
    extra=pipeline.expire_overdue,
))


@shared_task(name="clusters.tasks.sweep_launch_jobs")
def sweep_launch_jobs() -> int:
    """The launch jobs' share of ``portal.jobs.sweep`` alone (the beat schedule's name before that); answers how
    many jobs it sent."""
    return registry.recover_kind(LAUNCH).sent
