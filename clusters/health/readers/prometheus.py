"""Read dcgm-exporter and EFA exporter scrapes (Prometheus text format) into per-node readings.

One pass over the metric families that ``prometheus_client``'s parser yields: a family
is routed by its name once, and each sample costs a couple of dict look-ups. That
matters because a 2,000-node scrape holds over a million samples and the parser itself
is the expensive part; this module must stay a thin layer on top of it.

Decisions worth knowing:

* Broken input is rejected, not skipped: the first unparsable line raises ``ParseError``
  carrying its 1-based line number. Skipping lines would silently hide GPUs, which the
  missing-GPU check would then report as fallen off the bus.
* Text that parses but holds neither DCGM nor EFA series is rejected too (``ParseError``),
  so a caller posting the wrong scrape gets an answer rather than an empty report.
* DCGM's blank sentinels (values at or above 9223372036854775790) and NaN are "no value".
* An XID value that is not an XID code (``-Inf``, a negative or fractional number) is no value either, with a
  note naming how many there were and the first one: one odd series must not fail a 2,000-node push, and
  an exporter that writes them is worth a look.
* Counter families reach us with ``_total`` sample names; routing uses the family name.
* Several series for one physical GPU (MIG instances, duplicated scrapes) are merged:
  the GPU keeps the largest value seen for each health field.
* What a paste adds around a scrape is removed with a note, never silently: the shell command
  line (``curl …``, ``docker run …``, ``root@host:~# curl …``), curl's progress meter and trailer
  (also when glued to the first ``# HELP``), ``kubectl port-forward`` messages, Markdown fences and
  ``...`` elisions. Anything else that is not Prometheus text is still an error.
* The input may be a string, bytes, or an iterable of lines (an open text or binary file): the
  lines are fed to the parser as they are read, so a large push is never held twice.
* Which families the scrape carries is kept (``Scrape.families_seen``): a signal the exporter
  was not configured to export must read as "not collected", not as zero.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field

from prometheus_client.metrics_core import Metric

DCGM_BLANK_THRESHOLD = 9223372036854775790
EFA_PREFIX = "node_amazonefa_"
UNKNOWN_HOST = "unknown"

# Slots of the per-GPU working list filled in the hot loop.
XID, UNC_ROWS, CORR_ROWS, REMAP_FAILURE, THERMAL, POWER, DBE, UUID, XID_MSG, POD, NAMESPACE, GR_ACTIVE, GPU_UTIL = range(13)
_GPU_SLOTS = 13

DCGM_FIELDS: dict[str, int] = {
    "DCGM_FI_DEV_XID_ERRORS": XID,
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": UNC_ROWS,
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": CORR_ROWS,
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": REMAP_FAILURE,
    "DCGM_FI_DEV_THERMAL_VIOLATION": THERMAL,
    "DCGM_FI_DEV_POWER_VIOLATION": POWER,
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": DBE,
}
# Utilization, kept per GPU for capacity accounting; the health summary does not read it.
UTILIZATION_FIELDS: dict[str, int] = {"DCGM_FI_PROF_GR_ENGINE_ACTIVE": GR_ACTIVE, "DCGM_FI_DEV_GPU_UTIL": GPU_UTIL}
NEURONCORE_UTILIZATION = "neuroncore_utilization_ratio"  # neuron-monitor-prometheus.py, per NeuronCore
# Newer exporters can also count XIDs per code over a window, with an ``xid`` label. The exporter's
# own example (NVIDIA/dcgm-exporter pull request #239) prints those samples as
# DCGM_FI_DEV_XID_ERRORS_ACTIVE under that family's HELP/TYPE lines, so both names are read.
XID_COUNT_FAMILY = "DCGM_EXP_XID_ERRORS_COUNT"
XID_COUNT_FAMILIES = frozenset({XID_COUNT_FAMILY, "DCGM_FI_DEV_XID_ERRORS_ACTIVE"})

EFA_FIELDS: tuple[str, ...] = (
    "rdma_read_wr_err",
    "rdma_write_wr_err",
    "retrans_timeout_events",
    "unresponsive_remote_events",
    "impaired_remote_conn_events",
    "rx_drops",
)
# Traffic counters, summed into one more slot of a device's record (EfaReading.traffic_bytes): a training run's
# collectives move bytes all the time, so counters that stop moving while the GPUs idle say the run stalled.
EFA_TRAFFIC_FIELDS: tuple[str, ...] = ("rdma_read_bytes", "rdma_write_bytes", "tx_bytes", "rx_bytes")
EFA_TRAFFIC_SLOT = len(EFA_FIELDS)
EFA_RECORD_LENGTH = len(EFA_FIELDS) + 1
_EFA_SLOT: dict[str, int] = {**{EFA_PREFIX + name: slot for slot, name in enumerate(EFA_FIELDS)},
                             **dict.fromkeys((EFA_PREFIX + name for name in EFA_TRAFFIC_FIELDS), EFA_TRAFFIC_SLOT)}
# Every family whose values the reader keeps (the routing tables above, as ``reader._route`` takes them): what the
# software stack's dcgm-exporter counters file must carry (tests/clusters/test_dcgm_counters.py).
READ_FAMILIES: frozenset[str] = frozenset(
    {*DCGM_FIELDS, *UTILIZATION_FIELDS, *XID_COUNT_FAMILIES, *_EFA_SLOT, NEURONCORE_UTILIZATION})

_PARSE_ERRORS = (ValueError, IndexError, TypeError, KeyError)


def odd_xid(value: float) -> bool:
    """An XID value (past the blank check) that is not an XID code: -Inf, negative, fractional."""
    return not (value >= 0 and value % 1 == 0)


def odd_xid_note(count: int, host: str, gpu: str, value: float) -> str:
    """The note for the XID values ``odd_xid`` set aside (the same words from both readers)."""
    return (f"{count} DCGM_FI_DEV_XID_ERRORS value{'s' if count != 1 else ''} that {'are' if count != 1 else 'is'} "
            f"not an XID code (a whole number) {'were' if count != 1 else 'was'} ignored; the first: {value:g} "
            f"for {host} GPU {gpu}")


class ParseError(ValueError):
    """The text is not a Prometheus exposition we can read; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message)


