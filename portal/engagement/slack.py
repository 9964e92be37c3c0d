"""The Slack bridge: requests from Slack (a message shortcut, a slash command) and replies through Slack's Web
API (slack_sdk's WebClient).

Every inbound request is verified with the app's signing secret and its timestamp (slack_sdk's
SignatureVerifier: HMAC-SHA256 of ``v0:<timestamp>:<body>``, refused when older than five minutes); a slash
command's signature is remembered for that window (:func:`first_use`), so a captured request replayed within it
is refused rather than answered again. A Slack
user sees nothing until staff map them to a portal user; what they then see is what that portal user may see,
through the same access policy as every page.
"""
from __future__ import annotations

import datetime
import functools
import logging
import re
import threading
import time
from collections import OrderedDict

import redis
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _
from redis.backoff import NoBackoff
from redis.retry import Retry
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.webhook import WebhookClient

from clusters.models import Cluster
from portal.core import access, json_input, notifications, slack_markup
from portal.core.choices import OPEN_STATUSES
from portal.core.cycle_filter import in_active_cycle
from portal.core.language import program_language
from portal.core.models import Organization, active_cycle_id
from portal.core.notifications import DeliveryError, DeliveryRefused, _absolute
from portal.core.templatetags.portal_display import when as local_time
from portal.engagement.models import (
    Milestone,
    SlackCapture,
    SlackChannelLink,
    SlackThread,
    SlackUserLink,
)
from workloads.interactions import services
from workloads.interactions.choices import InteractionKind
from workloads.interactions.models import Interaction
from workloads.models import CapacityReservation

logger = logging.getLogger(__name__)
SHORTCUT_CALLBACK = "log_interaction"
MAX_THREAD_MESSAGES = 200
THREAD_CHANNEL = "thread"  # NotificationDelivery.channel of a reply in an interaction's thread
# Web API errors that say "later", not "no" (rate limits are HTTP 429).
RETRYABLE_ERRORS = {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}


class SlackRefused(Exception):
    """A request Slack sent that the portal answers with a message rather than an action."""


def verified(body: bytes, headers) -> bool:
    secret = settings.SLACK_SIGNING_SECRET
    timestamp, signature = headers.get("X-Slack-Request-Timestamp", ""), headers.get("X-Slack-Signature", "")
    if not secret or not timestamp.isdigit() or len(timestamp) > 12 or not signature:
        return False
    return SignatureVerifier(secret).is_valid(body=body, timestamp=timestamp, signature=signature)


# slack_sdk accepts a timestamp up to five minutes either side of the clock, so a signature stays valid for at most
# ten minutes after it is first seen: it is remembered that long.
SIGNATURE_WINDOW_SECONDS = 2 * 5 * 60
SEEN_KEY_PREFIX = "portal:slack-signature:"
SEEN_HERE_MAX = 10_000  # the per-process memory used when Redis cannot answer: bounded, oldest forgotten first
_seen_here: OrderedDict[str, float] = OrderedDict()
_seen_here_lock = threading.Lock()


@functools.cache
def _redis(url: str) -> redis.Redis:
    """Short timeouts and no retry, like the push rate limit: Slack wants its answer within 3 s."""
    return redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))


def _first_use_here(signature: str) -> bool:
    now = time.monotonic()
    with _seen_here_lock:
        while _seen_here and (next(iter(_seen_here.values())) < now or len(_seen_here) >= SEEN_HERE_MAX):
            _seen_here.popitem(last=False)
        if signature in _seen_here:
            return False
        _seen_here[signature] = now + SIGNATURE_WINDOW_SECONDS
        return True


def first_use(headers) -> bool:
    """Whether this verified request's signature is seen for the first time in its window.

    Remembered in Redis (``SET NX EX``), which every web process shares, and in this process's bounded memory,
    which still refuses a replay to this process while Redis is down or not configured."""
    signature = headers.get("X-Slack-Signature", "")
    here = _first_use_here(signature)
    if not settings.REDIS_URL:
        return here
    try:
        shared = _redis(settings.REDIS_URL).set(SEEN_KEY_PREFIX + signature, 1, nx=True,
                                                ex=SIGNATURE_WINDOW_SECONDS)
    except redis.RedisError as exc:
        logger.warning("Slack signature kept in this process only, Redis unavailable: %s", exc)
        return here
    return here and bool(shared)


