"""Grafana dashboards (GPU health, EFA, nodes) built from the portal's own panel definitions.

The GPU health dashboard shows the six figures of the portal's health page (``HealthReport.PANELS``) with the
same thresholds (the alert rules' expressions, from :mod:`clusters.health.readers.thresholds`), plus the utilization,
throttling and NVLink series behind them; the EFA dashboard one panel per EFA error counter the summary reads;
the node dashboard what node exporter says about the hosts. Every dashboard has a fixed ``uid``, so the health
page links open ``/d/<uid>`` in the organization's workspace whatever ids Grafana gave them.

The JSON is kept in the repository (``clusters/blueprints/dashboards/<uid>.json``) so a reviewer sees what is
provisioned; ``python -m clusters.health.alerts.dashboards`` rewrites it and a test fails when it is stale. The
files are pure data: no Django, no network.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from clusters.health.alerts import rules as alerts
from clusters.health.readers import thresholds

DIRECTORY = Path(__file__).resolve().parents[2] / "blueprints" / "dashboards"
GPU_HEALTH, EFA, NODES = "geniac-gpu-health", "geniac-efa", "geniac-nodes"
# Titles and link labels of the health page, in the order it shows them.
TITLES = {GPU_HEALTH: ("GPU health", "GENIAC GPU health"), EFA: ("EFA network", "GENIAC EFA network"),
          NODES: ("Nodes", "GENIAC nodes")}
# The six figures of the health page (HealthReport.PANELS, which this module must not import: it is Django).
PANELS = (
    ("uncorrectable_remapped_rows", "Uncorrectable remapped rows"),
    ("correctable_remapped_rows", "Correctable remapped rows"),
    ("xid_errors", "GPUs with XID errors"),
    ("row_remap_failures", "Row remap failures"),
    ("thermal_violations", "Thermal violations"),
    ("missing_gpus", "GPUs missing from nvidia-smi"),
)
CLUSTER = '{cluster=~"$cluster"}'


def _rule_expr(kind: str) -> str:
    return next(r["expr"] for r in alerts.rules() if r["labels"]["geniac_kind"] == kind)


def _scoped(expr: str) -> str:
    """Restrict every DCGM family of an expression to the chosen clusters."""
    out = expr
    for family in sorted({alerts.XID_FAMILY, alerts.PRESENCE_FAMILY, *(t.family for t in thresholds.THRESHOLDS.values())},
                         key=len, reverse=True):
        out = out.replace(f"{family}(_total)?\"}}", f"{family}(_total)?\",cluster=~\"$cluster\"}}")
        out = _replace_bare(out, family)
    return out


def _replace_bare(expr: str, family: str) -> str:
    parts, i = [], 0
    while True:
        j = expr.find(family, i)
        if j < 0:
            parts.append(expr[i:])
            return "".join(parts)
        end = j + len(family)
        parts.append(expr[i:end])
        if j > 0 and expr[j - 1] in "\"~" or end < len(expr) and (expr[end].isalnum() or expr[end] in "_({"):
            i = end
            continue
        parts.append(CLUSTER)
        i = end


def _when_collected(count: str, family: str) -> str:
    """``count`` (zero when nothing matches) only where the exporters export ``family`` at all: a family the
    exporter lacks gives no value, which the panel shows as "not collected" rather than a flat zero."""
    return f'({count} or vector(0)) and on() count({{__name__=~"{family}(_total)?",cluster=~"$cluster"}})'


# What a panel shows where its series is absent (dcgm-exporter's default counters lack some; older EFA
# exporters lack some counters): the health page's words.
NOT_COLLECTED = "not collected"

# Each figure of the health page as a PromQL count or sum over the same series and threshold.
FIGURE_EXPRESSIONS = {
    "uncorrectable_remapped_rows": f"sum(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{CLUSTER})",
    "correctable_remapped_rows": f"sum(DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS{CLUSTER})",
    "xid_errors": _when_collected(f"count({alerts.XID_FAMILY}{CLUSTER} > {thresholds.THRESHOLDS['xid'].above:g})",
                                  alerts.XID_FAMILY),
    "row_remap_failures": _when_collected(f"count({_scoped(_rule_expr('row_remap_failure'))})",
                                          thresholds.THRESHOLDS["row_remap_failure"].family),
    "thermal_violations": _when_collected(f"count({_scoped(_rule_expr('thermal_violation'))})",
                                          thresholds.THRESHOLDS["thermal_violation"].family),
    "missing_gpus": _when_collected(f"count({_scoped(_rule_expr(alerts.MISSING_GPU))})", alerts.PRESENCE_FAMILY),
}
GPU_SERIES = (
    ("GPU busy (graphics engine active)", f"avg by (Hostname) (DCGM_FI_PROF_GR_ENGINE_ACTIVE{CLUSTER})", "percentunit"),
    ("GPU utilization (%)", f"avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL{CLUSTER})", "percent"),
    ("Thermal throttling (ns/s)", 'sum by (Hostname) (rate({__name__=~"DCGM_FI_DEV_THERMAL_VIOLATION(_total)?",'
                                  'cluster=~"$cluster"}[5m]))', "ns"),
    ("Power capping (ns/s)", 'sum by (Hostname) (rate({__name__=~"DCGM_FI_DEV_POWER_VIOLATION(_total)?",'
                             'cluster=~"$cluster"}[5m]))', "ns"),
    ("NVLink bandwidth", f"sum by (Hostname) (rate(DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{CLUSTER}[5m]))", "Bps"),
    ("GPU temperature (°C)", f"max by (Hostname) (DCGM_FI_DEV_GPU_TEMP{CLUSTER})", "celsius"),
    ("Last XID per GPU", f"{alerts.XID_FAMILY}{CLUSTER} > 0", "none"),
    ("Double-bit ECC errors", f"sum by (Hostname) (DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{CLUSTER})", "short"),
)
NODE_SERIES = (
    ("Nodes answering scrapes", f"sum by (instance) (up{CLUSTER})", "short"),
    ("CPU busy", '1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle",cluster=~"$cluster"}[5m]))', "percentunit"),
    ("Memory available", f"min by (instance) (node_memory_MemAvailable_bytes{CLUSTER})", "bytes"),
    ("Root file system free", 'min by (instance) (node_filesystem_avail_bytes{mountpoint="/",cluster=~"$cluster"})', "bytes"),
    ("Network received", f"sum by (instance) (rate(node_network_receive_bytes_total{CLUSTER}[5m]))", "Bps"),
)


def _panel(pid: int, title: str, expr: str, kind: str, unit: str, x: int, y: int, w: int = 8, h: int = 8) -> dict:
    return {"id": pid, "type": kind, "title": title, "datasource": {"type": "prometheus", "uid": "${datasource}"},
            "gridPos": {"x": x, "y": y, "w": w, "h": h},
            "fieldConfig": {"defaults": {"unit": unit, "noValue": NOT_COLLECTED}, "overrides": []},
            "targets": [{"refId": "A", "expr": expr, "datasource": {"type": "prometheus", "uid": "${datasource}"}}]}


def _dashboard(uid: str, panels: list[dict]) -> dict:
    return {
        "uid": uid, "title": TITLES[uid][1], "tags": ["geniac"], "schemaVersion": 39, "version": 1,
        "timezone": "utc", "refresh": "1m", "time": {"from": "now-6h", "to": "now"}, "editable": False,
        "templating": {"list": [
            {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Prometheus"},
            {"name": "cluster", "type": "query", "label": "Cluster", "multi": True, "includeAll": True,
             "datasource": {"type": "prometheus", "uid": "${datasource}"}, "refresh": 2,
             "query": {"query": "label_values(up, cluster)", "refId": "cluster"}, "current": {}},
        ]},
        "panels": panels,
    }


def gpu_health() -> dict:
    labels = dict(PANELS)
    panels = [_panel(i + 1, labels[key], FIGURE_EXPRESSIONS[key], "stat", "short", (i % 6) * 4, 0, w=4, h=4)
              for i, (key, _) in enumerate(PANELS)]
    panels += [_panel(len(panels) + i + 1, title, expr, "timeseries", unit, (i % 3) * 8, 4 + (i // 3) * 8)
               for i, (title, expr, unit) in enumerate(GPU_SERIES)]
    return _dashboard(GPU_HEALTH, panels)


def efa() -> dict:
    panels = []
    for i, (counter, row) in enumerate(thresholds.EFA_THRESHOLDS.items()):
        series = f'{{__name__=~"{row.family}(_total)?",cluster=~"$cluster"}}'
        expr = f"sum by (instance, device) (increase({series}[{thresholds.GROWTH_WINDOW}]))"
        panels.append(_panel(i + 1, f"{counter} (growth over {thresholds.GROWTH_WINDOW})", expr, "timeseries", "short",
                             (i % 3) * 8, (i // 3) * 8))
    return _dashboard(EFA, panels)


def nodes() -> dict:
    return _dashboard(NODES, [_panel(i + 1, title, expr, "timeseries", unit, (i % 3) * 8, (i // 3) * 8)
                              for i, (title, expr, unit) in enumerate(NODE_SERIES)])


def all_dashboards() -> dict[str, dict]:
    return {GPU_HEALTH: gpu_health(), EFA: efa(), NODES: nodes()}


def expressions() -> list[str]:
    """Every PromQL expression the dashboards query (what the counters-file test reads)."""
    return [t["expr"] for d in all_dashboards().values() for p in d["panels"] for t in p["targets"]]


def text(uid: str) -> str:
    return json.dumps(all_dashboards()[uid], indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """Rewrite the JSON files (``--check``: only say whether they are current)."""
    stale = [uid for uid in TITLES if not (DIRECTORY / f"{uid}.json").is_file()
             or (DIRECTORY / f"{uid}.json").read_text() != text(uid)]
    if "--check" in argv:
        print("stale: " + ", ".join(stale) if stale else "current")
        return 1 if stale else 0
    DIRECTORY.mkdir(exist_ok=True)
    for uid in TITLES:
        (DIRECTORY / f"{uid}.json").write_text(text(uid))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
