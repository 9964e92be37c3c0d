"""Read the text nccl-tests prints (all_reduce_perf and friends) into figures a person can act on.

Users paste or upload whatever their launcher captured: lines prefixed by ``srun --label``
(``0: ``) or ``mpirun --tag-output`` (``[1,0]<stdout>:``), with NCCL's own log lines
interleaved when ``NCCL_DEBUG=INFO``. The format itself is the one ``src/common.cu`` in
NVIDIA/nccl-tests prints: ``#`` header lines, one ``#  Rank`` line per GPU, a table of
``size count type redop root`` followed by out-of-place and in-place ``time algbw busbw
#wrong`` (older builds omit ``root``, and old alltoall builds omit ``redop``: the last
eight columns are always the two result blocks), then the ``# Out of bounds values`` and
``# Avg bus bandwidth`` footer.

Decisions:

* Several runs in one file (logs appended): the last run that printed result rows is used
  and a note says so. Headers printed by *different* launcher tasks mean nccl-tests was
  built without MPI and every task ran its own test: that is rejected with that diagnosis.
* No result rows at all (empty, binary, cut off before the first size) is an error
  (``NcclParseError``); rows without the footer are accepted with ``complete: false``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field

from clusters.health import expectations

COLLECTIVES: tuple[str, ...] = (
    "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv",
)
_ALIASES = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
            "all_to_all": "alltoall", "alltoall": "alltoall", "send_recv": "sendrecv"}
GIB = 1 << 30

_PREFIX = re.compile(r"^(?:\s*(\d+): ?|\[(\d+),(\d+)\]<std(?:out|err)>: ?)")
_HEADER = re.compile(r"#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)"
                     r"(?:\s+step:\s*(\d+)\((\w+)\))?")
_RANK = re.compile(r"#\s+Rank\s+(\d+)\s+Group\s+(\d+)\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+"
                   r"\[([^\]]*)\]\s+(.+)")
_OOB = re.compile(r"#\s*Out of bounds values\s*:\s*(\d+)\s*(\w+)?")
_AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*([-+.\deE]+|nan|inf)", re.IGNORECASE)
_STARTING = re.compile(r"#\s*Collective test (?:starting|concluded):\s*(\w+)")
_OPENING = re.compile(r"#\s*(?:Collective test (starting)|nccl-tests (version))\s*:?\s*(\w[\w.]*)")
_BINARY = re.compile(r"\b(" + "|".join(COLLECTIVES) + r")_perf\b")
_NCCL_VERSION = re.compile(r"NCCL version (\S+)")
_OFI_VERSION = re.compile(r"aws-ofi-nccl\s+v?(\d[\w.+-]*)")
_PROVIDER = re.compile(r"Selected provider is (\w+)", re.IGNORECASE)
_NETWORK = re.compile(r"Using network (.+?)\s*$")


class NcclParseError(ValueError):
    """The text holds no usable nccl-tests result; the message says why."""


@dataclass
class NcclRow:
    """One message size: out-of-place then in-place figures; ``*_wrong`` is None for ``N/A``."""

    size: int
    count: int
    type: str | None
    redop: str | None
    root: int | None
    oop_time_us: float
    oop_algbw: float
    oop_busbw: float
    oop_wrong: int | None
    ip_time_us: float
    ip_algbw: float
    ip_busbw: float
    ip_wrong: int | None

    @property
    def busbw(self) -> float:
        """The better of the two placements, which is what people quote."""
        return max(self.oop_busbw, self.ip_busbw)


@dataclass
class NcclResult:
    """A parsed run plus the verdict against the expected bandwidth."""

    collective: str
    rows: list[NcclRow]
    ranks: int | None = None
    nodes: int | None = None
    hosts: list[str] = field(default_factory=list)
    gpus_per_node: int | None = None
    gpu_model: str | None = None
    n_threads: int | None = None
    n_gpus: int | None = None
    min_bytes: int | None = None
    max_bytes: int | None = None
    step: str | None = None
    peak_busbw: float = 0.0
    avg_busbw: float = 0.0
    large_message_busbw: float | None = None  # busbw of the smallest message >= 1 GiB
    out_of_bounds: int | None = None
    out_of_bounds_ok: bool | None = None
    wrong_total: int = 0
    complete: bool = False
    transport: str | None = None
    nccl_version: str | None = None
    ofi_version: str | None = None
    nccl_tests_version: str | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    instance_type: str | None = None
    verdict: str | None = None
    diagnosis: str = ""
    expected_busbw: float | None = None

    def to_dict(self) -> dict:
        """JSON-safe dict; ``rows`` is a list of dicts."""
        return asdict(self)


@dataclass
class _Run:
    label: str | None
    header: re.Match | None = None
    collective: str | None = None
    tests_version: str | None = None
    ranks: list[tuple[int, str, str]] = field(default_factory=list)
    rows: list[NcclRow] = field(default_factory=list)
    oob: re.Match | None = None
    avg: float | None = None
    provider: str | None = None
    network: str | None = None
    socket_seen: bool = False
    nccl_version: str | None = None
    ofi_version: str | None = None
    warnings: list[str] = field(default_factory=list)


def normalize_collective(name: str) -> str:
    """``all_reduce_perf``, ``allreduce`` and ``all_reduce`` all name the same test; anything else is an error."""
    key = name.strip().lower().removesuffix("_perf")
    key = _ALIASES.get(key, key)
    if key not in COLLECTIVES:
        raise NcclParseError(f"unknown collective {name!r}: expected one of {', '.join(COLLECTIVES)}")
    return key


def parse(
    text: str | bytes,
    collective: str | None = None,
    instance_type: str | None = None,
    nodes: int | None = None,
) -> NcclResult:
    """Parse nccl-tests output and judge it.

    ``collective`` overrides what the text says; ``nodes`` is used when the output has
    no ``# Rank`` lines to count hosts from. An unknown ``instance_type`` still gives a
    verdict, from transport and data errors only.
    """
    text = _as_text(text)
    wanted = normalize_collective(collective) if collective else None
    runs, binaries, failures = _scan(text)
    with_rows = [run for run in runs if run.rows]
    if not with_rows:
        if any(run.header for run in runs):
            detail = _failure_detail(failures, [w for run in runs for w in run.warnings])
            raise NcclParseError("nccl-tests output is truncated: the header is there but no result row "
                                 f"(the run stopped before the first message size finished){detail}")
        raise NcclParseError("no nccl-tests output found: no '# nThread' header and no result rows")
    headed = [run for run in runs if run.header]
    labels = {run.label for run in headed}
    if len(headed) > 1 and len(labels) > 1 and None not in labels:
        raise NcclParseError(
            f"{len(headed)} separate nccl-tests runs were printed by different tasks ({', '.join(sorted(map(str, labels)))}): "
            "nccl-tests was built without MPI (build with MPI=1), so every task ran its own test")
    run = with_rows[-1]
    _inherit_log(run, runs)
    name = wanted or run.collective or (binaries[-1] if binaries else None)
    if name is None:
        raise NcclParseError("cannot tell which collective ran (no '*_perf' command or 'Collective test' line): "
                             f"pass the collective, one of {', '.join(COLLECTIVES)}")
    result = _result(normalize_collective(name), run, nodes)
    if len(runs) > 1:
        result.notes.append(f"the input holds {len(runs)} runs; the last one with results was used")
    result.instance_type = instance_type
    judged = expectations.verdict(result, instance_type, result.nodes)
    result.verdict, result.diagnosis, result.expected_busbw = judged.verdict, judged.diagnosis, judged.expected_busbw
    result.notes.extend(judged.notes)
    return result


def _as_text(text: str | bytes) -> str:
    if isinstance(text, (bytes, bytearray)):
        if b"\x00" in text:
            raise NcclParseError("input is binary (contains NUL bytes), not nccl-tests output")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise NcclParseError("input is not UTF-8 text, not nccl-tests output") from None
    if not isinstance(text, str) or not text.strip():
        raise NcclParseError("input is empty")
    if "\x00" in text:
        raise NcclParseError("input is binary (contains NUL bytes), not nccl-tests output")
    return text


def _strip_prefix(line: str) -> tuple[str | None, str]:
    label = None
    for _ in range(2):
        match = _PREFIX.match(line)
        if not match:
            break
        label = label or (match.group(1) if match.group(1) is not None else f"{match.group(2)},{match.group(3)}")
        line = line[match.end():]
    return label, line.strip()


def _scan(text: str) -> tuple[list[_Run], list[str], list[str]]:
    """Split the text into runs (one per ``# nThread`` header) and collect log facts per run."""
    runs: list[_Run] = []
    preamble = _Run(label=None)
    binaries: list[str] = []
    failures: list[str] = []
    pending: dict[str, str] = {}
    for raw in text.splitlines():
        label, line = _strip_prefix(raw)
        if not line:
            continue
        current = runs[-1] if runs else preamble
        if "NCCL INFO" in line or "NCCL WARN" in line:
            _log_line(current, line)
        elif line.startswith("#"):
            header = _HEADER.match(line)
            opening = _OPENING.match(line)
            if opening:  # printed just before the header of the run it names
                pending[opening.group(1) or opening.group(2)] = opening.group(3)
                continue
            if header:
                run = _Run(label=label, header=header, collective=pending.pop("starting", None),
                           tests_version=pending.pop("version", None))
                if not runs:
                    if preamble.rows:  # a table whose header was cut off: a run of its own
                        runs.append(preamble)
                    else:
                        _merge_log(run, preamble)
                runs.append(run)
            else:
                _comment_line(current, line)
        else:
            row = _row(line.split())
            if row is not None:
                current.rows.append(row)
                continue
            found = _BINARY.search(line)
            if found:
                binaries.append(found.group(1))
            if "failure" in line.lower() or "error" in line.lower():
                failures.append(line[:200])
    if not runs and preamble.rows:
        preamble.collective = preamble.collective or pending.get("starting")
        runs.append(preamble)
    return runs, binaries, failures


def _failure_detail(failures: list[str], warnings: list[str]) -> str:
    """The most telling error lines of a failed run: nccl-tests' own failure line first, then NCCL's warning."""
    tests = [line for line in failures if "Test " in line and "failure" in line]
    picked = (tests or failures)[:1] + warnings[:1]
    return "".join(f"; {line}" for line in picked)


def _log_line(run: _Run, line: str) -> None:
    if "NCCL WARN" in line:
        if len(run.warnings) < 20:
            run.warnings.append(line[line.index("NCCL WARN"):][:300])
        return
    if run.nccl_version is None and "NCCL version" in line:
        match = _NCCL_VERSION.search(line)
        run.nccl_version = match.group(1) if match else None
    if "NET/OFI" in line:
        match = _OFI_VERSION.search(line)
        if match and run.ofi_version is None:
            run.ofi_version = match.group(1)
        match = _PROVIDER.search(line)
        if match and run.provider is None:
            run.provider = match.group(1).lower()
    if "Using network" in line:
        match = _NETWORK.search(line)
        if match:
            run.network = match.group(1)
    if "NET/Socket" in line:
        run.socket_seen = True


def _comment_line(run: _Run, line: str) -> None:
    match = _RANK.match(line)
    if match:
        run.ranks.append((int(match.group(1)), match.group(4), match.group(7).strip()))
        return
    for pattern, setter in (
        (_OOB, lambda m: setattr(run, "oob", m)),
        (_AVG, lambda m: setattr(run, "avg", float(m.group(1)))),
        (_STARTING, lambda m: setattr(run, "collective", run.collective or m.group(1))),
    ):
        match = pattern.match(line)
        if match:
            setter(match)
            return


def _merge_log(run: _Run, other: _Run) -> None:
    """Give ``run`` the log facts seen in ``other`` that it lacks (NCCL logs before the header)."""
    for name in ("provider", "network", "nccl_version", "ofi_version", "collective", "tests_version"):
        if getattr(run, name) is None:
            setattr(run, name, getattr(other, name))
    run.socket_seen = run.socket_seen or other.socket_seen
    run.warnings = other.warnings + run.warnings


def _inherit_log(run: _Run, runs: list[_Run]) -> None:
    """NCCL log lines can trail the table; those after the chosen run's header belong to it already."""
    if run.provider is None and run.network is None and not run.socket_seen:
        for other in runs:
            if other is not run and (other.provider or other.network):
                _merge_log(run, other)
                break


def _number(token: str) -> float:
    return float(token.rstrip("*"))


def _wrong(token: str) -> int | None:
    if token.upper() == "N/A":
        return None
    return int(_number(token))


def _row(tokens: list[str]) -> NcclRow | None:
    """A table row, or None for any other line; the last eight tokens are the two result blocks."""
    n = len(tokens)
    if n < 10 or n > 13 or not tokens[0].isdigit() or not tokens[1].isdigit():
        return None
    lead, oop, ip = tokens[:n - 8], tokens[n - 8:n - 4], tokens[n - 4:]
    try:
        root = int(lead[4]) if len(lead) > 4 else None
        return NcclRow(
            size=int(lead[0]), count=int(lead[1]), type=lead[2] if len(lead) > 2 else None,
            redop=lead[3] if len(lead) > 3 else None, root=root,
            oop_time_us=_number(oop[0]), oop_algbw=_number(oop[1]), oop_busbw=_number(oop[2]), oop_wrong=_wrong(oop[3]),
            ip_time_us=_number(ip[0]), ip_algbw=_number(ip[1]), ip_busbw=_number(ip[2]), ip_wrong=_wrong(ip[3]),
        )
    except ValueError:
        return None


def _transport(run: _Run) -> str | None:
    network = (run.network or "").lower()
    if "libfabric" in network or run.provider:
        provider = run.provider or "efa"
        return "efa" if provider == "efa" else f"ofi-{provider}"
    if "socket" in network:
        return "socket"
    if network.startswith("ib"):
        return "ib"
    if run.socket_seen:
        return "socket"
    return None


def _result(collective: str, run: _Run, nodes: int | None) -> NcclResult:
    rows = run.rows
    hosts = list(dict.fromkeys(host for _, host, _ in run.ranks))
    header = run.header
    n_threads = int(header.group(1)) if header else None
    n_gpus = int(header.group(2)) if header else None
    ranks = len(run.ranks) or None
    if ranks is None and header and nodes in (None, 1):
        ranks = n_threads * n_gpus
    node_count = len(hosts) or nodes
    result = NcclResult(
        collective=collective, rows=rows, ranks=ranks, nodes=node_count, hosts=hosts,
        gpus_per_node=ranks // node_count if ranks and node_count else None,
        gpu_model=Counter(model for _, _, model in run.ranks).most_common(1)[0][0] if run.ranks else None,
        n_threads=n_threads, n_gpus=n_gpus,
        min_bytes=int(header.group(3)) if header else None, max_bytes=int(header.group(4)) if header else None,
        step=f"{header.group(5)}({header.group(6)})" if header and header.group(5) else None,
        peak_busbw=max(row.busbw for row in rows),
        transport=_transport(run), nccl_version=run.nccl_version, ofi_version=run.ofi_version,
        nccl_tests_version=run.tests_version, warnings=run.warnings, complete=run.avg is not None,
    )
    every = [row.oop_busbw for row in rows] + [row.ip_busbw for row in rows]
    result.avg_busbw = run.avg if run.avg is not None else round(sum(every) / len(every), 3)
    large = [row for row in rows if row.size >= GIB]
    result.large_message_busbw = min(large, key=lambda row: row.size).busbw if large else None
    result.wrong_total = sum((row.oop_wrong or 0) + (row.ip_wrong or 0) for row in rows)
    if run.oob:
        result.out_of_bounds = int(run.oob.group(1))
        result.out_of_bounds_ok = (run.oob.group(2) or "").upper() == "OK"
    if nodes and hosts and nodes != len(hosts):
        result.notes.append(f"{nodes} nodes were given but the output lists {len(hosts)} hosts; the output was used")
    if not result.complete:
        result.notes.append(f"the output ends after {len(rows)} rows without the footer: the run was cut off, "
                            "figures cover the sizes that finished")
    return result