@dataclass(slots=True)
class GpuReading:
    """Health fields of one physical GPU; ``None`` means the exporter did not report the field."""

    hostname: str
    gpu: int | str
    uuid: str | None = None
    xid: int | None = None
    xid_message: str | None = None
    uncorrectable_remapped_rows: float | None = None
    correctable_remapped_rows: float | None = None
    row_remap_failure: float | None = None
    thermal_violation: float | None = None
    power_violation: float | None = None
    ecc_dbe: float | None = None
    pod: str | None = None
    namespace: str | None = None
    gr_engine_active: float | None = None  # DCGM_FI_PROF_GR_ENGINE_ACTIVE (0..1)
    gpu_util: float | None = None  # DCGM_FI_DEV_GPU_UTIL (percent)

    def to_dict(self) -> dict:
        """JSON-safe dict."""
        return asdict(self)


@dataclass(slots=True)
class EfaReading:
    """Error and traffic counters of one EFA device (summed over its ports); ``None`` means not reported."""

    hostname: str
    device: str
    rdma_read_wr_err: float | None = None
    rdma_write_wr_err: float | None = None
    retrans_timeout_events: float | None = None
    unresponsive_remote_events: float | None = None
    impaired_remote_conn_events: float | None = None
    rx_drops: float | None = None
    traffic_bytes: float | None = None  # RDMA read and write, transmit and receive bytes (EFA_TRAFFIC_FIELDS)

    def to_dict(self) -> dict:
        """JSON-safe dict."""
        return asdict(self)


@dataclass
class Scrape:
    """Everything one scrape says about GPUs and EFA devices, keyed by host then GPU/device."""

    gpus: dict[str, dict[int | str, GpuReading]] = field(default_factory=dict)
    efa: dict[str, dict[str, EfaReading]] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    families: int = 0
    samples: int = 0
    families_seen: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    excerpt: bool = False  # '...' lines were removed: series may be left out
    neuroncores: dict[str, dict[str, float]] = field(default_factory=dict)  # host -> NeuronCore -> utilization

    @property
    def hostnames(self) -> list[str]:
        """Every host seen in either exporter, sorted."""
        return sorted(set(self.gpus) | set(self.efa))

    def to_dict(self) -> dict:
        """JSON-safe dict (GPU indices become strings, as JSON object keys must)."""
        return {
            "gpus": {h: {str(g): r.to_dict() for g, r in node.items()} for h, node in self.gpus.items()},
            "efa": {h: {d: r.to_dict() for d, r in node.items()} for h, node in self.efa.items()},
            "models": dict(self.models),
            "families": self.families,
            "samples": self.samples,
            "families_seen": sorted(self.families_seen),
            "notes": list(self.notes),
            "neuroncores": {h: dict(cores) for h, cores in self.neuroncores.items()},
        }


