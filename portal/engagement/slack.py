"""The Slack bridge: requests from Slack (a message shortcut, a slash command) and replies through Slack's Web
API (slack_sdk's WebClient).

Every inbound request is verified with the app's signing secret and its timestamp (slack_sdk's
SignatureVerifier: HMAC-SHA256 of ``v0:<timestamp>:<body>``, refused when older than five minutes). A Slack
user sees nothing until staff map them to a portal user; what they then see is what that portal user may see,
through the same access policy as every page.
"""
from __future__ import annotations

import datetime
import json
import logging
import re

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from portal import access
from portal.engagement.models import SlackChannelLink, SlackThread, SlackUserLink

logger = logging.getLogger(__name__)
SHORTCUT_CALLBACK = "log_interaction"
MAX_THREAD_MESSAGES = 200
THREAD_CHANNEL = "thread"  # NotificationDelivery.channel of a reply in an interaction's thread
# Web API errors that say "later", not "no" (rate limits are HTTP 429).
RETRYABLE_ERRORS = {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}


class SlackRefused(Exception):
    """A request Slack sent that the portal answers with a message rather than an action."""


def verified(body: bytes, headers) -> bool:
    from slack_sdk.signature import SignatureVerifier

    secret = settings.SLACK_SIGNING_SECRET
    timestamp, signature = headers.get("X-Slack-Request-Timestamp", ""), headers.get("X-Slack-Signature", "")
    if not secret or not timestamp.isdigit() or len(timestamp) > 12 or not signature:
        return False
    return SignatureVerifier(secret).is_valid(body=body, timestamp=timestamp, signature=signature)


def client():
    from slack_sdk import WebClient

    return WebClient(token=settings.SLACK_BOT_TOKEN, base_url=settings.SLACK_API_URL, timeout=5)


def portal_user(team_id: str, slack_user_id: str):
    link = SlackUserLink.objects.select_related("user").filter(team_id=team_id, slack_user_id=slack_user_id).first()
    if link is None or not link.user.is_active:
        raise SlackRefused("Your Slack account is not linked to a portal account yet: ask the program staff.")
    return link.user


def _thread_markdown(messages: list[dict]) -> str:
    lines = []
    for m in messages[:MAX_THREAD_MESSAGES]:
        when = datetime.datetime.fromtimestamp(float(m.get("ts", "0")), tz=datetime.UTC)
        lines.append(f"**<@{m.get('user', '?')}>** {when:%Y-%m-%d %H:%M} UTC\n\n{m.get('text', '')}")
    return "\n\n---\n\n".join(lines)


def log_message(payload: dict):
    """The message shortcut: log the message (and its thread) as an interaction of the channel's organization.

    Answers the interaction and whether it was created (a thread logged before is not logged twice)."""
    from workloads import services_interactions as services
    from workloads.choices_interactions import InteractionKind
    from workloads.models import Interaction

    user = portal_user(payload.get("team", {}).get("id", ""), payload.get("user", {}).get("id", ""))
    channel_id = payload.get("channel", {}).get("id", "")
    link = SlackChannelLink.objects.select_related("organization").filter(channel_id=channel_id).first()
    if link is None:
        raise SlackRefused("This channel is not linked to an organization in the portal.")
    if not access.can_in_organization(user, access.CHANGE, Interaction, link.organization_id):
        raise SlackRefused(f"You may not log interactions for {link.organization}.")
    message = payload.get("message", {})
    thread_ts = message.get("thread_ts") or message.get("ts")
    if not thread_ts or not re.fullmatch(r"\d{1,12}\.\d{1,9}", thread_ts):
        raise SlackRefused("Slack sent no message timestamp.")
    existing = SlackThread.objects.select_related("interaction").filter(channel=link, thread_ts=thread_ts).first()
    if existing is not None:
        return existing.interaction, False
    web = client()
    permalink = web.chat_getPermalink(channel=channel_id, message_ts=thread_ts).get("permalink", "")
    replies = web.conversations_replies(channel=channel_id, ts=thread_ts, limit=MAX_THREAD_MESSAGES)
    messages = replies.get("messages") or [message]
    first = (messages[0].get("text") or "Slack thread").strip()
    summary = first.splitlines()[0][:200] if first else "Slack thread"
    with transaction.atomic():
        interaction = Interaction.objects.create(
            organization=link.organization, kind=InteractionKind.CHAT, summary=summary,
            body=f"Logged from Slack: {permalink}\n\n{_thread_markdown(messages)}",
            occurred_at=datetime.datetime.fromtimestamp(float(thread_ts), tz=datetime.UTC),
            owner=user if access.sees_internal(user, link.organization_id) else None, created_by=user,
        )
        SlackThread.objects.create(interaction=interaction, channel=link, thread_ts=thread_ts, permalink=permalink)
        services.created(interaction, user)
    return interaction, True


