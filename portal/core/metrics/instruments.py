"""The counters and histograms the portal bumps as it works, and the small hooks that bump them.

Every name starts ``portal_``. prometheus_client keeps them in this process, or in its multiprocess files when
``PROMETHEUS_MULTIPROC_DIR`` is set (gunicorn.conf.py sets it for the web workers; a Celery worker given the same
directory adds its own), so one scrape of any web worker answers for all of them. Labels are ids, URL names,
AWS operation names and fixed words: nothing a user typed.
"""
from __future__ import annotations

import re

from django.utils import timezone
from prometheus_client import Counter, Histogram

# Request latency: pages aim at 0.5 s (bench/time_to_know.py), so the buckets are fine below a second.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# A push's lag (received to processed): the goal is within two push intervals (60 s at 30 s).
LAG_BUCKETS = (0.5, 1, 2, 5, 10, 15, 30, 45, 60, 90, 120, 300, 600)

REQUESTS = Counter("portal_http_requests", "Requests answered, by URL name, method and status.",
                   ["view", "method", "status"])
REQUEST_SECONDS = Histogram("portal_http_request_duration_seconds", "Time to answer a request, by URL name.",
                            ["view"], buckets=LATENCY_BUCKETS)
AWS_CALLS = Counter("portal_aws_calls", "AWS API calls made through portal.core.aws, by service, operation and error "
                    "code (empty: success).", ["service", "operation", "code"])
OUTBOUND_REFUSALS = Counter("portal_outbound_refusals", "Requests to user-given URLs the outbound guard refused "
                            "or that failed, by reason.", ["reason"])
DELIVERIES = Counter("portal_notification_deliveries", "Notification delivery attempts, by channel and outcome "
                     "(sent, retry, failed).", ["channel", "outcome"])
PUSHES_RECEIVED = Counter("portal_health_pushes_received", "Health pushes accepted, by cluster id.", ["cluster_id"])
PUSHES_PROCESSED = Counter("portal_health_pushes_processed", "Health pushes the worker finished, by cluster id and "
                           "status.", ["cluster_id", "status"])
PUSH_LAG = Histogram("portal_health_push_lag_seconds", "From a push accepted to the worker done with it.",
                     buckets=LAG_BUCKETS)

# The guard's sentences (portal.core.outbound) reduced to fixed words: the label never carries a URL or a host.
_REASONS = (
    ("private", re.compile(r"private, local or reserved")),
    ("unreachable", re.compile(r"could not be reached")),
    ("unresolved", re.compile(r"does not resolve")),
    ("scheme", re.compile(r"https")),
    ("redirect", re.compile(r"redirect")),
    ("too_large", re.compile(r"larger than")),
    ("timeout", re.compile(r"in time")),
    ("cut_off", re.compile(r"cut off")),
    ("invalid", re.compile(r"valid URL|no host name|credentials|not JSON")),
)


def outbound_reason(sentence: str) -> str:
    """The fixed word for one of the outbound guard's sentences ("other" for one not listed)."""
    for word, pattern in _REASONS:
        if pattern.search(sentence):
            return word
    return "other"


def count_outbound_refusal(sentence: str) -> None:
    OUTBOUND_REFUSALS.labels(outbound_reason(sentence)).inc()


def _attempt(event_name: str = "", response=None, caught_exception=None, **kwargs) -> None:
    """One attempt's outcome (botocore's ``needs-retry.<service>.<Operation>`` event follows every attempt)."""
    parts = event_name.split(".")
    if len(parts) < 3:
        return
    code = ""
    if caught_exception is not None:
        code = type(caught_exception).__name__
    elif response is not None:
        http, parsed = response
        if http.status_code >= 300:
            code = ((parsed or {}).get("Error") or {}).get("Code") or f"HTTP{http.status_code}"
    AWS_CALLS.labels(parts[1], parts[2], code[:64]).inc()


def watch_aws_client(client) -> None:
    """Count every call ``client`` makes (each attempt, retries included: a throttled call retried three times
    counts three Throttling answers), by botocore's own events."""
    client.meta.events.register("needs-retry", _attempt, unique_id="portal-metrics-attempt")


def count_push_received(cluster_id: int) -> None:
    PUSHES_RECEIVED.labels(str(cluster_id)).inc()


def count_push_finished(cluster_id: int, status: str, received_at) -> None:
    """A push the worker is done with: its status, and its lag from accepted to done when it was processed."""
    PUSHES_PROCESSED.labels(str(cluster_id), str(status)).inc()
    if received_at is not None:
        PUSH_LAG.observe(max((timezone.now() - received_at).total_seconds(), 0.0))


def count_delivery(channel: str, outcome: str) -> None:
    DELIVERIES.labels(channel or "other", outcome).inc()
