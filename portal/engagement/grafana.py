"""Links from a cluster's health page to its organization's Grafana dashboards.

The observability blueprint's stack outputs ``GrafanaEndpoint`` (https://<workspace>.grafana-workspace.<region>
.amazonaws.com), merged into its cluster's outputs; any cluster of the organization may hold one. The dashboards are the ones the
observability stack provisions (GPU health from DCGM, EFA, node exporter; ``clusters.health.alerts.dashboards``), opened
by their fixed uid (``/d/<uid>``), which is the same in every workspace.
"""
from __future__ import annotations

from urllib.parse import urlsplit

from clusters.health.alerts.dashboards import TITLES
from clusters.models import Cluster

DASHBOARDS = tuple((label, uid) for uid, (label, _title) in TITLES.items())
OUTPUT_KEY = "GrafanaEndpoint"


def _safe(url: str) -> str | None:
    """Only https URLs on an Amazon Managed Grafana (or other https) host: nothing a stack output could abuse."""
    parts = urlsplit(url.strip()) if isinstance(url, str) else None
    if parts is None or parts.scheme != "https" or not parts.netloc:
        return None
    return f"https://{parts.netloc}{parts.path.rstrip('/')}"


def workspaces(user, organization) -> list[dict]:
    """The organization's Grafana workspaces the user may see, each with its dashboard links (one query: a
    cluster's ``outputs`` merge the outputs of all its stacks, the observability stack's included)."""
    found = [outputs.get(OUTPUT_KEY) for outputs in Cluster.objects.restrict(user).filter(
        organization=organization, outputs__has_key=OUTPUT_KEY).order_by("pk").values_list("outputs", flat=True)]
    result, seen = [], set()
    for raw in found:
        base = _safe(raw)
        if base is None or base in seen:
            continue
        seen.add(base)
        result.append({"url": base, "host": urlsplit(base).netloc, "dashboards": [
            (label, f"{base}/d/{uid}") for label, uid in DASHBOARDS]})
    return result