def host_of(labels: dict[str, str]) -> str:
    """The node a series belongs to: ``Hostname``, ``hostname``, the host part of ``instance``, or "unknown"."""
    host = labels.get("Hostname") or labels.get("hostname")
    if host:
        return host
    instance = labels.get("instance")
    if not instance:
        return UNKNOWN_HOST
    if instance.startswith("["):  # [IPv6]:port
        return instance[1:instance.find("]")] or UNKNOWN_HOST
    return instance.rsplit(":", 1)[0] if instance.count(":") == 1 else instance



# What a paste adds around a scrape. Each kind is removed with a note; nothing else is.
# Shell prompts a command line can be pasted with: bash's ``user@host:path$``/``#``, RHEL's
# ``[user@host dir]$``/``#``, zsh's ``host%``, oh-my-zsh's ``➜  dir``, a bare ``$ `` or ``# ``, PS2's ``> ``,
# each optionally after a virtualenv/conda ``(env)``.
_PROMPT = (r"(?:\([\w.-]+\)\s*)*"
           r"(?:\[[^\]\s]+@[^\]]+\]\s?[#$%]\s*|\S+@\S+[#$%]\s*|[\w.-]+%\s+"
           r"|➜\s+\S+(?:\s+git:\([^)]*\))?(?:\s+✗)?\s+|[$#>]\s+)?")
_COMMAND = re.compile("^" + _PROMPT + r"(?:sudo\s+)?(?:curl|wget|kubectl|docker|podman|ssh|http)\b")
_PROGRESS = re.compile(r"^\s*\d{1,3}\s+[\d.]+[kMGT]?\s+\d{1,3}\s+[\d.]+[kMGT]?\s+\d+\s+\d+\s+[\d.]+[kMGT]?"
                       r"\s+[\d.]+[kMGT]?(?:\s+(?:--:--:--|\d+:\d+:\d+)){0,3}\s*(?:[\d.]+[kMGT]?)?\s*(?=#|$)")
_PROGRESS_HEAD = ("% Total", "Dload  Upload")
_PORT_FORWARD = re.compile(r"^(?:Handling connection for \d+|Forwarding from \S+ -> \d+)")
_ELISIONS = {"...", "…", "[...]"}
# A sentence of Markdown prose (or a list item) around the code blocks a scrape was pasted in: a word, then
# another word, and no braces or equals sign; never a metric name with a number (or NaN, Inf) after it, and never
# a broken sample line, which stays an error with its number.
_PROSE = re.compile(r"^(?:[-*+]\s+|\d+[.)]\s+)?[A-Za-z][a-z'’]*[,:;.!?]?\s+(?![Nn]a[Nn]\b|[Ii]nf\b)[A-Za-z(\"'`][^{}=]*$")


