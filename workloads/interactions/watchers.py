"""Watchers of an interaction hear of what happens to it, each by e-mail.

:func:`tell` queues one notification delivery per watcher (channel "watcher", sent by Celery after the
writing transaction commits, retried, and kept with its outcome like every delivery). A watcher is told only
what they may read: nothing of an interaction they may not view, and nothing internal unless they see
internal entries. Whoever made the change is not told of it, nor is a watcher without an e-mail address.
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.utils import translation

from portal.core import access, notifications
from portal.core.notifications import DeliveryRefused, Event
from portal.core.stored_text import Message
from workloads.interactions.choices import HistoryKind

CHANNEL = "watcher"
logger = logging.getLogger(__name__)


class _Line:
    """A line written in the active language when it is read (each watcher's, in ``tell``)."""

    def __init__(self, write) -> None:
        self.write = write

    def __str__(self) -> str:
        return self.write()


def line(entry) -> tuple[_Line, bool]:
    """A history entry as one line of a watcher's e-mail, with whether it is internal."""
    def write() -> str:
        if entry.old_value or entry.new_value:
            kind = HistoryKind(entry.kind).label if entry.kind in HistoryKind.values else entry.kind
            return f"{kind}: {entry.shown_old_value or '—'} → {entry.shown_new_value or '—'}"
        return entry.shown_body
    return _Line(write), entry.internal


def said(text: Message) -> _Line:
    """A sentence the portal writes for watchers, as a line in each watcher's language."""
    return _Line(lambda: str(text))


def tell(interaction, lines: list[tuple[str, bool]], actor) -> list[int]:
    """Queue the ``lines`` (text, internal) each watcher may read, as one e-mail per watcher, written in the
    watcher's language (their choice, else the program's default); returns the delivery ids. Call inside the
    transaction that wrote the change. Never raises."""
    try:
        if not lines:
            return []
        actor_id = getattr(actor, "pk", None)
        ids = []
        for watcher in interaction.watchers.exclude(email="").order_by("pk"):
            if watcher.pk == actor_id or not watcher.is_active or not access.can(watcher, access.VIEW, interaction):
                continue
            sees_internal = access.sees_internal(watcher, interaction.organization_id)
            with translation.override(watcher.language or settings.LANGUAGE_CODE):
                readable = [str(text) for text, internal in lines if sees_internal or not internal]
            if not readable:
                continue
            event = Event(kind="interaction.watched", title=f"{interaction.summary}: {readable[0]}"[:300],
                          organization_id=interaction.organization_id, severity=interaction.severity,
                          body="\n".join(readable)[:2000], url=interaction.get_absolute_url(),
                          visibility="internal" if sees_internal else "shared", extra={"interaction": interaction.pk})
            ids.append(notifications.queue(event, CHANNEL, recipient=watcher.email, watcher=watcher.pk))
        return ids
    except Exception:  # noqa: BLE001 - telling watchers must never break the change itself
        logger.exception("could not queue watcher notifications for interaction %s", interaction.pk)
        return []


def send(delivery) -> None:
    """The "watcher" channel's sender: one e-mail to the watcher recorded on the delivery."""
    recipient = delivery.payload.get("recipient")
    if not recipient:
        raise DeliveryRefused("The delivery names no watcher.")
    notifications.send_email([recipient], delivery.payload)
