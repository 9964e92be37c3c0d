"""Celery tasks of the launch pipeline (queue "launches"): they take primary keys and poll by retrying."""
from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from clusters import pipeline

logger = logging.getLogger(__name__)


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


@shared_task(name="clusters.tasks.sweep_launch_jobs")
def sweep_launch_jobs() -> int:
    """Fail jobs past their deadline; send jobs the broker never got, and jobs whose worker died (no
    heartbeat for ``CLUSTERS_STUCK_SECONDS``, lease run out)."""
    from clusters.launch import dispatch
    from clusters.models import LaunchJob

    now = timezone.now()
    for job_id in LaunchJob.objects.filter(finished__isnull=True, deadline__lt=now).values_list("pk", flat=True):
        if pipeline.expire(job_id):
            logger.warning("launch job %s failed: past its deadline", job_id)
    stale = now - timedelta(seconds=settings.CLUSTERS_STUCK_SECONDS)
    rows = (LaunchJob.objects.filter(finished__isnull=True)
            .filter(Q(deadline__isnull=True) | Q(deadline__gte=now))
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
