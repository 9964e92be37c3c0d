"""Pull a cluster's health from a Prometheus-compatible endpoint (``/api/v1/query``, PromQL).

A self-managed Prometheus with no, basic or bearer auth, or Amazon Managed Service for Prometheus
(AMP) signed with SigV4 (service ``aps``) through botocore. The instant-vector answer is turned
into the metric families ``prometheus.parse_families`` reads, so pulled and pushed scrapes go
through the same summarizer.
"""
from __future__ import annotations

import math
from collections import defaultdict
from urllib.parse import urlencode

import requests
from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Sample

from clusters.health import conf
from clusters.health.choices import AuthKind
from clusters.health.prometheus import DCGM_FIELDS, EFA_FIELDS, EFA_PREFIX, XID_COUNT_FAMILY, ParseError, Scrape, parse_families

# A DCGM gauge every exporter serves: it tells which GPUs exist even when all health fields are zero.
PRESENCE = "DCGM_FI_DEV_GPU_TEMP"
METRICS: tuple[str, ...] = (PRESENCE, *DCGM_FIELDS, XID_COUNT_FAMILY, *(EFA_PREFIX + name for name in EFA_FIELDS))
# One selector for everything (counters may carry a _total suffix).
QUERY = '{__name__=~"(' + "|".join(METRICS) + ')(_total)?"}'


class PullError(RuntimeError):
    """The endpoint could not be queried or answered something unusable."""


def query_url(base: str) -> str:
    return base.rstrip("/") + "/api/v1/query"


def sigv4_headers(url: str, method: str, body: bytes, region: str, credentials=None) -> dict[str, str]:
    """Headers of a request signed for AMP (service ``aps``) with botocore's SigV4 signer."""
    import botocore.session
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    if credentials is None:
        credentials = botocore.session.get_session().get_credentials()
        if credentials is None:
            raise PullError("no AWS credentials available to sign the AMP request")
    request = AWSRequest(method=method, url=url, data=body,
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    SigV4Auth(credentials.get_frozen_credentials() if hasattr(credentials, "get_frozen_credentials") else credentials,
              "aps", region).add_auth(request)
    return dict(request.headers.items())


def fetch(config, query: str = QUERY, timeout: float | None = None) -> dict:
    """POST the PromQL query to the configured endpoint; the decoded JSON answer."""
    if not config.pull_url:
        raise PullError("no Prometheus endpoint configured")
    url = query_url(config.pull_url)
    body = urlencode({"query": query}).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    auth = None
    if config.auth_kind == AuthKind.BASIC:
        auth = (config.username, config.secret)
    elif config.auth_kind == AuthKind.BEARER:
        headers["Authorization"] = f"Bearer {config.secret}"
    elif config.auth_kind == AuthKind.SIGV4:
        headers = sigv4_headers(url, "POST", body, config.aws_region or "us-east-1")
    try:
        response = requests.post(url, data=body, headers=headers, auth=auth,
                                 timeout=timeout or conf.get("HEALTH_PULL_TIMEOUT"))
    except requests.RequestException as exc:
        raise PullError(f"{url}: {exc}") from exc
    if response.status_code != 200:
        raise PullError(f"{url} answered {response.status_code}: {response.text[:300]}")
    try:
        data = response.json()
    except ValueError:
        raise PullError(f"{url} did not answer JSON") from None
    if data.get("status") != "success":
        raise PullError(f"{url}: {data.get('errorType', 'error')}: {data.get('error', 'query failed')}")
    return data


def to_families(data: dict) -> list[Metric]:
    """Instant-vector JSON → metric families shaped like the text parser's (name, samples)."""
    result = (data.get("data") or {}).get("result")
    if (data.get("data") or {}).get("resultType") != "vector" or not isinstance(result, list):
        raise PullError("the query did not answer an instant vector")
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
        raise PullError(f"the endpoint holds no usable series: {exc}") from exc
