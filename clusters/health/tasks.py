"""Background work of the health app (routed to the "health" queue by the task name).

Health pushes and validation jobs are kinds of ``portal.core.jobs`` ("push", "validation"), registered here with their
tasks; the jobs' periodic recovery (``portal.jobs.sweep``) sends what the broker missed, deletes the bodies finished
pushes left behind and times out validation jobs that never reported. ``recover_pushes`` and ``recover_validations``
recover their kind alone, under the task names the beat schedule used before (``sweep_pushes``,
``sweep_validations``), kept so a message already queued under them finds its task. (In health, a "sweep" is the
pairwise NCCL run.)"""
from __future__ import annotations

import logging
import os

from celery import shared_task
from celery.signals import worker_init
from django.urls import get_resolver
from django.utils import timezone

from clusters.health.choices import Source
from clusters.health.ingest import pull as prometheus_pull
from clusters.health.ingest import pushes
from clusters.health.ingest import service as services
from clusters.health.models import ClusterHealthConfig, HealthPush, ValidationJob
from clusters.health.readers import exposition  # noqa: F401 - loaded in the worker's parent for its compiled patterns
from clusters.health.readers.prometheus import ParseError
from clusters.health.validation import service as validation
from portal.core import access, jobs
from portal.core.jobs import registry

logger = logging.getLogger(__name__)


@worker_init.connect
def load_before_the_first_push(**_kwargs) -> None:
    """Load, in the worker's parent before its pool forks, what the first push would otherwise load inside
    its lease: the URL configuration (``reverse`` in the fault announcement imports every app's views on
    its first call: seconds on a loaded machine); the reader is imported with this module."""
    get_resolver().url_patterns  # noqa: B018 - the property imports the URL modules


@shared_task(name="clusters.health.tasks.pull_all")
def pull_all() -> int:
    """Periodic: queue one pull per cluster with a Prometheus endpoint configured (an archived cycle's cluster
    takes no more health: the access policy's archived rule, through the cluster)."""
    ids = list(access.not_archived(ClusterHealthConfig.objects.filter(pull_enabled=True).exclude(pull_url=""))
               .values_list("pk", flat=True))
    for pk in ids:
        jobs.send(pull_cluster, pk)
    return len(ids)


@shared_task(name="clusters.health.tasks.pull_cluster")
def pull_cluster(config_id: int) -> int | None:
    """Pull one cluster's health and ingest it; the error is kept on the settings row."""
    config = ClusterHealthConfig.objects.select_related("cluster__organization").filter(pk=config_id).first()
    if config is None or not config.pull_url:
        return None
    try:
        scrape = prometheus_pull.pull(config)
        ingested = services.ingest(config.cluster, scrape, Source.PULL)
    except (prometheus_pull.PullError, ParseError) as exc:
        # PullError's text is the portal's own sentence (the endpoint's answer is never kept).
        reason = str(exc) if isinstance(exc, prometheus_pull.PullError) else "The endpoint's series could not be read."
        logger.warning("health pull of cluster %s failed: %s", config.cluster_id, reason)
        ClusterHealthConfig.objects.filter(pk=config.pk).update(
            last_pull_at=timezone.now(), last_pull_error=reason[:500], last_pull_status=getattr(exc, "status", None))
        return None
    ClusterHealthConfig.objects.filter(pk=config.pk).update(last_pull_at=timezone.now(), last_pull_error="",
                                                            last_pull_status=200)
    return ingested.report.pk


@shared_task(bind=True, name="clusters.health.tasks.process_push", max_retries=None)
def process_push(self, push_id: int) -> int | None:
    """Parse and ingest one pushed scrape (see ``clusters.health.ingest.pushes``); a storage outage is waited out with
    backoff (the push stays pending; ``pushes.process`` fails it once it waited as long as a push may)."""
    try:
        report = pushes.process(push_id, outages=self.request.retries or 0)
    except pushes.StorageWait as wait:
        if not wait.countdown:
            return None
        raise self.retry(countdown=wait.countdown) from None
    # The parse streams, so a push's size should not show here; the high-water mark tells if one ever did.
    logger.info("push %s processed: report %s; worker process %s peak memory %s kB", push_id,
                report.pk if report else None, os.getpid(), pushes.peak_memory_kb())
    return report.pk if report else None


PUSH = registry.register(registry.JobKindSpec(
    name="push", model=HealthPush, task=process_push, numbered=False, waiting=pushes.waiting,
    extra=pushes.delete_leftover_bodies, extra_last=True,
))


@shared_task(name="clusters.health.tasks.sweep_pushes")  # the registered name before: kept
def recover_pushes() -> int:
    """The pushes' share of ``portal.jobs.sweep`` alone (the beat schedule's name before that): send the pushes
    left pending by a broker outage, or held by a worker that died."""
    return pushes.recover()


@shared_task(bind=True, name="clusters.health.tasks.run_validation", max_retries=None, acks_late=True)
def run_validation(self, job_id: int, attempt: int | None = None) -> str:
    """Submit a validation job on its cluster's head node and follow the command until Slurm has it;
    ``attempt`` is its send number (older chains of polls stop)."""
    outcome, seconds = validation.step(job_id, attempt)
    if outcome == validation.POLL:
        raise self.retry(countdown=seconds, args=(job_id, attempt))
    return outcome


@shared_task(bind=True, name="clusters.health.tasks.cancel_validation", max_retries=30, acks_late=True)
def cancel_validation(self, job_id: int) -> str:
    """Stop a cancelled validation's Slurm job: ``scancel`` through SSM on the head node, followed to its answer."""
    outcome, seconds = validation.cancel_step(job_id)
    if outcome == validation.POLL:
        raise self.retry(countdown=seconds, args=(job_id,))
    return outcome


VALIDATION = registry.register(registry.JobKindSpec(
    name="validation", model=ValidationJob, task=run_validation, stuck_setting="VALIDATION_STUCK_SECONDS",
    extra=validation.time_out,
))


@shared_task(name="clusters.health.tasks.sweep_validations")  # the registered name before: kept
def recover_validations() -> int:
    """The validation jobs' share of ``portal.jobs.sweep`` alone (the beat schedule's name before that): time out
    validation jobs that never reported; send the ones the broker lost."""
    timed_out, sent = validation.recover()
    if timed_out or sent:
        logger.info("validation recovery: %d timed out, %d sent", timed_out, sent)
    return timed_out + sent
