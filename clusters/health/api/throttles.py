"""Rate limit of the push endpoint per cluster token (not per address: exporters of one cluster may
push from many nodes, and one token must not be able to flood the health queue).

Whenever Redis is configured (``REDIS_URL``) the count lives there, so it holds across every web process
and host: one atomic transaction increments the token's counter, gives a new window its expiry and reads
what is left of it. Without Redis (a single-process demo) DRF's cache-based throttle counts per process."""
from __future__ import annotations

import functools
import logging

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry
from rest_framework.throttling import SimpleRateThrottle

from clusters.health.models import ClusterHealthConfig

KEY_PREFIX = "portal:health-push-rate:"
logger = logging.getLogger(__name__)


@functools.cache
def _client(url: str) -> redis.Redis:
    """Short timeouts and no retry: a push must get its answer within 2 s when Redis is down or hung (then
    it is let through, see below), and the send that follows needs its share of those 2 s."""
    return redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))


def count(ident: str, window_seconds: int, url: str | None = None) -> tuple[int, int]:
    """Requests counted for ``ident`` in its current window (this one included), and the window's seconds left.

    The window opens with the first request and lasts ``window_seconds``; ``EXPIRE … NX`` gives the counter
    its expiry only when it has none, in the same transaction as the increment, so no counter outlives it."""
    pipe = _client(url or settings.REDIS_URL).pipeline(transaction=True)
    key = KEY_PREFIX + ident
    pipe.incr(key)
    pipe.expire(key, window_seconds, nx=True)
    pipe.ttl(key)
    counted, _, left = pipe.execute()
    return int(counted), max(int(left), 1)


class ClusterTokenRateThrottle(SimpleRateThrottle):
    scope = "health_push"

    def get_rate(self):
        return settings.HEALTH_PUSH_RATE

    def allow_request(self, request, view):
        self.rate = self.get_rate()  # read per request, so a settings change applies at once
        self.num_requests, self.duration = self.parse_rate(self.rate)
        if not settings.REDIS_URL:
            return super().allow_request(request, view)
        if self.rate is None or not isinstance(request.auth, ClusterHealthConfig):
            return True
        try:
            counted, self.seconds_left = count(f"cluster-{request.auth.cluster_id}", self.duration)
        except redis.RedisError as exc:
            # Redis down: the push is still stored and the sweep sends it later; refusing it would lose data.
            logger.warning("push rate limit not counted, Redis unavailable: %s", exc)
            return True
        return counted <= self.num_requests

    def wait(self):
        if settings.REDIS_URL:
            return self.seconds_left
        return super().wait()

    def get_cache_key(self, request, view):
        if not isinstance(request.auth, ClusterHealthConfig):
            return None
        return self.cache_format % {"scope": self.scope, "ident": f"cluster-{request.auth.cluster_id}"}
