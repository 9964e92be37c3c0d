"""Background work of the engagement app: replies in Slack threads."""
from __future__ import annotations

import logging

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task(bind=True, name="engagement.reply_in_thread", max_retries=4, acks_late=True)
def reply_in_thread(self, thread_id: int, text: str) -> str:
    """Post ``text`` in the Slack thread an interaction was logged from; retried with backoff."""
    from slack_sdk.errors import SlackApiError, SlackClientError

    from portal.engagement import slack
    from portal.engagement.models import SlackThread
    from portal.notifications import _absolute

    thread = SlackThread.objects.select_related("channel", "interaction").filter(pk=thread_id).first()
    if thread is None:
        return "skipped"
    try:
        slack.client().chat_postMessage(
            channel=thread.channel.channel_id, thread_ts=thread.thread_ts,
            text=f"{text}\n{_absolute(thread.interaction.get_absolute_url())}",
        )
    except SlackApiError as exc:  # Slack answered and refused: retrying will not help
        logger.error("Slack refused the reply in thread %s: %s", thread_id, exc.response.get("error"))
        return "refused"
    except (SlackClientError, OSError) as exc:
        raise self.retry(exc=exc, countdown=30 * (2 ** self.request.retries)) from exc
    return "sent"
