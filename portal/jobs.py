"""Dispatching background work so that a broker outage never loses it.

The row that describes the work is committed first; the task is sent after commit. When the broker
cannot be reached the row stays as it is (not dispatched) and a periodic sweep sends it later.
"""
from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)

BROKER_ERRORS = (OperationalError, ConnectionError, OSError, TimeoutError)


def send(task, *args: Any, **options: Any) -> bool:
    """Send ``task`` now; ``False`` (and a log line) when the broker is unreachable."""
    try:
        task.apply_async(args=args, **options)
    except BROKER_ERRORS as exc:
        logger.warning("broker unreachable, %s(%s) left for the sweep: %s", task.name, args, exc)
        return False
    return True


def send_on_commit(task, *args: Any, on_failure=None, **options: Any) -> None:
    """Send ``task`` once the current transaction commits; call ``on_failure()`` if the broker is down."""

    def _send() -> None:
        if not send(task, *args, **options) and on_failure is not None:
            on_failure()

    transaction.on_commit(_send)
