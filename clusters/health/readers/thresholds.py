"""The one table of health thresholds: the summary judges scrapes by it, the alert rules are generated from it.

A dashboard that says a GPU is fine while an alert says it is failing (or the other way round) is worse
than either alone, so the numbers live here once. ``clusters.health.readers.summary`` reads them when it judges a
node; ``clusters.health.alerts.rules`` turns each row into a Prometheus alert rule for Amazon Managed Service
for Prometheus (the observability stack's ``AWS::APS::RuleGroupsNamespace``). A change here changes both,
and ``tests/clusters/test_alerts.py`` fails until the blueprint carries the regenerated rules.

Pure Python: no Django, so the summary (and the blueprint generator) can import it anywhere.
"""
from __future__ import annotations

from dataclasses import dataclass

# A node that has not reported for this long is "not reporting" (the default of HEALTH_NODE_SILENT_MINUTES).
NODE_SILENT_MINUTES = 15
# A GPU that reported within this window and no longer does is missing (the alert's look-back).
MISSING_GPU_LOOKBACK = "1h"
# The window over which the alert rules measure the growth of a counter (the scrape interval is 60 s).
GROWTH_WINDOW = "10m"


@dataclass(frozen=True)
class Threshold:
    """One signal: a finding when the value (``growth``: its increase since the last report) is above ``above``."""

    kind: str  # the fault kind the summary opens (``clusters.health.readers.summary``)
    family: str  # the exporter family the value comes from
    above: float = 0
    growth: bool = False
    severity: str = "warning"  # the alert's severity label; the fault's own severity is the summary's


# Every row's ``kind`` is a fault kind the summary produces; EFA rows are one per counter.
THRESHOLDS: dict[str, Threshold] = {t.kind: t for t in (
    Threshold("xid", "DCGM_FI_DEV_XID_ERRORS"),
    Threshold("uncorrectable_remapped_rows", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"),
    Threshold("row_remap_failure", "DCGM_FI_DEV_ROW_REMAP_FAILURE", severity="critical"),
    Threshold("thermal_violation", "DCGM_FI_DEV_THERMAL_VIOLATION", growth=True),
    Threshold("power_violation", "DCGM_FI_DEV_POWER_VIOLATION", growth=True, severity="info"),
    Threshold("ecc_dbe", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", severity="critical"),
    Threshold("efa_rdma_read_err", "node_amazonefa_rdma_read_wr_err", growth=True),
    Threshold("efa_rdma_write_err", "node_amazonefa_rdma_write_wr_err", growth=True),
    Threshold("efa_retrans_timeout", "node_amazonefa_retrans_timeout_events", growth=True),
    Threshold("efa_unresponsive_remote", "node_amazonefa_unresponsive_remote_events", growth=True),
    Threshold("efa_impaired_remote", "node_amazonefa_impaired_remote_conn_events", growth=True),
    Threshold("efa_rx_drops", "node_amazonefa_rx_drops", growth=True),
)}
# EFA counter name (the part after node_amazonefa_) -> its row.
EFA_THRESHOLDS: dict[str, Threshold] = {t.family.removeprefix("node_amazonefa_"): t
                                        for t in THRESHOLDS.values() if t.family.startswith("node_amazonefa_")}


def exceeds(kind: str, value: float | None) -> bool:
    """True when ``value`` (a reading, or a counter's growth for growth rows) is a finding for ``kind``."""
    return value is not None and value > THRESHOLDS[kind].above
