"""Celery tasks of node remediation (queue "default"): they take primary keys and poll by retrying.

Actions are the "remediation" kind of ``portal.jobs``: the one sweep (``portal.jobs.sweep``) proposes what consent
policies remediate automatically, then sends actions the broker never got and actions whose worker died (no
heartbeat for ``REMEDIATION_STUCK_SECONDS``, lease run out). ``remediation.sweep``, the name the beat schedule
used before, still sweeps remediation alone.
"""
from __future__ import annotations

from celery import shared_task

from clusters.remediation import execution, services
from clusters.remediation.models import RemediationAction
from portal.jobs import registry


@shared_task(bind=True, name="remediation.run", max_retries=None, acks_late=True)
def run_remediation(self, action_id: int, attempt: int | None = None) -> str:
    """Step the action until it is done; ``attempt`` is its send number (older chains of polls stop)."""
    outcome, seconds = execution.step(action_id, attempt)
    if outcome == execution.POLL:
        raise self.retry(countdown=seconds, args=(action_id, attempt))
    return outcome


REMEDIATION = registry.register(registry.Kind(
    name="remediation", model=RemediationAction, task=run_remediation, stuck_setting="REMEDIATION_STUCK_SECONDS",
    extra=services.propose_automatic,
))


@shared_task(name="remediation.sweep")
def sweep() -> int:
    """Remediation's share of ``portal.jobs.sweep`` alone (the beat schedule's name before that): propose what
    consent policies remediate automatically, send actions the broker never got or whose worker died."""
    return registry.sweep_kind(REMEDIATION).sent
