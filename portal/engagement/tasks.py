"""Background work of the engagement app: logging a Slack thread off the shortcut's request.

A capture is the "slack capture" kind of ``portal.core.jobs``: the one sweep (``portal.jobs.sweep``) sends the captures
the broker could not take; ``engagement.sweep_captures``, the name the beat schedule used before, sends them
alone. Replies in Slack threads are notification deliveries (``portal.core.notifications``, channel "thread"), sent by
its ``deliver`` task and swept like the others."""
from __future__ import annotations

import datetime
import logging

from celery import shared_task

from portal.core import jobs
from portal.core.jobs import registry
from portal.engagement import cycles, slack
from portal.engagement.models import SlackCapture

logger = logging.getLogger(__name__)

CAPTURE_RETRIES = 5
CAPTURE_BACKOFF = 10  # seconds, doubled per retry, when Slack gives no Retry-After


@shared_task(bind=True, name="engagement.capture_thread", max_retries=CAPTURE_RETRIES, acks_late=True)
def capture_thread(self, capture_id: int) -> str:
    """Read the thread from Slack and log it as an interaction (once per message); retried with backoff on rate
    limits (Slack's Retry-After) and failures, then recorded as failed and told to the user."""
    try:
        return slack.capture(capture_id)
    except slack.TryLater as exc:
        if self.request.retries >= self.max_retries:
            logger.error("Slack capture %s failed after %s attempts: %s", capture_id, self.request.retries + 1, exc)
            return slack.fail(capture_id, f"{exc}; tried {self.request.retries + 1} times, use the shortcut again.")
        countdown = exc.retry_after if exc.retry_after is not None else CAPTURE_BACKOFF * 2 ** self.request.retries
        raise self.retry(exc=exc, countdown=min(countdown, 600)) from exc


def send_capture(capture_id: int) -> None:
    """Send the capture's task after commit; when the broker cannot take it, the sweep sends it later."""
    SlackCapture.mark_dispatched(capture_id, True)
    jobs.send_on_commit(capture_thread, capture_id, on_failure=lambda: SlackCapture.mark_dispatched(capture_id, False))


KIND = registry.register(registry.JobKindSpec(name="slack capture", model=SlackCapture, task=capture_thread, numbered=False,
                                       limit=200))


@shared_task(name="engagement.sweep_captures")
def sweep_captures(limit: int = 200) -> int:
    """The captures' share of ``portal.jobs.sweep`` alone (the beat schedule's name before that): send the captures
    the broker could not take when the shortcut was used."""
    return registry.recover_kind(KIND, limit=limit).sent


@shared_task(name="engagement.switch_cycles")
def switch_cycles(on: str | None = None) -> int | None:
    """Periodic: when a scheduled next cycle's start date has come (``on``, an ISO date, defaults to today in the
    program's time zone), archive the active cycle and make the next one active, carrying what is live over.
    Answers the new cycle's id, or None when nothing was due (every later run of the day)."""
    started = cycles.switch_due(datetime.date.fromisoformat(on) if on else None)
    if started is not None:
        logger.info("Cycle switch: %s is active from %s", started, started.starts_on)
    return started.pk if started is not None else None