def client():
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
        lines.append(f"**<@{m.get('user', '?')}>** {local_time(when, True)}\n\n{m.get('text', '')}")
    return "\n\n---\n\n".join(lines)


class TryLater(Exception):
    """Slack's Web API limited the rate or failed: the capture is tried again (after ``retry_after`` seconds
    when Slack said so)."""

    def __init__(self, reason: str, retry_after: int | None = None):
        super().__init__(reason)
        self.retry_after = retry_after


def request_capture(payload: dict):
    """The message shortcut, on the request: map the Slack user and channel, check the right to log, and store
    a ``SlackCapture`` (refused ones too, with the reason to tell). No call to Slack here: the endpoint must
    answer within 3 s. Answers the capture and whether its task should be sent (not for a capture in flight).

    A shortcut used again on the same message reuses its capture, so one interaction is logged. The reasons it
    tells are in the program's language, like everything the bridge writes to Slack."""
    with program_language():
        return _request_capture(payload)


def _request_capture(payload: dict):
    team_id, slack_user_id = payload.get("team", {}).get("id", ""), payload.get("user", {}).get("id", "")
    channel_id = payload.get("channel", {}).get("id", "")
    message = payload.get("message", {})
    message_ts = message.get("ts") or ""
    thread_ts = message.get("thread_ts") or message_ts
    response_url = str(payload.get("response_url") or "")
    if not response_url.startswith(settings.SLACK_RESPONSE_URL_PREFIX) or len(response_url) > 500:
        response_url = ""  # not Slack's: the answer goes through chat.postEphemeral instead
    fields = {"team_id": team_id[:32], "slack_user_id": slack_user_id[:32], "channel_id": channel_id[:32],
              "message_ts": message_ts[:32], "thread_ts": thread_ts[:32], "message": message,
              "response_url": response_url}
    try:
        if not all(re.fullmatch(r"\d{1,12}\.\d{1,9}", ts) for ts in (message_ts, thread_ts)):
            raise SlackRefused(_("Slack sent no message timestamp."))
        user = fields["user"] = portal_user(team_id, slack_user_id)
        link = fields["link"] = SlackChannelLink.objects.select_related("organization").filter(
            channel_id=channel_id).first()
        if link is None:
            raise SlackRefused(_("This channel is not linked to an organization in the portal."))
        if not access.can_in_organization(user, access.CHANGE, Interaction, link.organization_id):
            raise SlackRefused(_("You may not log interactions for %(organization)s.")
                               % {"organization": link.organization})
    except SlackRefused as exc:
        return SlackCapture.objects.create(**fields, status=SlackCapture.REFUSED, error=str(exc)), True
    live = SlackCapture.objects.filter(channel_id=channel_id, message_ts=message_ts,
                                       status__in=[SlackCapture.PENDING, SlackCapture.DONE])
    capture = live.first()
    if capture is None:
        try:
            with transaction.atomic():
                return SlackCapture.objects.create(**fields), True
        except IntegrityError:  # the same shortcut, sent twice at once: the other request stored it
            capture = live.get()
    # Pending and handed to the broker: its task is on the way. Done: the task tells "already logged".
    return capture, capture.status == SlackCapture.DONE or capture.dispatched_at is None


def _read_thread(channel_id: str, thread_ts: str) -> tuple[str, list[dict]]:
    """The thread's permalink and messages from Slack's Web API."""
    web = client()
    try:
        permalink = web.chat_getPermalink(channel=channel_id, message_ts=thread_ts).get("permalink", "")
        replies = web.conversations_replies(channel=channel_id, ts=thread_ts, limit=MAX_THREAD_MESSAGES)
    except SlackApiError as exc:
        status, error = exc.response.status_code, exc.response.get("error") or ""
        if status == 429 or status >= 500 or error in RETRYABLE_ERRORS:
            retry_after = next((v for k, v in (exc.response.headers or {}).items() if k.lower() == "retry-after"), "")
            raise TryLater(f"Slack answered {error or status}",
                           int(retry_after) if str(retry_after).isdigit() else None) from None
        raise SlackRefused(f"Slack refused to show the thread ({error or status}).") from None
    except (SlackClientError, OSError) as exc:
        raise TryLater(f"Slack could not be reached ({exc})") from None
    return permalink, replies.get("messages") or []