def status_text(user, organization) -> str:
    """What the slash command shows: the organization's status as the user may see it."""
    from clusters.models import Cluster
    from portal.engagement.models import Milestone, active_cycle_id
    from portal.vocabulary import OPEN_STATUSES
    from workloads.models import CapacityReservation, Interaction

    clusters = Cluster.objects.restrict(user).filter(organization=organization).exclude(state="deleted")
    states: dict[str, int] = {}
    for state in clusters.values_list("state", flat=True):
        states[state] = states.get(state, 0) + 1
    open_count = Interaction.objects.restrict(user).filter(organization=organization, status__in=OPEN_STATUSES).count()
    reservation = CapacityReservation.objects.restrict(user).filter(
        organization=organization, end__gte=timezone.localdate()).order_by("end").first()
    milestones = list(Milestone.objects.restrict(user).filter(organization=organization, cycle_id=active_cycle_id())
                      .order_by("reached_on"))
    lines = [f"*{organization.name}*",
             "Clusters: " + (", ".join(f"{n} {s}" for s, n in sorted(states.items())) or "none"),
             f"Open interactions: {open_count}",
             "Next reservation end: " + (f"{reservation.end:%Y-%m-%d}" if reservation else "none"),
             "Latest milestone: " + (f"{milestones[-1].get_kind_display()} ({milestones[-1].reached_on:%Y-%m-%d})"
                                     if milestones else "none")]
    return "\n".join(lines)


def command(form) -> str:
    """The slash command (``/geniac [organization-slug]``): the status of the named organization, or of the
    channel's."""
    from portal.models import Organization

    user = portal_user(form.get("team_id", ""), form.get("user_id", ""))
    slug = (form.get("text") or "").strip().split(" ")[0].lower()
    visible = Organization.objects.restrict(user)
    if slug:
        organization = visible.filter(slug=slug).first()
    else:
        link = SlackChannelLink.objects.filter(channel_id=form.get("channel_id", "")).first()
        organization = visible.filter(pk=link.organization_id).first() if link else None
    if organization is None:
        raise SlackRefused("No organization of yours by that name (give its slug, or run it in its channel).")
    return status_text(user, organization)


def thread_listener(event) -> None:
    """Registered in portal.notifications.LISTENERS: an event about an interaction logged from Slack is also
    posted in its thread (in a customer-facing channel, only events that are not internal), as a
    ``NotificationDelivery`` of channel "thread": retried like the others, and sent by the sweep when the
    broker could not take it."""
    from portal import notifications

    interaction_id = (event.extra or {}).get("interaction")
    if not interaction_id:
        return
    thread = SlackThread.objects.select_related("channel").filter(interaction_id=interaction_id).first()
    if thread is None or (thread.channel.customer_facing and event.visibility != "shared"):
        return
    notifications.queue(event, THREAD_CHANNEL, thread=thread.pk)


def send_thread_reply(delivery) -> None:
    """Registered in portal.notifications.SENDERS for "thread": post the event in the interaction's thread.
    Rate limits, Slack's own errors and network failures are retried; any other refusal fails at once."""
    from slack_sdk.errors import SlackApiError, SlackClientError

    from portal.notifications import DeliveryError, DeliveryRefused, _absolute

    thread = SlackThread.objects.select_related("channel", "interaction").filter(
        pk=delivery.payload.get("thread")).first()
    if thread is None:
        raise DeliveryRefused("The interaction is no longer linked to a Slack thread.")
    try:
        client().chat_postMessage(
            channel=thread.channel.channel_id, thread_ts=thread.thread_ts,
            text=f"{delivery.payload.get('title', '')}\n{_absolute(thread.interaction.get_absolute_url())}",
        )
    except SlackApiError as exc:
        status, error = exc.response.status_code, exc.response.get("error") or ""
        if status == 429 or status >= 500 or error in RETRYABLE_ERRORS:
            raise DeliveryError(f"Slack thread: {error or status}, tried again later") from None
        raise DeliveryRefused(f"Slack refused the reply in the thread: {error or status}") from None
    except (SlackClientError, OSError) as exc:
        raise DeliveryError(f"Slack thread: Slack could not be reached ({exc})") from None


def tell(payload: dict, text: str) -> None:
    """An ephemeral message to the user who used the shortcut; a failure is logged, never raised."""
    from slack_sdk.errors import SlackClientError

    channel, user = payload.get("channel", {}).get("id"), payload.get("user", {}).get("id")
    if not (channel and user):
        return
    try:
        client().chat_postEphemeral(channel=channel, user=user, text=text)
    except (SlackClientError, OSError):
        logger.exception("could not answer the shortcut in Slack")


def parse_payload(post) -> dict:
    try:
        return json.loads(post.get("payload") or "")
    except (TypeError, ValueError) as exc:
        raise SlackRefused("The request carries no payload.") from exc
