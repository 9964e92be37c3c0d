"""The portal's notification service: one entry point for every event worth telling people about.

Sources call :func:`notify`. It picks the channels whose settings want the event (the
organization's own and the program-wide ones, at or above their minimum severity; internal events
only to channels that include internal ones), writes one ``NotificationDelivery`` row per channel
and enqueues :func:`deliver` after the source's transaction commits. Delivery (Slack incoming
webhook through ``portal.core.outbound``, e-mail, and channels apps register in ``SENDERS`` such as the reply in an
interaction's Slack thread) runs in Celery on the ``notifications`` queue with retries and backoff; after the
last retry the failure is recorded on the row. A delivery is the "notification" kind of ``portal.core.jobs``: one the
broker could not take keeps an empty ``dispatched_at`` and the minute's sweep (``portal.jobs.sweep``) sends it;
:func:`sweep_pending`, the name the beat schedule used before, sends the deliveries alone. Nothing here can make
the source's save fail.
"""
from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field

from celery import shared_task
from django.conf import settings
from django.core.mail import send_mail
from django.db.models import Q
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import pgettext

from portal.core import jobs, outbound, slack_markup
from portal.core.choices import Severity, severity_rank
from portal.core.jobs import registry
from portal.core.language import program_language
from portal.core.metrics import instruments
from portal.core.models import NotificationDelivery, NotificationSetting, User

logger = logging.getLogger("portal.core.notifications")

MAX_RETRIES = 4
RETRY_BACKOFF = 10  # seconds, doubled per retry


@dataclass
class Event:
    kind: str
    title: str
    organization_id: int | None = None
    severity: str = Severity.NORMAL
    body: str = ""
    url: str = ""
    extra: dict = field(default_factory=dict)
    # "internal" events reach only channels that include internal ones (never a customer's channel).
    visibility: str = "internal"


class DeliveryError(Exception):
    """A channel refused or could not be reached; retried, then recorded."""


class DeliveryRefused(DeliveryError):
    """A channel answered and refused for good (retrying will not help): recorded as failed at once."""


def _matching_settings(event: Event):
    qs = NotificationSetting.objects.filter(enabled=True).filter(
        Q(organization__isnull=True) | Q(organization_id=event.organization_id)
    )
    if event.visibility != "shared":
        qs = qs.filter(include_internal=True)
    rank = severity_rank(event.severity)
    return [s for s in qs if severity_rank(s.min_severity) <= rank]


# Callables taking every event after its deliveries are queued (registered by apps at start-up).
LISTENERS: list = []
# Senders of channels without a NotificationSetting, by channel name (registered by apps at start-up): each takes
# the delivery and raises DeliveryError to be retried, DeliveryRefused to fail at once. E.g. "thread", the Slack
# bridge's reply in an interaction's thread.
SENDERS: dict = {}


def queue(event: Event, channel: str, setting=None, **payload) -> int:
    """Write one delivery row for ``channel`` and send it after commit; the sweep sends it when the broker
    could not take it. ``payload`` adds what the channel's sender needs to the event's fields."""
    delivery = NotificationDelivery.objects.create(
        setting=setting, organization_id=event.organization_id, channel=channel, event_kind=event.kind,
        severity=event.severity, title=event.title[:300], payload={**asdict(event), **payload},
        dispatched_at=timezone.now(),
    )
    jobs.send_on_commit(deliver, delivery.pk, on_failure=_unqueue(delivery.pk))
    return delivery.pk


def notify(event: Event) -> list[int]:
    """Queue the event for every channel that wants it; returns the delivery ids. Never raises."""
    logger.info("notification %s", asdict(event))
    try:
        ids = []
        for setting in _matching_settings(event):
            channels = []
            if setting.slack_webhook_url:
                channels.append("slack")
            if setting.recipients():
                channels.append("email")
            ids += [queue(event, channel, setting) for channel in channels]
        for listener in LISTENERS:  # e.g. the Slack bridge replying in an interaction's thread
            listener(event)
        return ids
    except Exception:  # a notification must never break the action that raised it
        logger.exception("could not queue notification %s", event.title)
        return []


def _unqueue(delivery_id: int):
    def mark() -> None:
        NotificationDelivery.mark_dispatched(delivery_id, False)

    return mark


def _absolute(url: str) -> str:
    base = getattr(settings, "PORTAL_BASE_URL", "")
    return f"{base.rstrip('/')}{url}" if url.startswith("/") and base else url


def slack_text(payload: dict) -> tuple[str, list[dict]]:
    """The message for a channel, in the program's language (a channel has many readers; docs/DECISIONS.md)."""
    severity = payload.get("severity", "")
    title = slack_markup.escape(payload.get("title", ""))  # users' words: never mentions or links
    url = _absolute(payload.get("url", ""))
    with program_language():
        label = str(Severity(severity).label).upper() if severity in Severity.values else severity.upper()
        heading = f"*[{slack_markup.escape(label)}]* {title}" if severity else title
        if url:
            heading += "  " + slack_markup.link(url, pgettext("a link to a page", "open"))
    blocks = [{"type": "section", "text": slack_markup.mrkdwn(heading)}]
    if payload.get("body"):
        blocks.append({"type": "section", "text": slack_markup.mrkdwn(slack_markup.escape(payload["body"][:2900]))})
    return heading, blocks


