"""Celery tasks of node remediation (queue "default"): they take primary keys and poll by retrying.

Actions are the "remediation" kind of ``portal.core.jobs``: the one sweep (``portal.jobs.sweep``) proposes what consent
policies remediate automatically, then sends actions the broker never got and actions whose worker died (no
heartbeat for ``REMEDIATION_STUCK_SECONDS``, lease run out). ``remediation.sweep``, the name the beat schedule
used before, still sweeps remediation alone.
"""
from __future__ import annotations

import logging

from celery import shared_task

from clusters.remediation import execution, hyperpod_signals, providers, services
from clusters.remediation.choices import ConsentMode
from clusters.remediation.models import RemediationAction, RemediationPolicy
from portal.core import access, jobs
from portal.core.aws import AwsError
from portal.core.jobs import registry

logger = logging.getLogger(__name__)

HEALTH_FAULT = "health_fault"  # the event ``clusters.health.ingest.service`` announces new critical faults with


@shared_task(bind=True, name="remediation.run", max_retries=None, acks_late=True)
def run_remediation(self, action_id: int, attempt: int | None = None) -> str:
    """Step the action until it is done; ``attempt`` is its send number (older chains of polls stop)."""
    outcome, seconds = execution.step(action_id, attempt)
    if outcome == execution.POLL:
        raise self.retry(countdown=seconds, args=(action_id, attempt))
    return outcome


@shared_task(name="remediation.propose_automatic")
def propose_automatic() -> int:
    """Propose (and so start) what consent policies remediate automatically, now rather than at the next sweep."""
    return services.propose_automatic()


def on_event(event) -> None:
    """A listener of ``portal.core.notifications`` (registered in the app's ``ready()``): a new critical health fault of
    an organization under automatic consent sends the proposal at once. Waiting for the minute's sweep made the
    provider call up to a minute and more after the fault was stored (bench/time_to_know.py); the sweep still
    proposes what this send loses (a broker down)."""
    if event.kind != HEALTH_FAULT or not RemediationPolicy.objects.filter(
            organization_id=event.organization_id, mode=ConsentMode.AUTOMATIC).exists():
        return
    jobs.send_on_commit(propose_automatic)


REMEDIATION = registry.register(registry.JobKindSpec(
    name="remediation", model=RemediationAction, task=run_remediation, stuck_setting="REMEDIATION_STUCK_SECONDS",
    extra=services.propose_automatic,
))


@shared_task(name="remediation.sweep")
def sweep() -> int:
    """Remediation's share of ``portal.jobs.sweep`` alone (the beat schedule's name before that): propose what
    consent policies remediate automatically, send actions the broker never got or whose worker died."""
    return registry.recover_kind(REMEDIATION).sent


@shared_task(name="remediation.poll_hyperpod_events")
def poll_hyperpod_events() -> int:
    """Periodic: queue one read of HyperPod's events per ready HyperPod cluster (an archived cycle's cluster is
    not read: the access policy's archived rule)."""
    ids = list(access.not_archived(hyperpod_signals.ready_clusters()).values_list("pk", flat=True))
    for pk in ids:
        jobs.send(poll_cluster_events, pk)
    return len(ids)


@shared_task(name="remediation.poll_cluster_events")
def poll_cluster_events(cluster_id: int) -> int:
    """Read one HyperPod cluster's new events and handle each once; an AWS error is kept on its cursor and the next
    minute's read tries again (the cursor has not moved)."""
    cluster = hyperpod_signals.ready_clusters().select_related("organization").filter(pk=cluster_id).first()
    if cluster is None:
        return 0
    try:
        return len(hyperpod_signals.poll(cluster).kept)
    except (AwsError, providers.Failed) as exc:
        logger.warning("HyperPod events of cluster %s not read: %s", cluster_id, exc)
        return 0
