"""Celery tasks of node remediation (queue "default"): they take primary keys and poll by retrying."""
from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from clusters.remediation import execution

logger = logging.getLogger(__name__)


@shared_task(bind=True, name="remediation.run", max_retries=None, acks_late=True)
def run_remediation(self, action_id: int, attempt: int | None = None) -> str:
    """Step the action until it is done; ``attempt`` is its send number (older chains of polls stop)."""
    outcome, seconds = execution.step(action_id, attempt)
    if outcome == execution.POLL:
        raise self.retry(countdown=seconds, args=(action_id, attempt))
    return outcome


@shared_task(name="remediation.sweep")
def sweep() -> int:
    """Propose what consent policies remediate automatically; send actions the broker never got, and actions
    whose worker died (no heartbeat for ``REMEDIATION_STUCK_SECONDS``, lease run out)."""
    from clusters.remediation import services  # services imports this module to dispatch: a real import cycle
    from clusters.remediation.models import RemediationAction

    services.propose_automatic()
    now = timezone.now()
    stale = now - timedelta(seconds=settings.REMEDIATION_STUCK_SECONDS)
    rows = (RemediationAction.objects.filter(state__in=execution.STEPPED)
            .filter(Q(dispatched=False)
                    | (Q(heartbeat__lt=stale) | Q(heartbeat__isnull=True, approved_at__lt=stale))
                    & (Q(lease_until__isnull=True) | Q(lease_until__lt=now))))
    sent = 0
    for action in rows:
        if services.dispatch(action):
            sent += 1
            RemediationAction.objects.filter(pk=action.pk).update(heartbeat=now)
    if sent:
        logger.info("remediation sweep sent %d actions", sent)
    return sent
