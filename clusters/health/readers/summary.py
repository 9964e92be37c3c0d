"""Turn one health scrape into node verdicts, a fault list and the dashboard's cluster figures.

Some signals are states (an XID, a row-remap failure, a GPU that is missing) and can be
judged from one scrape. Others are counters that only mean something when they grow
(thermal and power throttling time, EFA errors and drops): ``summarize`` compares them
with the ``state`` returned by the previous call, which the portal keeps in a JSONField.
The first report for a node only records a baseline for those counters.

Verdicts are ordered, mildest first; a node takes the worst verdict of its faults.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from clusters.health.readers import baselines, reason_texts
from clusters.health.readers import xid as xids
from clusters.health.readers.exposition import parse
from clusters.health.readers.prometheus import EFA_FIELDS, EfaReading, GpuReading, Scrape
from clusters.health.readers.thresholds import EFA_THRESHOLDS, THRESHOLDS, exceeds
from portal.core import instance_types
from portal.core.choices import VERDICT_RANK as _RANK
from portal.core.choices import VERDICTS
from portal.core.stored_text import message

HEALTHY, DEGRADED, RESET_GPU, REBOOT, REPLACE = VERDICTS
_FROM_CONSEQUENCE = {
    xids.NONE: DEGRADED, xids.RESTART_JOB: DEGRADED, xids.RESET_GPU: RESET_GPU,
    xids.REBOOT_NODE: REBOOT, xids.REPLACE_NODE: REPLACE,
}
STATE_VERSION = 1

_CSV = "add this line to dcgm-exporter's counters file (-f, default /etc/dcgm-exporter/default-counters.csv): "
# The GPU health dashboard's signals: which families carry each, and how to turn it on when a scrape lacks it.
# The counters-file lines are those of NVIDIA/dcgm-exporter etc/default-counters.csv.
SIGNALS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("xid_errors", ("DCGM_FI_DEV_XID_ERRORS", "DCGM_EXP_XID_ERRORS_COUNT", "DCGM_FI_DEV_XID_ERRORS_ACTIVE"),
     _CSV + "'DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error encountered.'"),
    ("uncorrectable_remapped_rows", ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",),
     _CSV + "'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS, counter, Number of remapped rows for uncorrectable errors'"),
    ("correctable_remapped_rows", ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",),
     _CSV + "'DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS, counter, Number of remapped rows for correctable errors'"),
    ("row_remap_failures", ("DCGM_FI_DEV_ROW_REMAP_FAILURE",),
     _CSV + "'DCGM_FI_DEV_ROW_REMAP_FAILURE, gauge, Whether remapping of rows has failed'"),
    ("thermal_violations", ("DCGM_FI_DEV_THERMAL_VIOLATION",),
     _CSV + "'DCGM_FI_DEV_THERMAL_VIOLATION, counter, Throttling duration due to thermal constraints (in ns).' "
     "(commented out by default)"),
    ("ecc_dbe", ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",),
     _CSV + "'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, counter, Double-bit volatile ECC errors.' (not in the default file)"),
    ("power_violations", ("DCGM_FI_DEV_POWER_VIOLATION",),
     _CSV + "'DCGM_FI_DEV_POWER_VIOLATION, counter, Throttling duration due to power constraints.' "
     "(commented out by default)"),
)
# The EFA counters older EFA node exporters do not export: their panels and alerts are empty, not zero.
EFA_SIGNALS: tuple[tuple[str, str], ...] = tuple(
    (row.kind, row.family) for row in THRESHOLDS.values()
    if row.kind in ("efa_retrans_timeout", "efa_unresponsive_remote", "efa_impaired_remote"))
OLD_EFA = "update the EFA node exporter: releases before this counter was added do not export it"
EXCERPT_NOTE = "the scrape is an excerpt: GPUs it leaves out are not reported missing"
NO_DCGM = "run dcgm-exporter on every GPU node and send its scrape with the EFA exporter's"
NO_EFA = ("run the EFA node exporter (node_exporter with the amazonefa collector, see aws-samples/"
          "awsome-distributed-training 4.validation_and_observability/3.efa-node-exporter) and send its scrape too")

# EFA counter -> (fault kind, what to do when it grows).
_EFA_KINDS: dict[str, tuple[str, str]] = {
    "rdma_read_wr_err": ("efa_rdma_read_err", "RDMA read work requests failing: check the EFA device and its peers"),
    "rdma_write_wr_err": ("efa_rdma_write_err", "RDMA write work requests failing: check the EFA device and its peers"),
    "retrans_timeout_events": ("efa_retrans_timeout", "retransmit timeouts: a peer or the fabric path is dropping"),
    "unresponsive_remote_events": ("efa_unresponsive_remote", "a remote peer stopped answering: check the peer nodes"),
    "impaired_remote_conn_events": ("efa_impaired_remote", "impaired remote connections: check the peer nodes"),
    "rx_drops": ("efa_rx_drops", "received packets dropped: check for congestion or a failing device"),
}


def worse(a: str, b: str) -> str:
    """The worse of two verdicts."""
    return a if _RANK[a] >= _RANK[b] else b


@dataclass
class Fault:
    """One thing wrong with one GPU or EFA device (``gpu``/``device`` is None when it is node-wide)."""

    hostname: str
    kind: str
    severity: str
    verdict: str
    meaning: str
    action: str
    gpu: int | str | None = None
    uuid: str | None = None
    device: str | None = None
    xid: int | None = None
    value: float | None = None
    new: bool | None = None
    pod: str | None = None

    def to_dict(self) -> dict:
        """JSON-safe dict."""
        return asdict(self)

    @property
    def reason(self) -> str:
        """One line for people: where, what, and what to do."""
        where = f"GPU {self.gpu}" if self.gpu is not None else (f"EFA {self.device}" if self.device else "node")
        return f"{where}: {self.meaning} ({self.action})"


@dataclass
class NodeHealth:
    """Verdict for one node; ``expected_gpus`` is None when the instance type is unknown."""

    hostname: str
    expected_gpus: int | None
    gpus_seen: int
    missing_gpus: list[int]
    verdict: str = HEALTHY
    reasons: list[str] = field(default_factory=list)
    model: str = ""
    efa_devices_seen: int = 0
    expected_efa_devices: int | None = None
    efa_collected: bool = True  # False: the scrape has no EFA series at all, so efa_devices_seen means nothing
    busy: float | None = None  # mean utilization (0..1) of its accelerators, None when the scrape has none
    busy_readings: int = 0
    efa_bytes: float | None = None  # its EFA devices' traffic counters summed, None when none is reported

    def to_dict(self) -> dict:
        """JSON-safe dict."""
        return asdict(self)


@dataclass
class HealthSummary:
    """The whole report. ``state`` goes back into the next ``summarize`` call."""

    instance_type: str | None
    nodes: list[NodeHealth]
    faults: list[Fault]
    panels: dict[str, float]
    healthy_gpu_share: float | None
    gpus_expected: int
    gpus_seen: int
    state: dict
    collected: dict[str, bool] = field(default_factory=dict)
    missing_signals: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def utilization(self) -> dict:
        """The healthy nodes' mean utilization (0..1) and how many nodes it averages: what capacity accounting
        reads from each report (``clusters/accounting``), as busy accelerators are counted on healthy ones only."""
        measured = [node.busy for node in self.nodes if node.verdict == HEALTHY and node.busy is not None]
        traffic = [node.efa_bytes for node in self.nodes if node.efa_bytes is not None]
        return {"healthy_measured": len(measured), "busy": round(sum(measured) / len(measured), 6) if measured else None,
                # The cluster's EFA traffic counters (bytes since boot), for the stalled-training check.
                "efa_nodes": len(traffic), "efa_bytes": sum(traffic) if traffic else None}

    @property
    def verdict_counts(self) -> dict[str, int]:
        """How many nodes have each verdict (every verdict present, zero or not)."""
        counts = dict.fromkeys(VERDICTS, 0)
        for node in self.nodes:
            counts[node.verdict] += 1
        return counts

    def to_dict(self, include_state: bool = False) -> dict:
        """JSON-safe dict; the state is left out unless asked for, as it can be large."""
        data = {
            "instance_type": self.instance_type,
            "nodes": [node.to_dict() for node in self.nodes],
            "faults": [fault.to_dict() for fault in self.faults],
            "panels": dict(self.panels),
            "healthy_gpu_share": self.healthy_gpu_share,
            "gpus_expected": self.gpus_expected,
            "gpus_seen": self.gpus_seen,
            "verdict_counts": self.verdict_counts,
            "collected": dict(self.collected),
            "missing_signals": list(self.missing_signals),
            "notes": list(self.notes),
        }
        if include_state:
            data["state"] = self.state
        return data


def summarize(
    text_or_parsed: str | bytes | Scrape,
    instance_type: str | instance_types.InstanceType | None,
    previous_state: dict | None = None,
    *,
    uncorrectable_rows_replace_at: int | None = None,
    release: bool = False,
) -> HealthSummary:
    """Judge every node of one scrape.

    ``instance_type`` gives the expected GPU and EFA counts (None: unknown, nothing is
    reported missing); an unknown name raises ``UnknownInstanceType``.
    ``uncorrectable_rows_replace_at`` is a site policy: at or above that many uncorrectable
    remapped rows a GPU's node is marked for replacement (off by default; a row-remap
    failure always is). ``release`` lets each node's readings go once it is judged (the scrape is
    emptied): a 2,000-node scrape's readings are most of what the worker holds.
    """
    scrape = text_or_parsed if isinstance(text_or_parsed, Scrape) else parse(text_or_parsed)
    itype = instance_types.get(instance_type) if isinstance(instance_type, str) else instance_type
    prev = previous_state if isinstance(previous_state, dict) and previous_state.get("v") == STATE_VERSION else {}
    judge = _Judge(itype, prev, uncorrectable_rows_replace_at)
    judge.efa_collected = bool(scrape.efa)
    collected, missing = signals(scrape, itype)
    any_gpus = bool(scrape.gpus)
    nodes = []
    for host in scrape.hostnames:
        nodes.append(judge.node(host, scrape))
        if release:
            scrape.gpus.pop(host, None)
            scrape.efa.pop(host, None)
    expected = sum(n.gpus_seen + len(n.missing_gpus) for n in nodes)
    if any_gpus and not collected["xid_errors"]:
        judge.notes.append("XIDs are not collected: the healthy GPU share only covers the signals that are")
    return HealthSummary(
        instance_type=itype.name if itype else None,
        nodes=nodes,
        faults=judge.faults,
        panels=judge.panels(nodes),
        healthy_gpu_share=round((expected - judge.unhealthy_gpus) / expected, 6) if expected else None,
        gpus_expected=expected,
        gpus_seen=sum(n.gpus_seen for n in nodes),
        state=judge.state,
        collected=collected,
        missing_signals=missing,
        notes=list(scrape.notes) + [EXCERPT_NOTE if note == "excerpt" else note for note in judge.notes],
    )


def signals(scrape: Scrape, itype: instance_types.InstanceType | None) -> tuple[dict[str, bool], list[dict]]:
    """Which dashboard signals the scrape carries, and for each one it lacks, how to turn it on."""
    dcgm = bool(scrape.gpus)
    collected = {key: dcgm and any(name in scrape.families_seen for name in names) for key, names, _ in SIGNALS}
    collected["missing_gpus"] = dcgm
    collected["efa"] = bool(scrape.efa)
    for key, family in EFA_SIGNALS:
        collected[key] = collected["efa"] and family in scrape.families_seen
    missing = []
    for key, names, how in SIGNALS:
        if not collected[key]:
            missing.append({"signal": key, "metric": names[0], "how": how if dcgm else NO_DCGM})
    if not dcgm:
        missing.append({"signal": "missing_gpus", "metric": "DCGM_FI_DEV_* (any)", "how": NO_DCGM})
    if not collected["efa"] and (itype is None or itype.efa_devices):
        missing.append({"signal": "efa", "metric": "node_amazonefa_*", "how": NO_EFA})
    elif collected["efa"]:
        missing += [{"signal": key, "metric": family, "how": OLD_EFA} for key, family in EFA_SIGNALS
                    if not collected[key]]
    return collected, missing


class _Judge:
    """Accumulates faults, panel figures and the next state while nodes are judged."""

    def __init__(self, itype: instance_types.InstanceType | None, prev: dict, replace_at: int | None) -> None:
        self.itype = itype
        self.replace_at = replace_at
        self.prev_gpu: dict = prev.get("gpu", {})
        self.prev_efa: dict = prev.get("efa", {})
        self.prev_xid: dict = prev.get("xid", {})
        self.state: dict = {"v": STATE_VERSION, "gpu": {}, "efa": {}, "xid": {}}
        self.faults: list[Fault] = []
        self.unhealthy_gpus = 0
        self.sums = {"uncorrectable_remapped_rows": 0, "correctable_remapped_rows": 0}
        self.counts = {"xid_errors": 0, "row_remap_failures": 0, "thermal_violations": 0}
        self.efa_collected = True
        self.notes: list[str] = []

    def node(self, host: str, scrape: Scrape) -> NodeHealth:
        gpus = scrape.gpus.get(host, {})
        efa = scrape.efa.get(host, {})
        model = scrape.models.get(host, "")
        expected = self.itype.gpus if self.itype else None
        other = self._other_hardware(host, model, bool(gpus))
        if other:
            expected = None  # the instance type's GPU count says nothing about this node's GPUs
        if scrape.excerpt and expected:
            expected = None  # an excerpt leaves series out: absent GPUs are not missing GPUs
            if "excerpt" not in self.notes:
                self.notes.append("excerpt")
        missing = [i for i in range(expected) if i not in gpus] if (expected and gpus) else []
        node = NodeHealth(host, expected, len(gpus), missing, model=model,
                          efa_devices_seen=len(efa),
                          expected_efa_devices=self.itype.efa_devices if self.itype else None,
                          efa_collected=self.efa_collected)
        node.busy, node.busy_readings = busy_of(gpus, scrape.neuroncores.get(host))
        traffic = [r.traffic_bytes for r in efa.values() if r.traffic_bytes is not None]
        node.efa_bytes = sum(traffic) if traffic else None
        first = len(self.faults)
        if other:
            self._add(host, "gpu_model_mismatch", xids.WARNING, DEGRADED, other,
                      "check that this node belongs to the cluster and that the exporter's modelName is right")
        for index in missing:
            self._add(host, "missing_gpu", xids.CRITICAL, REBOOT, "GPU not reported by dcgm-exporter",
                      "reboot the node; replace it if the GPU stays missing", gpu=index)
        self.unhealthy_gpus += len(missing)
        if gpus:
            self._gpus(host, gpus)
        elif expected:
            node.reasons.append(message(reason_texts.NO_DCGM).as_json())
        if efa:
            self._efa(host, efa, node)
        for fault in self.faults[first:]:
            node.verdict = worse(node.verdict, fault.verdict)
            if fault.severity != xids.INFO:
                node.reasons.append(reason_texts.reason(fault).as_json())
        return node

    def _other_hardware(self, host: str, model: str, has_gpus: bool) -> str | None:
        """The sentence for a node whose GPU model is not the instance type's, or None."""
        itype = self.itype
        if not (itype and has_gpus and model):
            return None
        if itype.gpus and itype.accelerator.upper() in model.upper():
            return None
        wanted = f"{itype.name}'s {itype.accelerator}" if itype.gpus else f"{itype.name} (Trainium, no GPUs)"
        sentence = f"reports {model} GPUs, not {wanted}: GPU count not checked against {itype.name}"
        if len(self.notes) < 20:
            self.notes.append(f"{host} {sentence}")
        return sentence

    def _gpus(self, host: str, gpus: dict[int | str, GpuReading]) -> None:
        packed = self.prev_gpu.get(host)
        prev_counters = None if packed is None else baselines.unpack(packed)
        prev_xid = self.prev_xid.get(host)
        counters_state: dict = {}
        xid_state: dict = {}
        for index in sorted(gpus, key=_gpu_order):
            r = gpus[index]
            key = str(index)
            bad = False
            if exceeds("xid", r.xid):
                bad = True
                self.counts["xid_errors"] += 1
                xid_state[key] = r.xid
                info = xids.describe(r.xid)
                meaning = f"XID {r.xid}: {info.meaning if info.known or not r.xid_message else r.xid_message}"
                new = None if prev_xid is None else prev_xid.get(key) != r.xid
                self._add(host, "xid", info.severity, _verdict_for(info), meaning, info.action, r,
                          xid=r.xid, value=r.xid, new=new)
            if exceeds("ecc_dbe", r.ecc_dbe):
                bad = True
                self._add(host, "ecc_dbe", xids.CRITICAL, RESET_GPU, "double-bit ECC errors since the driver loaded",
                          "reset the GPU; replace the node if they recur", r, value=r.ecc_dbe)
            if exceeds("row_remap_failure", r.row_remap_failure):
                self.counts["row_remap_failures"] += 1
                self._add(host, "row_remap_failure", xids.CRITICAL, REPLACE, "row remapping failed",
                          "drain and replace the node", r, value=r.row_remap_failure)
            if exceeds("uncorrectable_remapped_rows", r.uncorrectable_remapped_rows):
                self.sums["uncorrectable_remapped_rows"] += r.uncorrectable_remapped_rows
                over = self.replace_at is not None and r.uncorrectable_remapped_rows >= self.replace_at
                self._add(host, "uncorrectable_remapped_rows", xids.CRITICAL if over else xids.WARNING,
                          REPLACE if over else RESET_GPU, "rows remapped after uncorrectable errors",
                          "drain and replace the node" if over else
                          "reset the GPU so the remap takes effect; replace the node if the count grows",
                          r, value=r.uncorrectable_remapped_rows)
            if r.correctable_remapped_rows:
                self.sums["correctable_remapped_rows"] += r.correctable_remapped_rows
                self._add(host, "correctable_remapped_rows", xids.INFO, HEALTHY,
                          "rows remapped after correctable errors", "monitor", r,
                          value=r.correctable_remapped_rows)
            thermal, power = r.thermal_violation or 0, r.power_violation or 0
            if thermal or power:
                counters_state[key] = [thermal, power]
            if prev_counters is not None:
                before = prev_counters.get(key)
                if not isinstance(before, list) or len(before) != 2:
                    before = (0, 0)
                grown = _growth(thermal, before[0])
                if exceeds("thermal_violation", grown):
                    self.counts["thermal_violations"] += 1
                    self._add(host, "thermal_violation", xids.WARNING, DEGRADED,
                              "GPU throttled for heat since the last report",
                              "check cooling and the GPU temperature", r, value=grown)
                grown = _growth(power, before[1])
                if exceeds("power_violation", grown):
                    self._add(host, "power_violation", xids.INFO, HEALTHY,
                              "GPU held at its power cap since the last report",
                              "none while training at full load; check the power limit otherwise", r, value=grown)
            self.unhealthy_gpus += bad
        self.state["gpu"][host] = baselines.pack(counters_state)
        if xid_state:
            self.state["xid"][host] = xid_state
        elif prev_xid is not None or prev_counters is not None:
            self.state["xid"][host] = {}

    def _efa(self, host: str, devices: dict[str, EfaReading], node: NodeHealth) -> None:
        expected = self.itype.efa_devices if self.itype else 0
        if expected and len(devices) < expected:
            self._add(host, "efa_device_missing", xids.WARNING, DEGRADED,
                      f"{len(devices)} of {expected} EFA devices reported",
                      "check `fi_info -p efa` on the node; reboot it if a device stays missing")
        packed = self.prev_efa.get(host)
        prev = None if packed is None else baselines.unpack(packed)
        state: dict = {}
        for device in sorted(devices):
            r = devices[device]
            values = [getattr(r, name) or 0 for name in EFA_FIELDS]
            if any(values):
                state[device] = values
            if prev is None:
                continue
            before = prev.get(device)
            if not isinstance(before, list) or len(before) != len(EFA_FIELDS):
                before = [0] * len(EFA_FIELDS)
            for name, now, then in zip(EFA_FIELDS, values, before, strict=True):
                grown = _growth(now, then)
                if exceeds(EFA_THRESHOLDS[name].kind, grown):
                    kind, action = _EFA_KINDS[name]
                    self._add(host, kind, xids.WARNING, DEGRADED, f"{name} grew by {grown:g} since the last report",
                              action, device=device, value=grown)
        self.state["efa"][host] = baselines.pack(state)

    def _add(self, host: str, kind: str, severity: str, verdict: str, meaning: str, action: str,
             reading: GpuReading | None = None, **extra) -> None:
        if reading is not None:
            extra.update(gpu=reading.gpu, uuid=reading.uuid, pod=reading.pod)
        self.faults.append(Fault(host, kind, severity, verdict, meaning, action, **extra))

    def panels(self, nodes: list[NodeHealth]) -> dict[str, float]:
        """The six dashboard figures."""
        return {
            "uncorrectable_remapped_rows": self.sums["uncorrectable_remapped_rows"],
            "correctable_remapped_rows": self.sums["correctable_remapped_rows"],
            "xid_errors": self.counts["xid_errors"],
            "row_remap_failures": self.counts["row_remap_failures"],
            "thermal_violations": self.counts["thermal_violations"],
            "missing_gpus": sum(len(node.missing_gpus) for node in nodes),
        }


