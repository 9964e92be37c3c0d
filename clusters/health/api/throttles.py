"""Rate limit of the push endpoint per cluster token (not per address: exporters of one cluster may
push from many nodes, and one token must not be able to flood the health queue)."""
from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from clusters.health.models import ClusterHealthConfig


class ClusterTokenRateThrottle(SimpleRateThrottle):
    scope = "health_push"

    def get_rate(self):
        return settings.HEALTH_PUSH_RATE

    def allow_request(self, request, view):
        self.rate = self.get_rate()  # read per request, so a settings change applies at once
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request, view):
        if not isinstance(request.auth, ClusterHealthConfig):
            return None
        return self.cache_format % {"scope": self.scope, "ident": f"cluster-{request.auth.cluster_id}"}
