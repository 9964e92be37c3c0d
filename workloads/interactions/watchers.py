"""Watchers of an interaction hear of what happens to it, each by e-mail.

:func:`tell` queues one notification delivery per watcher (channel "watcher", sent by Celery after the
writing transaction commits, retried, and kept with its outcome like every delivery). A watcher is told only
what they may read: nothing of an interaction they may not view, and nothing internal unless they see
internal entries. Whoever made the change is not told of it, nor is a watcher without an e-mail address.
"""
from __future__ import annotations

import logging

from portal.core import access, notifications
from portal.core.notifications import DeliveryRefused, Event

CHANNEL = "watcher"
logger = logging.getLogger(__name__)


def line(entry) -> tuple[str, bool]:
    """A history entry as one line of a watcher's e-mail, with whether it is internal."""
    if entry.old_value or entry.new_value:
        text = f"{entry.get_kind_display()}: {entry.old_value or '—'} → {entry.new_value or '—'}"
    else:
        text = entry.body
    return text, entry.internal


def tell(interaction, lines: list[tuple[str, bool]], actor) -> list[int]:
    """Queue the ``lines`` (text, internal) each watcher may read, as one e-mail per watcher; returns the
    delivery ids. Call inside the transaction that wrote the change. Never raises."""
    try:
        if not lines:
            return []
        actor_id = getattr(actor, "pk", None)
        ids = []
        for watcher in interaction.watchers.exclude(email="").order_by("pk"):
            if watcher.pk == actor_id or not watcher.is_active or not access.can(watcher, access.VIEW, interaction):
                continue
            sees_internal = access.sees_internal(watcher, interaction.organization_id)
            readable = [text for text, internal in lines if sees_internal or not internal]
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