def busy_of(gpus: dict[int | str, GpuReading], cores: dict[str, float] | None) -> tuple[float | None, int]:
    """A node's mean accelerator utilization (0..1) and the readings it averages: DCGM_FI_PROF_GR_ENGINE_ACTIVE
    where the exporter publishes it, else DCGM_FI_DEV_GPU_UTIL (percent); on Trainium, NeuronCore utilization."""
    values = []
    for r in gpus.values():
        if r.gr_engine_active is not None:
            values.append(r.gr_engine_active)
        elif r.gpu_util is not None:
            values.append(r.gpu_util / 100)
    if not values and cores:
        values = list(cores.values())
    values = [min(1.0, max(0.0, v)) for v in values if v == v]  # NaN is no reading
    return (sum(values) / len(values) if values else None), len(values)


def _gpu_order(index: int | str) -> tuple[int, int, str]:
    """Numeric GPU indices in numeric order, odd labels after them."""
    return (0, index, "") if isinstance(index, int) else (1, 0, index)


def _verdict_for(info: xids.XidInfo) -> str:
    if info.consequence == xids.NONE and info.severity == xids.INFO:
        return HEALTHY
    return _FROM_CONSEQUENCE[info.consequence]


def _growth(now: float, before: float) -> float:
    """How much a counter grew; a counter smaller than before was reset, so all of it is new."""
    if now > before:
        return now - before
    return now if now < before else 0
