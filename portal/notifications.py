"""The portal's notification service: one entry point for every event worth telling people about.

Sources call :func:`notify`; delivery (Slack incoming webhook, e-mail) happens in Celery tasks on the
``notifications`` queue so it never blocks the request that raised the event.
"""
from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field

logger = logging.getLogger("portal.notifications")


@dataclass
class Event:
    kind: str
    title: str
    organization_id: int | None = None
    severity: str = "normal"
    body: str = ""
    url: str = ""
    extra: dict = field(default_factory=dict)


def notify(event: Event) -> None:
    """Record the event. Delivery channels are added by the notification settings (see README)."""
    logger.info("notification %s", asdict(event))
