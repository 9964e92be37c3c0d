"""Requests counted by URL name, method and status, with their latency (``portal_http_*``).

The label is the URL pattern's name (``clusters:cluster_detail``), never the path: a path carries slugs and ids a
scraper should not collect, and any path a scanner invents would be a new series. Unmatched paths are one label.
"""
from __future__ import annotations

import time

from portal.core.metrics.instruments import REQUEST_SECONDS, REQUESTS

UNMATCHED = "unmatched"


class RequestMetricsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = (match.view_name or match.route or UNMATCHED) if match is not None else UNMATCHED
        REQUESTS.labels(view, request.method if request.method in _METHODS else "other", str(response.status_code)).inc()
        REQUEST_SECONDS.labels(view).observe(time.perf_counter() - started)
        return response


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
