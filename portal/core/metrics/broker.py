"""The broker's Redis, read for queue depths and ages and written for a few stamps (the sweep's last run).

The queues are Kombu's Redis lists: a message is LPUSHed and taken from the right, so the oldest waiting message is
the list's last element. Celery's messages carry no send time, so ``stamp_message`` (a ``before_task_publish``
handler, connected in ``portal.celery``) adds one (``sent_at``, epoch seconds) to each message's headers.
A broker that is not Redis (the demo's filesystem broker, memory in unit tests) answers nothing: the families are
left out rather than reported as zero.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings

from portal.core import json_input

logger = logging.getLogger(__name__)

SENT_AT = "sent_at"
STAMP_PREFIX = "geniac:metrics:"
# Kombu's Redis priority steps: a queue's messages of priority n>0 wait under "<queue>\x06\x16<n>".
_PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")


@dataclass(frozen=True)
class QueueState:
    name: str
    depth: int
    oldest_age: float | None  # seconds; None when empty or no message says when it was sent


def stamp_message(headers=None, **kwargs) -> None:
    """Write the send time into a task message's headers (Celery passes the dict it then publishes)."""
    if headers is not None:
        headers.setdefault(SENT_AT, time.time())


def client():
    """A client of the broker's Redis, or None when the broker is not Redis."""
    url = getattr(settings, "CELERY_BROKER_URL", "") or ""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return None
    import redis

    return redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)


def _sent_at(raw: bytes | None) -> float | None:
    if not raw:
        return None
    try:
        value = json_input.loads(raw).get("headers", {}).get(SENT_AT)
    except (ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) else None


def queues(names: list[str], redis_client=None, now: float | None = None) -> list[QueueState]:
    """Depth and oldest message's age of each queue (two Redis round trips however many queues)."""
    redis_client = redis_client or client()
    if redis_client is None:
        return []
    now = time.time() if now is None else now
    pipe = redis_client.pipeline(transaction=False)
    keys = [(name, name + suffix) for name in names for suffix in _PRIORITY_SUFFIXES]
    for _name, key in keys:
        pipe.llen(key)
        pipe.lindex(key, -1)
    answers = pipe.execute()
    found: dict[str, list] = {name: [0, None] for name in names}
    for index, (name, _key) in enumerate(keys):
        depth, last = answers[2 * index], answers[2 * index + 1]
        found[name][0] += depth
        sent = _sent_at(last)
        if sent is not None and (found[name][1] is None or sent < found[name][1]):
            found[name][1] = sent
    return [QueueState(name, depth, None if sent is None else max(now - sent, 0.0))
            for name, (depth, sent) in found.items()]


def stamp(name: str, value: float | None = None) -> None:
    """Record a moment (epoch seconds) under ``name``; a broker down or not Redis records nothing."""
    redis_client = client()
    if redis_client is None:
        return
    try:
        redis_client.set(STAMP_PREFIX + name, repr(time.time() if value is None else value))
    except Exception:  # the stamp is for monitoring: never fail the work that makes it
        logger.warning("metrics: could not record %s in the broker", name, exc_info=True)


def read_stamps(names: list[str]) -> dict[str, float]:
    redis_client = client()
    if redis_client is None:
        return {}
    values = redis_client.mget([STAMP_PREFIX + name for name in names])
    return {name: float(value) for name, value in zip(names, values, strict=True) if value is not None}
