"""Dispatching background work so that a Redis outage never loses it nor holds a request.

The row that describes the work is committed first; the task is sent after commit. When Redis cannot be
reached the row stays as it is (not dispatched) and a periodic sweep sends it later. A send is bounded in
time (short socket timeouts and one quick retry, see ``portal/celery.py``) and waits on no result store
(tasks ignore their results), so a request answers within about a second however Redis fails.
"""
from __future__ import annotations

import logging
from typing import Any

import redis
from django.db import transaction
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)

# What a send raises when Redis is stopped, unreachable, hung or refusing writes: kombu's wrapper of the
# transport's errors, redis-py's own (a ResponseError such as OOM or READONLY included), and socket errors.
BROKER_ERRORS = (OperationalError, redis.RedisError, ConnectionError, OSError, TimeoutError)


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` means "Redis cannot take the message now". Celery's Redis result store, when one is
    configured and a caller asks for a result, gives up with a ``RuntimeError`` raised from a connection
    error: an outage too. Any other error is a bug and is raised."""
    if isinstance(exc, BROKER_ERRORS):
        return True
    return isinstance(exc, RuntimeError) and isinstance(exc.__cause__, BROKER_ERRORS)


def send(task, *args: Any, **options: Any) -> bool:
    """Send ``task`` now; ``False`` (and a log line) when Redis cannot take it: the caller keeps the row for
    its sweep and tells the user the work is queued."""
    try:
        task.apply_async(args=args, **options)
    except Exception as exc:
        if not is_outage(exc):
            raise
        logger.warning("broker unreachable, %s(%s) left for the sweep: %s", task.name, args, exc)
        return False
    return True


def send_on_commit(task, *args: Any, on_failure=None, **options: Any) -> None:
    """Send ``task`` once the current transaction commits; call ``on_failure()`` if the broker is down."""

    def _send() -> None:
        if not send(task, *args, **options) and on_failure is not None:
            on_failure()

    transaction.on_commit(_send)