def _send_slack(url: str, payload: dict) -> None:
    """POST to the incoming webhook through the guarded client (the URL is typed in the admin)."""
    text, blocks = slack_text(payload)
    body = json.dumps({"text": text, "blocks": blocks}).encode()
    try:
        answer = outbound.post(url, body=body, headers={"Content-Type": "application/json"}, timeout=10,
                               max_bytes=64 * 1024)
    except outbound.OutboundError as exc:
        raise DeliveryError(f"Slack webhook: {exc.reason}") from None
    if answer.status != 200:
        raise DeliveryError(f"Slack webhook: {outbound.describe_status(answer.status)}")


def recipient_languages(recipients: list[str]) -> dict[str, list[str]]:
    """The recipients by the language to write to them in: a person's chosen language (``User.language``,
    found by e-mail address), else the program's default (``LANGUAGE_CODE``) for addresses of no one's or
    people who chose none. In the order the recipients were given."""
    chosen: dict[str, str] = {}
    for email, language in User.objects.filter(email__in=recipients).exclude(language="").values_list(
            "email", "language"):
        chosen.setdefault(email.lower(), language)
    groups: dict[str, list[str]] = {}
    for address in recipients:
        groups.setdefault(chosen.get(address.lower(), settings.LANGUAGE_CODE), []).append(address)
    return groups


def render_email(payload: dict, language: str) -> tuple[str, str]:
    """Subject and text of a notification e-mail in ``language`` (templates/portal/email/). The event's title
    and body are the source's own words; the frame around them is in the recipient's language."""
    severity = payload.get("severity", "")
    with translation.override(language):
        label = str(Severity(severity).label).upper() if severity in Severity.values else severity.upper()
        context = {"title": payload.get("title", ""), "body": payload.get("body", ""), "severity": label,
                   "url": _absolute(payload.get("url", ""))}
        subject = render_to_string("portal/email/notification_subject.txt", context).strip()
        text = render_to_string("portal/email/notification.txt", context)
    return " ".join(subject.split())[:200], text


def send_email(recipients: list[str], payload: dict) -> None:
    """One e-mail per language among the recipients (usually one), each in its recipients' language."""
    try:
        for language, addresses in recipient_languages(recipients).items():
            subject, text = render_email(payload, language)
            send_mail(subject, text, settings.DEFAULT_FROM_EMAIL, addresses, fail_silently=False)
    except Exception as exc:
        raise DeliveryError(f"E-mail not sent: {exc}") from exc


@shared_task(bind=True, name="portal.notifications.deliver", max_retries=MAX_RETRIES, acks_late=True)
def deliver(self, delivery_id: int) -> str:
    """Send one delivery; retry with exponential backoff; record the outcome either way."""
    delivery = NotificationDelivery.objects.select_related("setting").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != NotificationDelivery.PENDING:
        return "skipped"
    delivery.attempts += 1
    try:
        if delivery.channel in SENDERS:
            SENDERS[delivery.channel](delivery)
        elif delivery.setting is None:
            raise DeliveryRefused("The channel's settings were deleted.")
        elif delivery.channel == "slack":
            _send_slack(delivery.setting.slack_webhook_url, delivery.payload)
        else:
            send_email(delivery.setting.recipients(), delivery.payload)
    except DeliveryError as exc:
        delivery.error = str(exc)
        if self.request.retries >= self.max_retries or isinstance(exc, DeliveryRefused):
            NotificationDelivery.fail(delivery.pk, delivery.error, status=NotificationDelivery.FAILED,
                                      attempts=delivery.attempts)
            logger.error("notification %s failed after %s attempts: %s", delivery_id, delivery.attempts, exc)
            instruments.count_delivery(delivery.channel, "failed")
            return "failed"
        delivery.save(update_fields=["attempts", "error"])
        instruments.count_delivery(delivery.channel, "retry")
        raise self.retry(exc=exc, countdown=RETRY_BACKOFF * (2 ** self.request.retries)) from exc
    NotificationDelivery.finish(delivery.pk, NotificationDelivery.SENT, attempts=delivery.attempts, error="")
    instruments.count_delivery(delivery.channel, "sent")
    return "sent"


KIND = registry.register(registry.JobKindSpec(name="notification", model=NotificationDelivery, task=deliver, numbered=False))


@shared_task(name="portal.notifications.sweep_pending")
def sweep_pending(limit: int = 500) -> int:
    """The deliveries' share of ``portal.jobs.sweep`` alone (the beat schedule's name before that): send the
    deliveries the broker could not take when their event happened."""
    return registry.recover_kind(KIND, limit=limit).sent