def capture(capture_id: int) -> str:
    """Log a stored capture as an interaction (the ``engagement.capture_thread`` task); tell the user the outcome.

    Idempotent: a capture already done, or a thread already logged, makes no second interaction. Raises
    ``TryLater`` on Slack's rate limits and failures (the task retries); a refusal is recorded and told."""
    row = SlackCapture.objects.select_related("link__organization", "user", "interaction").filter(
        pk=capture_id).first()
    if row is None:
        return "skipped"
    if row.status != SlackCapture.PENDING:
        _tell_outcome(row, created=False)
        return row.status
    SlackCapture.objects.filter(pk=row.pk).update(attempts=F("attempts") + 1)
    link, user = row.link, row.user
    try:
        if link is None or user is None or not user.is_active or not access.can_in_organization(
                user, access.CHANGE, Interaction, link.organization_id):
            raise SlackRefused("You may no longer log interactions for this channel's organization.")
        existing = SlackThread.objects.filter(channel=link, thread_ts=row.thread_ts).first()
        permalink, messages = ("", []) if existing else _read_thread(link.channel_id, row.thread_ts)
    except SlackRefused as exc:
        return fail(row.pk, str(exc))
    with transaction.atomic():
        if SlackCapture.objects.select_for_update().filter(pk=row.pk).values_list("status", flat=True).get() \
                != SlackCapture.PENDING:  # another run of the task logged it meanwhile
            return SlackCapture.objects.get(pk=row.pk).status
        existing = SlackThread.objects.select_related("interaction").filter(
            channel=link, thread_ts=row.thread_ts).first()
        created = existing is None
        if existing is not None:
            interaction = existing.interaction
        else:
            messages = messages or [row.message]
            first = (messages[0].get("text") or "").strip()
            interaction = Interaction.objects.create(
                organization=link.organization, kind=InteractionKind.CHAT,
                summary=first.splitlines()[0][:200] if first else "Slack thread",
                body=f"Logged from Slack: {permalink}\n\n{_thread_markdown(messages)}",
                occurred_at=datetime.datetime.fromtimestamp(float(row.thread_ts), tz=datetime.UTC),
                owner=user if access.sees_internal(user, link.organization_id) else None, created_by=user,
            )
            SlackThread.objects.create(interaction=interaction, channel=link, thread_ts=row.thread_ts,
                                       permalink=permalink)
            services.created(interaction, user)
        row.status, row.interaction, row.error, row.finished_at = SlackCapture.DONE, interaction, "", timezone.now()
        row.save(update_fields=["status", "interaction", "error", "finished_at"])
    _tell_outcome(row, created=created)
    return "done"


def fail(capture_id: int, reason: str) -> str:
    """Record why a capture could not be logged and tell the user."""
    SlackCapture.fail(capture_id, reason[:2000], status=SlackCapture.FAILED)
    row = SlackCapture.objects.select_related("interaction").get(pk=capture_id)
    _tell_outcome(row, created=False)
    return row.status


def _tell_outcome(row: SlackCapture, created: bool) -> None:
    with program_language():
        if row.status == SlackCapture.DONE and row.interaction is not None:
            url = _absolute(row.interaction.get_absolute_url())
            text = (_("Logged as an interaction: %(url)s") if created
                    else _("This thread is already logged: %(url)s")) % {"url": url}
        elif row.status == SlackCapture.FAILED:
            text = _("Nothing was logged: %(reason)s") % {"reason": row.error}
        else:
            text = row.error or _("Nothing was logged.")
    tell({"channel": {"id": row.channel_id}, "user": {"id": row.slack_user_id}, "response_url": row.response_url},
         text)


def status_text(user, organization) -> str:
    """What the slash command shows: the organization's status as the user may see it, in the program's
    language."""
    with program_language():
        return _status_text(user, organization)


def _status_text(user, organization) -> str:
    clusters = in_active_cycle(Cluster.objects.restrict(user).filter(organization=organization)).exclude(state="deleted")
    states: dict[str, int] = {}
    for state in clusters.values_list("state", flat=True):
        states[state] = states.get(state, 0) + 1
    open_count = Interaction.objects.restrict(user).filter(organization=organization, status__in=OPEN_STATUSES).count()
    reservation = in_active_cycle(CapacityReservation.objects.restrict(user).filter(
        organization=organization, end__gte=timezone.localdate())).order_by("end").first()
    milestones = list(Milestone.objects.restrict(user).filter(organization=organization, cycle_id=active_cycle_id())
                      .order_by("reached_on"))
    none = _("none")
    lines = [f"*{organization.name}*",
             _("Clusters: %(states)s") % {"states": ", ".join(f"{n} {s}" for s, n in sorted(states.items())) or none},
             _("Open interactions: %(count)s") % {"count": open_count},
             _("Next reservation end: %(end)s") % {"end": f"{reservation.end:%Y-%m-%d}" if reservation else none},
             _("Latest milestone: %(milestone)s") % {
                 "milestone": f"{milestones[-1].get_kind_display()} ({milestones[-1].reached_on:%Y-%m-%d})"
                 if milestones else none}]
    return "\n".join(lines)