class PastedLines:
    """The lines of a scrape as the parser reads them, without what pasting added around them.

    Counts lines so that a parse error can name its line; ``notes`` says what was removed.
    """

    def __init__(self, source: Iterable) -> None:
        self.source = source
        self.number = 0
        self.nonblank = 0
        self.kept = 0
        self.last = ""
        self.elided = False
        self._continued = False
        self._fence_open = False  # inside a Markdown code block
        self._fenced = False  # a code block has been seen: text outside the blocks is prose
        self._seen: dict[str, int] = {}

    @property
    def notes(self) -> list[str]:
        return [f"{what} (line {line})" for what, line in self._seen.items()]

    def _note(self, what: str) -> None:
        self._seen.setdefault(what, self.number)

    def __iter__(self) -> Iterator[str]:
        for raw in self.source:
            self.number += 1
            if isinstance(raw, (bytes, bytearray)):
                try:
                    raw = bytes(raw).decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ParseError(f"input is not UTF-8 text (byte {exc.start})", self.number) from None
            if "\x00" in raw:
                self.nonblank += 1
                raise ParseError("input is binary (contains NUL bytes)", self.number)
            self.last = raw
            if raw.startswith(("DCGM_", "node_", "# HELP", "# TYPE")):  # the common case, kept fast
                self.nonblank += 1
                self.kept += 1
                yield raw
                continue
            line = raw.strip()
            if not line:
                yield raw
                continue
            self.nonblank += 1
            kept = self._clean(line)
            if kept is not None:
                self.kept += 1
                yield kept

    def _clean(self, line: str) -> str | None:
        continued, self._continued = self._continued, False
        if continued or _COMMAND.match(line):  # a command, and the lines its trailing backslash continues
            self._continued = line.endswith("\\")
            if not continued:
                self._note(f"a pasted command line was removed: {line[:80]!r}")
            return None
        if line.startswith(_PROGRESS_HEAD):
            self._note("curl's progress meter was removed")
            return None
        match = _PROGRESS.match(line)
        if match:
            rest = line[match.end():]
            self._note("curl's progress meter was removed" if rest else "curl's progress trailer was removed")
            return rest or None
        if _PORT_FORWARD.match(line):
            self._note("kubectl port-forward messages were removed")
            return None
        if line in _ELISIONS:
            self.elided = True
            self._note("the scrape is an excerpt ('...' lines were removed)")
            return None
        if line.startswith("```") or line.startswith("~~~"):
            self._note("Markdown code fences were removed")
            self._fence_open, self._fenced = not self._fence_open, True
            return None
        if (self._fenced and not self._fence_open) or (not self._fence_open and _PROSE.match(line)):
            self._note("Markdown text around the code blocks was removed")
            return None
        return line


def parse_families(families: Iterable[Metric]) -> Scrape:
    """Fold already-parsed metric families into a ``Scrape`` (one pass; see the module docstring): the
    pulled series, and the oracle the tests hold ``reader.read`` to."""
    scrape = Scrape()
    odd: list = [0, None]  # XID values that are not codes: how many, the first (host, gpu, value)
    gpus: dict[str, dict[str, list]] = {}
    efa: dict[str, dict[str, list]] = {}
    neuron: dict[str, dict[str, float]] = {}
    for family in families:
        scrape.families += 1
        samples = family.samples
        scrape.samples += len(samples)
        name = family.name.removesuffix("_total")
        if name.startswith("DCGM_"):
            if samples:
                scrape.families_seen.add(name)
            slot = DCGM_FIELDS.get(name)
            if slot is None:
                slot = UTILIZATION_FIELDS.get(name, -2 if name in XID_COUNT_FAMILIES else -1)
            _read_dcgm(samples, slot, gpus, scrape, odd)
        elif name.startswith(EFA_PREFIX):
            if samples:
                scrape.families_seen.add(name)
            _read_efa(samples, _EFA_SLOT.get(name, -1), efa)
        elif name == NEURONCORE_UTILIZATION:
            _read_neuron(samples, neuron)
        # Let this family go before the parser builds the next one: a 2,000-node EFA family is 64,000
        # samples, and the loop variable would otherwise hold it until the next family is complete.
        del family, samples
    scrape.neuroncores = neuron
    if odd[0]:
        scrape.notes.append(odd_xid_note(odd[0], *odd[1]))
    if not gpus and not efa:
        raise ParseError("no dcgm-exporter (DCGM_FI_*) or EFA exporter (node_amazonefa_*) series found")
    scrape.gpus = {host: {_gpu_key(g): _gpu_reading(host, g, rec) for g, rec in node.items()}
                   for host, node in gpus.items()}
    scrape.efa = {host: {dev: EfaReading(host, dev, *rec) for dev, rec in node.items()}
                  for host, node in efa.items()}
    return scrape


