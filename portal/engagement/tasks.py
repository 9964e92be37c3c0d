"""Background work of the engagement app: logging a Slack thread off the shortcut's request.

Replies in Slack threads are notification deliveries (``portal.notifications``, channel "thread"), sent by its
``deliver`` task and swept like the others."""
from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

logger = logging.getLogger(__name__)

CAPTURE_RETRIES = 5
CAPTURE_BACKOFF = 10  # seconds, doubled per retry, when Slack gives no Retry-After


@shared_task(bind=True, name="engagement.capture_thread", max_retries=CAPTURE_RETRIES, acks_late=True)
def capture_thread(self, capture_id: int) -> str:
    """Read the thread from Slack and log it as an interaction (once per message); retried with backoff on rate
    limits (Slack's Retry-After) and failures, then recorded as failed and told to the user."""
    from portal.engagement import slack

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
    from portal import jobs
    from portal.engagement.models import SlackCapture

    def unqueue() -> None:
        SlackCapture.objects.filter(pk=capture_id).update(queued_at=None)

    SlackCapture.objects.filter(pk=capture_id).update(queued_at=timezone.now())
    jobs.send_on_commit(capture_thread, capture_id, on_failure=unqueue)


@shared_task(name="engagement.sweep_captures")
def sweep_captures(limit: int = 200) -> int:
    """Send the captures the broker could not take when the shortcut was used (periodic, every minute)."""
    from portal import jobs
    from portal.engagement.models import SlackCapture

    sent = 0
    waiting = SlackCapture.objects.filter(queued_at__isnull=True).exclude(finished_at__isnull=False)
    for pk in waiting.order_by("created").values_list("pk", flat=True)[:limit]:
        if not SlackCapture.objects.filter(pk=pk, queued_at__isnull=True).update(queued_at=timezone.now()):
            continue  # another sweep claimed it
        if not jobs.send(capture_thread, pk):
            SlackCapture.objects.filter(pk=pk).update(queued_at=None)
            break  # the broker is still down: the next sweep tries again
        sent += 1
    return sent


@shared_task(name="engagement.switch_cycles")
def switch_cycles(on: str | None = None) -> int | None:
    """Periodic: when a scheduled next cycle's start date has come (``on``, an ISO date, defaults to today in the
    program's time zone), archive the active cycle and make the next one active, carrying what is live over.
    Answers the new cycle's id, or None when nothing was due (every later run of the day)."""
    import datetime

    from portal.engagement import cycles

    started = cycles.switch_due(datetime.date.fromisoformat(on) if on else None)
    if started is not None:
        logger.info("Cycle switch: %s is active from %s", started, started.starts_on)
    return started.pk if started is not None else None