def command(form) -> str:
    """The slash command (``/geniac [organization-slug]``): the status of the named organization, or of the
    channel's."""
    user = portal_user(form.get("team_id", ""), form.get("user_id", ""))
    slug = (form.get("text") or "").strip().split(" ")[0].lower()
    visible = Organization.objects.restrict(user)
    if slug:
        organization = visible.filter(slug=slug).first()
    else:
        link = SlackChannelLink.objects.filter(channel_id=form.get("channel_id", "")).first()
        organization = visible.filter(pk=link.organization_id).first() if link else None
    if organization is None:
        with program_language():
            raise SlackRefused(_("No organization of yours by that name (give its slug, or run it in its channel)."))
    return status_text(user, organization)


def thread_listener(event) -> None:
    """Registered in portal.core.notifications.LISTENERS: an event about an interaction logged from Slack is also
    posted in its thread (in a customer-facing channel, only events that are not internal), as a
    ``NotificationDelivery`` of channel "thread": retried like the others, and sent by the sweep when the
    broker could not take it."""
    interaction_id = (event.extra or {}).get("interaction")
    if not interaction_id:
        return
    thread = SlackThread.objects.select_related("channel").filter(interaction_id=interaction_id).first()
    if thread is None or (thread.channel.customer_facing and event.visibility != "shared"):
        return
    notifications.queue(event, THREAD_CHANNEL, thread=thread.pk)


def send_thread_reply(delivery) -> None:
    """Registered in portal.core.notifications.SENDERS for "thread": post the event in the interaction's thread.
    Rate limits, Slack's own errors and network failures are retried; any other refusal fails at once."""
    thread = SlackThread.objects.select_related("channel", "interaction").filter(
        pk=delivery.payload.get("thread")).first()
    if thread is None:
        raise DeliveryRefused("The interaction is no longer linked to a Slack thread.")
    try:
        client().chat_postMessage(
            channel=thread.channel.channel_id, thread_ts=thread.thread_ts,
            text=f"{slack_markup.escape(delivery.payload.get('title', ''))}\n"
                 f"{slack_markup.escape(_absolute(thread.interaction.get_absolute_url()))}",
            link_names=False, unfurl_links=False, unfurl_media=False,
        )
    except SlackApiError as exc:
        status, error = exc.response.status_code, exc.response.get("error") or ""
        if status == 429 or status >= 500 or error in RETRYABLE_ERRORS:
            raise DeliveryError(f"Slack thread: {error or status}, tried again later") from None
        raise DeliveryRefused(f"Slack refused the reply in the thread: {error or status}") from None
    except (SlackClientError, OSError) as exc:
        raise DeliveryError(f"Slack thread: Slack could not be reached ({exc})") from None


def tell(payload: dict, text: str) -> None:
    """An ephemeral message to the user who used the shortcut: through the shortcut's ``response_url`` (valid for
    30 minutes), else (or when that fails) with ``chat.postEphemeral``. A failure is logged, never raised.
    ``text`` may carry users' words (a reason, a name): it is escaped here, so it is never Slack markup."""
    text = slack_markup.escape(text)
    if payload.get("response_url"):
        try:
            if WebhookClient(payload["response_url"], timeout=5).send(text=text, response_type="ephemeral").status_code \
                    == 200:
                return
        except (SlackClientError, OSError):
            logger.warning("could not answer through the response_url; trying chat.postEphemeral")
    channel, user = payload.get("channel", {}).get("id"), payload.get("user", {}).get("id")
    if not (channel and user):
        return
    try:
        client().chat_postEphemeral(channel=channel, user=user, text=text, link_names=False)
    except (SlackClientError, OSError):
        logger.exception("could not answer the shortcut in Slack")


def parse_payload(post) -> dict:
    try:
        return json_input.loads(post.get("payload") or "")
    except (TypeError, ValueError) as exc:
        with program_language():
            raise SlackRefused(_("The request carries no payload.")) from exc