def _read_dcgm(samples: list, slot: int, gpus: dict, scrape: Scrape, odd: list) -> None:
    """Fold one DCGM family into ``gpus``; slot -1 only records which GPUs exist, -2 is the XID count family."""
    blank = DCGM_BLANK_THRESHOLD
    for sample in samples:
        labels = sample[1]
        gpu = labels.get("gpu")
        if gpu is None:
            continue
        host = labels.get("Hostname") or labels.get("hostname") or host_of(labels)
        node = gpus.get(host)
        if node is None:
            node = gpus[host] = {}
            scrape.models[host] = labels.get("modelName", "")
        rec = node.get(gpu)
        if rec is None:
            rec = node[gpu] = [None] * _GPU_SLOTS
        if slot == -1:
            continue
        value = sample[2]
        if not value < blank:  # DCGM's "no value" sentinels, and NaN
            continue
        if slot == XID and value and odd_xid(value):
            odd[0] += 1
            odd[1] = odd[1] or (host, gpu, value)
            continue
        if rec[UUID] is None:
            rec[UUID] = labels.get("UUID")
        if slot == -2:
            code = labels.get("xid")
            if value > 0 and code and code.isdigit() and not rec[XID]:
                rec[XID] = int(code)
            continue
        old = rec[slot]
        if old is None or value > old:
            rec[slot] = value
        if slot == XID and value:
            rec[XID_MSG] = labels.get("err_msg")
            rec[POD] = labels.get("pod")
            rec[NAMESPACE] = labels.get("namespace")


def _read_efa(samples: list, slot: int, efa: dict) -> None:
    """Fold one EFA family into ``efa``; slot -1 only records which devices exist."""
    hosts: dict[str, str] = {}
    for sample in samples:
        labels = sample[1]
        device = labels.get("device")
        if device is None:
            continue
        host = labels.get("hostname") or labels.get("Hostname")
        if not host:
            instance = labels.get("instance", "")
            host = hosts.get(instance)
            if host is None:
                host = hosts[instance] = host_of(labels)
        node = efa.get(host)
        if node is None:
            node = efa[host] = {}
        rec = node.get(device)
        if rec is None:
            rec = node[device] = [None] * EFA_RECORD_LENGTH
        if slot == -1:
            continue
        value = sample[2]
        if not value >= 0:  # NaN or nonsense: not a count
            continue
        old = rec[slot]
        rec[slot] = value if old is None else old + value


def _read_neuron(samples: list, neuron: dict) -> None:
    """NeuronCore utilization per host and core (the largest value of a core's series)."""
    for sample in samples:
        neuron_sample(sample[1], sample[2], neuron)


def neuron_sample(labels: dict[str, str], value: float, neuron: dict) -> None:
    """Fold one NeuronCore utilization sample (neuron-monitor names the instance, not a host label)."""
    core = labels.get("neuroncore")
    if core is None or not value >= 0:
        return
    host = host_of(labels)
    if host == UNKNOWN_HOST:
        host = labels.get("instance_name") or labels.get("instance_id") or host
    cores = neuron.setdefault(host, {})
    cores[core] = max(cores.get(core, value), value)


def _gpu_key(gpu: str) -> int | str:
    return int(gpu) if gpu.isdigit() else gpu


def _gpu_reading(host: str, gpu: str, rec: list) -> GpuReading:
    xid = rec[XID]
    return GpuReading(
        hostname=host, gpu=_gpu_key(gpu), uuid=rec[UUID], xid=None if xid is None else int(xid),
        xid_message=rec[XID_MSG], uncorrectable_remapped_rows=rec[UNC_ROWS],
        correctable_remapped_rows=rec[CORR_ROWS], row_remap_failure=rec[REMAP_FAILURE],
        thermal_violation=rec[THERMAL], power_violation=rec[POWER], ecc_dbe=rec[DBE],
        pod=rec[POD], namespace=rec[NAMESPACE], gr_engine_active=rec[GR_ACTIVE], gpu_util=rec[GPU_UTIL],
    )


def _as_text(text: str | bytes) -> str:
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"input is not UTF-8 text (byte {exc.start})") from None
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    if not text or text.isspace():  # isspace stops at the first printable character: no copy of a large scrape
        raise ParseError("input is empty")
    if "\x00" in text:
        raise ParseError("input is binary (contains NUL bytes)", text.count("\n", 0, text.index("\x00")) + 1)
    return text


def _error_at(lines: PastedLines, exc: Exception) -> ParseError:
    """The parser stops on the line it cannot read: the line counter points at it."""
    line = lines.last.strip()
    shown = line if len(line) <= 120 else line[:117] + "..."
    return ParseError(f"not Prometheus text format ({exc or 'invalid line'}): {shown!r}", lines.number or None)
