"""The trend of a cluster's validation runs: plateau bus bandwidth over time by NCCL and aws-ofi-nccl versions, with a
regression flagged when a version's median falls under the previous one's."""
from __future__ import annotations

import statistics

from django.conf import settings


def _plain_version(value: str) -> str:
    """``v2.27.7-1`` and ``2.27.7+cuda12.8`` are both NCCL 2.27.7; ``v1.16.3`` is aws-ofi-nccl 1.16.3."""
    value = (value or "").strip().lstrip("v")
    return value.split("+")[0].split("-")[0] if value else ""


def trend(runs, collective: str = "all_reduce") -> dict:
    """Plateau bus bandwidth over time keyed by (NCCL, aws-ofi-nccl) versions, oldest first, from ``runs``
    (a restricted queryset of one cluster's runs). A version whose median falls more than
    VALIDATION_REGRESSION_SHARE under the previous version's median is flagged as a regression."""
    rows = (runs.filter(collective=collective, plateau_busbw__isnull=False).order_by("uploaded_at", "pk")
            .values_list("pk", "uploaded_at", "plateau_busbw", "nodes", "verdict", "nccl_version", "ofi_version",
                         "job__nccl_version", "job__ofi_version")[:500])
    points, groups = [], {}
    for pk, at, busbw, nodes, verdict, nccl_v, ofi_v, job_nccl, job_ofi in rows:
        key = (_plain_version(nccl_v or job_nccl) or "unknown", _plain_version(ofi_v or job_ofi) or "unknown")
        points.append({"run": pk, "at": at, "plateau_busbw": busbw, "nodes": nodes, "verdict": verdict,
                       "nccl_version": key[0], "ofi_version": key[1]})
        groups.setdefault(key, []).append(busbw)
    versions, previous = [], None
    for (nccl_v, ofi_v), values in groups.items():  # in order of first appearance
        median = statistics.median(values)
        change = (median - previous) / previous if previous else None
        versions.append({"nccl_version": nccl_v, "ofi_version": ofi_v, "runs": len(values), "median": round(median, 2),
                         "change": None if change is None else round(change, 4),
                         "regression": change is not None and change < -settings.VALIDATION_REGRESSION_SHARE})
        previous = median
    return {"collective": collective, "points": points, "versions": versions,
            "regression": any(v["regression"] for v in versions[-1:])}
