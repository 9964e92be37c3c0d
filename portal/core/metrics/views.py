"""/metrics: the portal's own figures in Prometheus text, for the operator's Prometheus only.

Off (404) until the operator sets ``METRICS_TOKEN`` (a bearer token the scraper sends) and/or
``METRICS_ALLOWED_NETWORKS`` (addresses the scraper connects from, as seen by Django: behind a proxy that is the
proxy, so a token is the safer choice); any other caller gets 403. What it shows is ids and counts, never an
organization's data, so the token guards the portal's load, not secrets; it is still not for the public.
"""
from __future__ import annotations

import hmac
import ipaddress
import os

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpResponse, HttpResponseForbidden
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess

from portal.celery import app
from portal.core.jobs import registry
from portal.core.metrics.collector import PortalCollector


class _ThisProcess:
    """The default registry's metrics (this process's counters, its CPU and memory) inside a scrape's registry."""

    def collect(self):
        return REGISTRY.collect()


def allowed(request) -> bool | None:
    """None: /metrics is off here; True: the caller may read it; False: refused."""
    token = settings.METRICS_TOKEN
    networks = settings.METRICS_ALLOWED_NETWORKS
    if not token and not networks:
        return None
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(header[7:].strip().encode(), token.encode()):
        return True
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(net, strict=False) for net in networks)


def render() -> bytes:
    """One scrape: every process's counters (multiprocess files when gunicorn's workers share them) and the
    figures read now."""
    scrape = CollectorRegistry(auto_describe=False)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(scrape)
    else:
        scrape.register(_ThisProcess())
    scrape.register(PortalCollector([queue.name for queue in app.conf.task_queues], registry.kinds))
    return generate_latest(scrape)


@require_safe
@never_cache
@login_not_required
def metrics(request):
    verdict = allowed(request)
    if verdict is None:
        raise Http404("metrics are off")
    if not verdict:
        return HttpResponseForbidden("metrics need the scraper's token or network", content_type="text/plain")
    return HttpResponse(render(), content_type=CONTENT_TYPE_LATEST)
