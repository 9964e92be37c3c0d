"""Celery tasks of the launch pipeline (queue "launches"): they take primary keys and poll by retrying."""
from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.db.models import Q
from django.utils import timezone

from clusters import conf, pipeline

logger = logging.getLogger(__name__)


def _run(task, job_id: int):
    outcome = pipeline.step(job_id)
    if outcome == pipeline.POLL:
        raise task.retry(countdown=conf.poll_seconds())
    return outcome


@shared_task(bind=True, name="clusters.tasks.launch_cluster", max_retries=None, acks_late=True)
def launch_cluster(self, job_id: int) -> str:
    """Create the cluster's stacks in order, polling each until it completes or fails."""
    return _run(self, job_id)


@shared_task(bind=True, name="clusters.tasks.delete_cluster", max_retries=None, acks_late=True)
def delete_cluster(self, job_id: int) -> str:
    """Delete the cluster's stacks in reverse order."""
    return _run(self, job_id)


@shared_task(name="clusters.tasks.sweep_launch_jobs")
def sweep_launch_jobs() -> int:
    """Send jobs the broker never got, and jobs whose worker died (no heartbeat, lease run out)."""
    from clusters.launch import dispatch
    from clusters.models import LaunchJob

    now = timezone.now()
    stale = now - timedelta(seconds=conf.stuck_seconds())
    rows = (LaunchJob.objects.filter(finished__isnull=True)
            .filter(Q(dispatched=False)
                    | (Q(heartbeat__lt=stale) | Q(heartbeat__isnull=True, created__lt=stale))
                    & (Q(lease_until__isnull=True) | Q(lease_until__lt=now))))
    sent = 0
    for job in rows:
        if dispatch(job):
            sent += 1
            LaunchJob.objects.filter(pk=job.pk).update(heartbeat=now)
    if sent:
        logger.info("sweep sent %d launch jobs", sent)
    return sent
