"""Pull a cluster's health from a Prometheus-compatible endpoint (``/api/v1/query``, PromQL).

A self-managed Prometheus with no, basic or bearer auth, or Amazon Managed Service for Prometheus
(AMP) signed with SigV4 (service ``aps``) with the organization's assumed role. Every request goes
through ``portal.core.outbound`` (no private addresses, no redirects, bounded answers). The instant-vector answer is turned
into the metric families ``prometheus.parse_families`` reads, so pulled and pushed scrapes go
through the same summarizer.
"""
from __future__ import annotations

import base64
import math
from collections import defaultdict
from urllib.parse import urlencode, urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from django.conf import settings
from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Sample

from clusters.health.choices import AuthKind
from clusters.health.readers.prometheus import (
    DCGM_FIELDS,
    EFA_FIELDS,
    EFA_PREFIX,
    EFA_TRAFFIC_FIELDS,
    NEURONCORE_UTILIZATION,
    UTILIZATION_FIELDS,
    XID_COUNT_FAMILY,
    ParseError,
    Scrape,
    parse_families,
)
from portal.core import aws, outbound

# A DCGM gauge every exporter serves: it tells which GPUs exist even when all health fields are zero.
PRESENCE = "DCGM_FI_DEV_GPU_TEMP"
# The utilization families go into the same per-GPU (and per-NeuronCore) fields as a push's, so capacity
# accounting reads utilization from either path.
METRICS: tuple[str, ...] = (PRESENCE, *DCGM_FIELDS, XID_COUNT_FAMILY,
                            *(EFA_PREFIX + name for name in (*EFA_FIELDS, *EFA_TRAFFIC_FIELDS)),
                            *UTILIZATION_FIELDS, NEURONCORE_UTILIZATION)
# One selector for everything (counters may carry a _total suffix).
QUERY = '{__name__=~"(' + "|".join(METRICS) + ')(_total)?"}'


class PullError(RuntimeError):
    """The endpoint could not be queried or answered something unusable. The message is the portal's
    own sentence (safe to show); ``status`` is the HTTP status the endpoint answered, if any."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


# Prometheus's own error types (https://prometheus.io/docs/prometheus/latest/querying/api/): named on the
# page when the endpoint gives one of these; anything else it says is not repeated.
KNOWN_ERROR_TYPES = frozenset({"bad_data", "execution", "timeout", "canceled", "internal", "unavailable", "not_found"})


def query_url(base: str) -> str:
    return base.rstrip("/") + "/api/v1/query"


def sigv4_headers(url: str, method: str, body: bytes, region: str, credentials) -> dict[str, str]:
    """Headers of a request signed for AMP (service ``aps``) with botocore's SigV4 signer."""
    request = AWSRequest(method=method, url=url, data=body,
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    SigV4Auth(credentials.get_frozen_credentials() if hasattr(credentials, "get_frozen_credentials") else credentials,
              "aps", region).add_auth(request)
    return dict(request.headers.items())


def amp_region(url: str) -> str | None:
    """The region of an AMP workspace URL (``https://aps-workspaces.<region>.amazonaws.com/...``)."""
    return outbound.amp_region(urlsplit(url).hostname or "")


def prepare(config, query: str = QUERY) -> tuple[str, bytes, dict[str, str]]:
    """URL, body and headers of the query request, with its credentials (nothing is sent)."""
    if not config.pull_url:
        raise PullError("No Prometheus endpoint is configured.")
    url = query_url(config.pull_url)
    body = urlencode({"query": query}).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    if config.auth_kind == AuthKind.BASIC:
        token = base64.b64encode(f"{config.username}:{config.secret}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    elif config.auth_kind == AuthKind.BEARER:
        headers["Authorization"] = f"Bearer {config.secret}"
    elif config.auth_kind == AuthKind.SIGV4:
        region = amp_region(url)
        if region is None or urlsplit(url).scheme != "https":
            raise PullError("SigV4 signing is only for https Amazon Managed Prometheus workspace URLs.")
        organization = config.cluster.organization
        try:
            credentials = aws.signing_credentials(organization)
        except aws.AwsError as exc:
            raise PullError("The portal could not assume the organization's IAM role to sign the request; "
                            "check the role and its trust policy.") from exc
        headers = {**sigv4_headers(url, "POST", body, region, credentials), "Accept": "application/json"}
    return url, body, headers


def fetch(config, query: str = QUERY, timeout: float | None = None) -> dict:
    """POST the PromQL query to the configured endpoint through the guarded client; the decoded answer."""
    url, body, headers = prepare(config, query)
    try:
        answer = outbound.post(url, body=body, headers=headers, timeout=timeout or settings.HEALTH_PULL_TIMEOUT,
                               max_bytes=settings.HEALTH_PULL_MAX_BYTES)
    except outbound.OutboundError as exc:
        raise PullError(exc.reason, exc.status) from None
    if answer.status != 200:
        raise PullError(outbound.describe_status(answer.status), answer.status)
    try:
        data = answer.json()
    except outbound.OutboundError:
        raise PullError("The endpoint did not answer JSON; is this a Prometheus query API?", 200) from None
    if not isinstance(data, dict) or data.get("status") != "success":
        kind = data.get("errorType") if isinstance(data, dict) else None
        named = f" ({kind})" if kind in KNOWN_ERROR_TYPES else ""
        raise PullError(f"The endpoint refused the query{named}.", 200)
    return data


def to_families(data: dict) -> list[Metric]:
    """Instant-vector JSON → metric families shaped like the text parser's (name, samples)."""
    result = (data.get("data") or {}).get("result")
    if (data.get("data") or {}).get("resultType") != "vector" or not isinstance(result, list):
        raise PullError("The query did not answer an instant vector.", 200)
    by_name: dict[str, list[Sample]] = defaultdict(list)
    for series in result:
        labels = dict(series.get("metric") or {})
        name = labels.pop("__name__", None)
        value = series.get("value")
        if not name or not isinstance(value, list) or len(value) != 2:
            continue
        # Prometheus renames an exporter's own instance/job labels when they clash with the target's.
        for label in ("instance", "job"):
            if f"exported_{label}" in labels:
                labels[label] = labels.pop(f"exported_{label}")
        try:
            number = float(value[1])
        except (TypeError, ValueError):
            number = math.nan
        by_name[name].append(Sample(name, labels, number))
    families = []
    for name, samples in by_name.items():
        family = Metric(name.removesuffix("_total"), "", "untyped")
        family.samples = samples
        families.append(family)
    return families


def pull(config) -> Scrape:
    """Query the endpoint and read the answer into a ``Scrape`` (``PullError``/``ParseError`` on failure)."""
    families = to_families(fetch(config))
    try:
        return parse_families(families)
    except ParseError as exc:
        raise PullError("The endpoint holds no usable DCGM or EFA series.", 200) from exc
