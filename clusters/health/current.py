"""A cluster's current health: the merge of its reports.

Exporters may push the whole cluster or one node at a time, and Prometheus returns only the nodes
it still scrapes. So a report speaks for the nodes it covers: their node rows are replaced, their
faults refreshed or counted absent, and every other node stays as the last report that covered it
left it. A report declared ``full`` speaks for the whole cluster: nodes missing from it leave the
node table and their faults count as absent.

The cluster's figures (nodes per verdict, the dashboard's panels) are kept in
``ClusterHealthState.totals`` by difference: subtract the rows a report replaces, add the new ones.
A one-node push therefore costs one node, not the cluster.

Nodes the cluster's size promises but that have not reported within ``HEALTH_NODE_SILENT_MINUTES``
are "not reporting" (``not_reporting``), wherever health is summarized.
"""
from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, F, Q, Sum
from django.db.models.functions import Greatest
from django.utils import timezone
from django.utils.translation import ngettext

from clusters.health.models import ClusterHealthState, NodeHealth
from clusters.health.readers.summary import VERDICTS, HealthSummary

FULL, NODES = "full", "nodes"
SCOPES = (FULL, NODES)

# Per-node figures kept on NodeHealth.figures and summed into ClusterHealthState.totals.
FIGURES = ("gpus_expected", "gpus_seen", "unhealthy_gpus", "uncorrectable_remapped_rows",
           "correctable_remapped_rows", "xid_errors", "row_remap_failures", "thermal_violations", "missing_gpus")
_COUNTED_KINDS = {"xid": "xid_errors", "row_remap_failure": "row_remap_failures",
                  "thermal_violation": "thermal_violations"}
_SUMMED_KINDS = ("uncorrectable_remapped_rows", "correctable_remapped_rows")
_BAD_GPU_KINDS = ("xid", "ecc_dbe")


def node_figures(summary: HealthSummary) -> dict[str, dict]:
    """Each node's share of the report's figures (they add up to the summary's panels)."""
    by_host: dict[str, dict] = {}
    bad_gpus: dict[str, set] = defaultdict(set)
    for node in summary.nodes:
        missing = len(node.missing_gpus)
        by_host[node.hostname] = dict.fromkeys(FIGURES, 0) | {
            "gpus_expected": node.gpus_seen + missing, "gpus_seen": node.gpus_seen, "missing_gpus": missing}
    for fault in summary.faults:
        figures = by_host.get(fault.hostname)
        if figures is None:
            continue
        if fault.kind in _COUNTED_KINDS:
            figures[_COUNTED_KINDS[fault.kind]] += 1
        elif fault.kind in _SUMMED_KINDS:
            figures[fault.kind] += fault.value or 0
        if fault.kind in _BAD_GPU_KINDS and fault.gpu is not None:
            bad_gpus[fault.hostname].add(str(fault.gpu))
    for host, figures in by_host.items():
        figures["unhealthy_gpus"] = figures["missing_gpus"] + len(bad_gpus.get(host, ()))
    return by_host


def empty_totals() -> dict:
    return {"node_count": 0, **{f"nodes_{v}": 0 for v in VERDICTS}, **dict.fromkeys(FIGURES, 0)}


def apply(totals: dict, rows, sign: int) -> dict:
    """Add (sign 1) or subtract (sign -1) node rows given as ``(verdict, figures)`` pairs."""
    for verdict, figures in rows:
        totals["node_count"] += sign
        key = f"nodes_{verdict}"
        totals[key] = totals.get(key, 0) + sign
        for name in FIGURES:
            totals[name] = totals.get(name, 0) + sign * (figures or {}).get(name, 0)
    return totals


def worst_rank(totals: dict) -> int:
    return max((rank for rank, v in enumerate(VERDICTS) if totals.get(f"nodes_{v}", 0) > 0), default=-1)


def healthy_gpu_share(totals: dict) -> float | None:
    expected = totals.get("gpus_expected", 0)
    return round((expected - totals.get("unhealthy_gpus", 0)) / expected, 6) if expected else None


def merge_state(previous: dict | None, new: dict, covered: set[str], scope: str) -> dict:
    """Counter baselines: the covered nodes' new ones, every other node's as they were."""
    if scope == FULL or not previous or previous.get("v") != new.get("v"):
        return new
    merged = {"v": new.get("v")}
    for section in ("gpu", "efa", "xid"):
        kept = {h: v for h, v in (previous.get(section) or {}).items() if h not in covered}
        merged[section] = {**kept, **(new.get(section) or {})}
    return merged


def silent_cutoff(now=None):
    return (now or timezone.now()) - timedelta(minutes=settings.HEALTH_NODE_SILENT_MINUTES)


def not_reporting(cluster_ids, now=None) -> dict[int, int]:
    """Nodes not reporting per cluster (only clusters that ever reported): nodes the cluster's size
    promises that never reported, plus known nodes silent past the threshold. Two queries."""
    ids = list(cluster_ids)
    if not ids:
        return {}
    silent = dict(NodeHealth.objects.filter(cluster_id__in=ids, seen_at__lt=silent_cutoff(now))
                  .values("cluster_id").annotate(n=Count("pk")).order_by().values_list("cluster_id", "n"))
    result = {}
    for cluster_id, size, known in (ClusterHealthState.objects.filter(cluster_id__in=ids, last_report__isnull=False)
                                    .values_list("cluster_id", "cluster__node_count", "nodes_known")):
        result[cluster_id] = max(size - known, 0) + silent.get(cluster_id, 0)
    return result


def silent_q(now=None) -> Q:
    """Clusters (filtered from ``Cluster``) with nodes not reporting: one silent past the threshold, or
    fewer nodes known than the cluster's size. Only clusters that ever reported."""
    return Q(health_state__last_report__isnull=False) & (
        Q(health_state__oldest_seen__lt=silent_cutoff(now)) | Q(health_state__nodes_known__lt=F("node_count")))


def not_reporting_by_organization(clusters, now=None) -> dict[int, int]:
    """Nodes not reporting per organization, over the given cluster queryset (two grouped queries)."""
    cutoff = silent_cutoff(now)
    # Every cluster (a program manager's view): no need to match each row against the list of them.
    within = {"cluster__in": clusters} if clusters.query.where else {}
    missing = dict(ClusterHealthState.objects.filter(**within, last_report__isnull=False)
                   .values("cluster__organization_id")
                   .annotate(n=Sum(Greatest(F("cluster__node_count") - F("nodes_known"), 0))).order_by()
                   .values_list("cluster__organization_id", "n"))
    silent = dict(NodeHealth.objects.filter(**within, seen_at__lt=cutoff)
                  .values("cluster__organization_id").annotate(n=Count("pk")).order_by()
                  .values_list("cluster__organization_id", "n"))
    return {org: (missing.get(org) or 0) + (silent.get(org) or 0) for org in set(missing) | set(silent)
            if (missing.get(org) or 0) + (silent.get(org) or 0)}


def nodes_text(count: int) -> str:
    """"1 node not reporting", "3 nodes not reporting"."""
    return ngettext("%(count)s node not reporting", "%(count)s nodes not reporting", count) % {"count": count}
