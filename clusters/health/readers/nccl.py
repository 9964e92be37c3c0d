"""Read the text nccl-tests prints (all_reduce_perf and friends) into figures a person can act on.

People paste what their launcher captured, so lines can carry a launcher prefix: ``srun -l``
(``0: ``), ``mpirun --tag-output`` (``[1,0]<stdout>:``), pdsh/clush/DeepSpeed (``10.3.35.83: ``,
``node001: ``), Ray/SkyPilot (``(head, rank=0, pid=3808) ``), torchrun (``[default0]:``),
``kubectl logs --prefix`` (``[pod/name/container] ``) or a Markdown quote (``> ``), with
NCCL's own log interleaved when ``NCCL_DEBUG=INFO``. Every nccl-tests release since 2017 is read:

* the ``# nThread … nGpus … minBytes … maxBytes`` header (with or without ``agg iters``,
  ``graph``, ``unalign``), ``# nccl-tests version`` and ``# Collective test starting`` lines;
* rank lines with or without ``Group`` (``#   Rank  0 Pid …`` before 2.x);
* the column header, which says which columns the rows have: ``redop`` and ``root`` appear
  only in some releases and collectives, ``error`` (a maximum deviation) preceded ``#wrong``,
  ``-I 1`` adds ``i_min i_max i_p99 i_cv%`` after each block and ``-S 1`` a timestamp
  (``src/util.cu``, ``writeResultHeader``/``writePerIterReport``/``writeTimestamp``);
* ``NCCL version 2.x.y+cudaZ`` printed on a line of its own as well as inside ``NCCL INFO``.

Decisions:

* Several runs in one file are several runs: a run starts at a ``# nThread`` header, or at a
  column header when the current run already has rows (pasted tables without their header).
  Every run is read and judged; the last run with rows is the primary one whose figures fill
  the top-level fields (what the portal stores), and ``runs`` holds them all.
* The collective comes from the caller, else the log (``Collective test starting``), else the
  ``*_perf`` command line before the run (``NAME_SUFFIX`` builds such as ``all_reduce_perf_mpi``
  included), else the data: ``root`` ≥ 0 means broadcast/reduce, ``count`` × element size equal
  to ``size``/ranks means a gathering collective, and busbw/algbw is 2(n−1)/n for all_reduce,
  (n−1)/n for all_gather/reduce_scatter/alltoall and 1 for broadcast/reduce/sendrecv. An
  inferred collective is flagged (``collective_source = "inferred"``) with the evidence.
* Elided rows (``...``) make an excerpt, not a failure; headers printed by different launcher
  tasks mean nccl-tests was built without MPI, which is refused with that diagnosis.
* No result rows at all (empty, binary, cut before the first size) is ``NcclParseError``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from statistics import median

from clusters.health.readers import expectations, nccl_facts
from clusters.health.readers.nccl_rows import ELEMENT_BYTES, NcclResult, NcclRow, columns_of, row_of
from portal.core import instance_types

COLLECTIVES: tuple[str, ...] = (
    "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv",
)
_ALIASES = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
            "all_to_all": "alltoall", "alltoall": "alltoall", "send_recv": "sendrecv"}
GIB = 1 << 30

_PREFIXES = (
    re.compile(r"^\s*\[(\d+),(\d+)\]<std(?:out|err)>:\s?"),                     # mpirun --tag-output
    re.compile(r"^\s*\(([\w.-]+), rank=(\d+), pid=\d+(?:, ip=[\d.]+)?\)\s"),    # Ray / SkyPilot
    re.compile(r"^\s*\[(default\d+)\]:"),                                        # torchrun --tee / log prefixes
    re.compile(r"^\s*\[(pod/[^\]]+)\]\s"),                                       # kubectl logs --prefix
    re.compile(r"^\s*(\d+):\s?"),                                                 # srun -l
    re.compile(r"^\s*>\s?"),                                                      # Markdown quote
)
# pdsh/clush/DeepSpeed put "host: " first; only taken when what follows is nccl-tests output.
_HOST_PREFIX = re.compile(r"^\s*([A-Za-z0-9][\w.-]*):\s+(?=#|\d|.*NCCL (?:INFO|WARN)|NCCL version)")
_HEADER = re.compile(r"#?\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)"
                     r"(?:\s+step:\s*(\d+)\((\w+)\))?")
_RANK = re.compile(r"#?\s*Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+"
                   r"\[([^\]]*)\]\s+(.+)")
_OOB = re.compile(r"#\s*Out of bounds values\s*:\s*(\d+)\s*(\w+)?")
_AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*([-+.\deE]+|nan|inf)", re.IGNORECASE)
_STARTING = re.compile(r"#\s*Collective test (?:starting|concluded):\s*(\w+)")
_OPENING = re.compile(r"#\s*(?:Collective test (starting)|nccl-tests (version))\s*:?\s*(\w[\w.]*)")
_COMMAND = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(COLLECTIVES) + r")_perf[\w.-]*(?=\s+-|\s*$)")
_NCCL_VERSION = re.compile(r"NCCL version (\S+)")
_OFI_VERSION = re.compile(r"aws-ofi-nccl\s+v?(\d[\w.+-]*)")
_PROVIDER = re.compile(r"Selected provider is (\w+)", re.IGNORECASE)
_NETWORK = re.compile(r"Using network (.+?)\s*$")
_ELISION = {"...", "…", "[...]", "(...)"}


class NcclParseError(ValueError):
    """The text holds no usable nccl-tests result; the message says why."""


@dataclass
class _Run:
    label: str | None
    header: re.Match | None = None
    collective: str | None = None
    command: str | None = None
    tests_version: str | None = None
    ranks: list[tuple[int, str, str]] = field(default_factory=list)
    columns: list[str] | None = None
    rows: list[NcclRow] = field(default_factory=list)
    oob: re.Match | None = None
    avg: float | None = None
    provider: str | None = None
    network: str | None = None
    socket_seen: bool = False
    nccl_version: str | None = None
    ofi_version: str | None = None
    elided: bool = False
    elided_head: bool = False  # '...' before the first row: rank lines may be among what was left out
    warnings: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # error lines printed while this run was current
    launch: dict | None = None  # the launcher's command line: ranks and nodes (nccl_facts.launch_of)
    launch_line: str | None = None
    split_note: str | None = None


def normalize_collective(name: str) -> str:
    """``all_reduce_perf``, ``all_reduce_perf_mpi``, ``allreduce`` and ``all_reduce`` name the same test."""
    key = name.strip().lower()
    if "_perf" in key:
        key = key[:key.index("_perf")]
    key = _ALIASES.get(key, key)
    if key not in COLLECTIVES:
        raise NcclParseError(f"unknown collective {name!r}: expected one of {', '.join(COLLECTIVES)}")
    return key


def parse(
    text: str | bytes | Iterable,
    collective: str | None = None,
    instance_type: str | None = None,
    nodes: int | None = None,
) -> NcclResult:
    """Parse nccl-tests output (a string, bytes, or an iterable of lines such as an open file) and judge it.

    ``collective`` overrides what the text says; ``nodes`` is used when the output has no rank
    lines to count hosts from. Without an instance type the run is judged against the
    reference of the hardware its rank lines name, when one is known.
    """
    wanted = normalize_collective(collective) if collective else None
    runs, failures = _scan(_lines(text))
    with_rows = [part for run in runs if run.rows for part in _apart(run)]
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
    results = []
    for run in with_rows:
        _inherit_log(run, runs)
        results.append(_judged(run, wanted, instance_type, nodes, single=len(with_rows) == 1))
    primary = results[-1]
    if len(results) > 1:
        primary.runs = results
        primary.primary_run = len(results) - 1
        primary.notes.insert(0, f"the input holds {len(results)} runs "
                                f"({', '.join(r.collective for r in results)}); the last one is shown, "
                                "all are listed under runs")
    return primary


def _apart(run: _Run) -> list[_Run]:
    """A run whose sizes restart mid-table holds the rows of several runs: one run each."""
    parts = nccl_facts.split_restarts(run.rows)
    if len(parts) == 1:
        return [run]
    note = (f"the sizes restart mid-table: the rows of {len(parts)} runs were printed into one table "
            "(interleaved or pasted together); read as separate runs")
    return [replace(run, rows=part, avg=nccl_facts.average_busbw(part), warnings=list(run.warnings),
                    failures=list(run.failures), split_note=note) for part in parts]


def _judged(run: _Run, wanted: str | None, instance_type: str | None, nodes: int | None,
            single: bool) -> NcclResult:
    result = _result(run, nodes)
    nccl_facts.apply_launch(result, run.launch, run.launch_line)
    if wanted:
        result.collective, result.collective_source = wanted, "given"
    elif run.collective:
        result.collective, result.collective_source = normalize_collective(run.collective), "log"
    elif run.command:
        result.collective, result.collective_source = normalize_collective(run.command), "command"
    else:
        name, evidence, ranks = infer_collective(result.rows, result.ranks)
        if name is None:
            raise NcclParseError(f"cannot tell which collective ran ({evidence}): "
                                 f"pass the collective, one of {', '.join(COLLECTIVES)}")
        result.collective, result.collective_source = name, "inferred"
        result.notes.append(f"collective inferred from the data: {evidence}")
        if result.ranks is None and ranks:
            result.ranks = ranks
            result.notes.append(f"{ranks} ranks inferred from the data (no complete rank lines)")
    result.instance_type = instance_type
    nodes_from_ranks(result, instance_type)
    if result.gpus_per_node is None and result.ranks and result.nodes and result.ranks % result.nodes == 0:
        result.gpus_per_node = result.ranks // result.nodes  # ranks from the data, nodes given: still a count
    judged = expectations.verdict(result, instance_type, result.nodes)
    result.verdict, result.diagnosis = judged.verdict, judged.diagnosis
    result.expected_busbw, result.reference_source = judged.expected_busbw, judged.reference_source
    result.reference_for = judged.reference_for
    result.notes.extend(judged.notes)
    if run.split_note:
        result.notes.insert(0, run.split_note)
    if nccl_facts.unchecked(result.rows):
        nccl_facts.mark_unchecked(result)
    nccl_facts.judge_failures(result, run.failures, run.warnings)
    return result


def infer_collective(rows: list[NcclRow], ranks: int | None) -> tuple[str | None, str, int | None]:
    """The collective the figures belong to, the evidence in words, and the rank count if it showed.

    Uses the columns nccl-tests prints per collective (``src/*.cu`` ``getCollByteCount`` and
    ``getBw``): a ``root`` ≥ 0 only for broadcast and reduce; ``count`` is the per-rank count
    (``size`` / ranks / element size) for all_gather, reduce_scatter and alltoall; the bus
    bandwidth factor is 2(n−1)/n for all_reduce, (n−1)/n for the gathering ones, 1 otherwise.
    """
    data = [row for row in rows if row.size > 0 and row.count > 0]
    if not data:
        return None, "every row has size 0", None
    first = data[0]
    redop, root = first.redop, first.root
    elt = ELEMENT_BYTES.get((first.type or "").lower())
    ratio = median(row.size / (row.count * elt) for row in data) if elt else None
    sized = [row for row in data if row.oop_algbw >= 1.0] or [row for row in data if row.oop_algbw > 0]
    factor = median(row.oop_busbw / row.oop_algbw for row in sized) if sized else None
    shown = f"busbw/algbw {factor:.3f}" if factor is not None else "no bandwidth above 0"
    if root is not None and root >= 0:
        name = "reduce" if redop and redop != "none" else "broadcast"
        return name, f"root column {root} (only broadcast and reduce have a root), redop {redop or 'absent'}", None
    if ratio is not None and ratio > 1.5:
        n = round(ratio)
        if redop and redop != "none":
            return "reduce_scatter", f"count is size/{n}/{elt} B with redop {redop}", n
        return "all_gather", (f"count is size/{n}/{elt} B with no reduction (alltoall prints the same columns; "
                              "pass the collective if it was alltoall)"), n
    if factor is not None and factor > 1.05:
        n = round(2 / (2 - factor)) if factor < 1.99 else None
        return "all_reduce", f"{shown} = 2(n−1)/n{f' for n = {n}' if n else ''}, count = size/{elt or '?'} B", n
    if factor is not None and abs(factor - 1) <= 0.05:
        if ranks is not None and ranks > 2:
            return "sendrecv", f"{shown} with {ranks} ranks and count = size/{elt or '?'} B", None
        return ("all_reduce", f"{shown}: all_reduce on 2 ranks or sendrecv print the same figures; "
                "all_reduce assumed, pass the collective if it was sendrecv", 2)
    if factor is None and redop and redop != "none":
        return "all_reduce", "redop column and count = size/element, bandwidth too small to confirm", None
    return None, f"the columns do not match a known collective ({shown})", None


def _text(chunk: str | bytes | bytearray) -> str:
    """``chunk`` as text: bytes are decoded as UTF-8; a NUL anywhere means binary input."""
    if isinstance(chunk, (bytes, bytearray)):
        if b"\x00" in chunk:
            raise NcclParseError("input is binary (contains NUL bytes), not nccl-tests output")
        try:
            chunk = bytes(chunk).decode("utf-8")
        except UnicodeDecodeError:
            raise NcclParseError("input is not UTF-8 text, not nccl-tests output") from None
    elif "\x00" in chunk:
        raise NcclParseError("input is binary (contains NUL bytes), not nccl-tests output")
    return chunk


def _lines(text) -> Iterable[str]:
    """Lines of ``text`` (str, bytes, or an iterable of str/bytes lines), checked to be text."""
    if isinstance(text, (str, bytes, bytearray)):
        text = _text(text)
        if not text.strip():
            raise NcclParseError("input is empty")
        return text.splitlines()
    return _checked(text)


def _checked(lines: Iterable) -> Iterable[str]:
    seen = False
    for line in lines:
        line = _text(line)
        seen = seen or bool(line.strip())
        yield line.rstrip("\r\n")
    if not seen:
        raise NcclParseError("input is empty")


def strip_prefix(line: str) -> tuple[str | None, str]:
    """The launcher label (task or host) and the line without the launcher's prefixes."""
    label = None
    for _ in range(3):
        for pattern in _PREFIXES:
            match = pattern.match(line)
            if match and match.end():
                if match.groups() and label is None:
                    label = ",".join(group for group in match.groups() if group is not None)
                line = line[match.end():]
                break
        else:
            match = _HOST_PREFIX.match(line)
            if not match:
                break
            label = label or match.group(1)
            line = line[match.end():]
    return label, line.strip()


def _scan(lines: Iterable[str]) -> tuple[list[_Run], list[str]]:
    """Split the lines into runs and collect log facts per run."""
    runs: list[_Run] = []
    preamble = _Run(label=None)
    failures: list[str] = []
    pending: dict[str, str] = {}
    for raw in lines:
        label, line = strip_prefix(raw)
        if not line:
            continue
        current = runs[-1] if runs else preamble
        if "NCCL INFO" in line or "NCCL WARN" in line:
            _log_line(current, line)
        elif line.startswith("NCCL version"):
            match = _NCCL_VERSION.match(line)
            current.nccl_version = current.nccl_version or (match.group(1) if match else None)
        elif line in _ELISION:
            if current.rows or current.columns is not None or current.header is not None:
                current.elided = True  # lines left out of a run; '...' before any run is prose
                current.elided_head = current.elided_head or not current.rows
        elif _HEADER.match(line):
            header = _HEADER.match(line)
            run = _Run(label=label, header=header, collective=pending.pop("starting", None),
                       tests_version=pending.pop("version", None), command=pending.pop("command", None),
                       launch=pending.pop("launch", None), launch_line=pending.pop("launch_line", None))
            if not runs:
                if preamble.rows:  # a table whose header was cut off: a run of its own
                    runs.append(preamble)
                else:
                    _merge_log(run, preamble)
            runs.append(run)
        elif line.startswith("#"):
            opening = _OPENING.match(line)
            if opening:  # printed just before the header of the run it names
                pending[opening.group(1) or opening.group(2)] = opening.group(3)
                continue
            columns = columns_of(line)
            if columns is not None:
                if current is preamble and preamble.rows:  # a table before any header: a run of its own
                    runs.append(preamble)
                if current.rows:
                    current = _Run(label=label, command=pending.pop("command", None),
                                   collective=pending.pop("starting", None))
                    runs.append(current)
                elif "command" in pending:
                    current.command = pending.pop("command")
                current.columns = columns
                continue
            _comment_line(current, line)
        else:
            row = row_of(line.split(), current.columns)
            if row is not None:
                current.rows.append(row)
                continue
            found = _COMMAND.search(line) if "`" not in line else None
            if found:
                pending["command"] = found.group(1)
                launch = nccl_facts.launch_of(line)
                if launch:
                    pending["launch"], pending["launch_line"] = launch, line
            if "failure" in line.lower() or "error" in line.lower():
                failures.append(line[:200])
                current.failures.append(line[:300])
    if not runs and preamble.rows:
        preamble.collective = preamble.collective or pending.get("starting")
        preamble.command = preamble.command or pending.get("command")
        preamble.launch, preamble.launch_line = pending.get("launch"), pending.get("launch_line")
        runs.append(preamble)
    return runs, failures


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
    for name in ("provider", "network", "nccl_version", "ofi_version", "collective", "tests_version", "command",
                 "launch", "launch_line"):
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
    if run.nccl_version is None:
        run.nccl_version = next((other.nccl_version for other in runs if other.nccl_version), None)


def _transport(run: _Run) -> str | None:
    network = (run.network or "").lower()
    if "libfabric" in network or run.provider:
        provider = run.provider or "efa"
        return "efa" if provider == "efa" else f"ofi-{provider}"
    if "socket" in network:
        return "socket"
    if network.startswith("ib"):
        return "ib"
    if "tcpx" in network or "tcpxo" in network:
        return "tcpx"
    if run.socket_seen:
        return "socket"
    return None


def _result(run: _Run, nodes: int | None) -> NcclResult:
    rows = run.rows
    hosts = list(dict.fromkeys(host for _, host, _ in run.ranks))
    header = run.header
    n_threads = int(header.group(1)) if header else None
    n_gpus = int(header.group(2)) if header else None
    ids = {rank for rank, _, _ in run.ranks}
    partial = bool(ids) and ids != set(range(len(ids)))  # e.g. only "Rank 71" of an excerpt
    ranks = None if partial else len(ids) or None
    if ranks is None and header and nodes in (None, 1) and not (run.label or run.elided_head or partial or run.launch):
        ranks = n_threads * n_gpus  # one process drove every GPU: the header counts them
    node_count = (None if partial else len(hosts)) or nodes
    model = Counter(model for _, _, model in run.ranks).most_common(1)[0][0] if run.ranks else None
    result = NcclResult(
        collective="", rows=rows, ranks=ranks, nodes=node_count, hosts=hosts,
        gpus_per_node=ranks // node_count if ranks and node_count and ranks % node_count == 0 else None,
        gpu_model=model, hardware=expectations.hardware_of(model),
        n_threads=n_threads, n_gpus=n_gpus,
        min_bytes=int(header.group(3)) if header else None, max_bytes=int(header.group(4)) if header else None,
        step=f"{header.group(5)}({header.group(6)})" if header and header.group(5) else None,
        peak_busbw=max(row.busbw for row in rows),
        transport=_transport(run), nccl_version=run.nccl_version, ofi_version=run.ofi_version,
        nccl_tests_version=run.tests_version, warnings=run.warnings, complete=run.avg is not None,
        excerpt=run.elided or run.header is None,
    )
    fill_bandwidth(result, run.avg)
    result.wrong_total = sum((row.oop_wrong or 0) + (row.ip_wrong or 0) for row in rows)
    if run.oob:
        result.out_of_bounds = int(run.oob.group(1))
        result.out_of_bounds_ok = (run.oob.group(2) or "").upper() == "OK"
    if nodes and hosts and nodes != len(hosts):
        result.notes.append(f"{nodes} nodes were given but the output lists {len(hosts)} hosts; the output was used")
    if run.elided:
        result.notes.append(f"an excerpt: rows were left out ('...'); figures cover the {len(rows)} rows shown")
    if run.header is None:
        result.notes.append("the '# nThread' header is not in the input: ranks and sizes come from the rows")
    if partial:
        result.notes.append(f"the rank lines shown are part of the run's (rank {max(ids)} is listed but only "
                            f"{len(ids)} rank line{'s' if len(ids) != 1 else ''}): ranks and nodes are not counted "
                            "from them")
    if not result.complete:
        result.notes.append(f"the output ends after {len(rows)} rows without the footer: the run was cut off "
                            "or only part of it was pasted; figures cover the sizes shown")
    return result


def nodes_from_ranks(result: NcclResult, instance_type: str | None) -> None:
    """Without rank lines naming hosts, the node count follows from the ranks and the instance type."""
    itype = instance_types.find(instance_type)
    per_node = itype.gpus if itype else None
    if result.nodes is None and result.ranks and per_node and result.ranks % per_node == 0:
        result.nodes = result.ranks // per_node
        result.gpus_per_node = per_node
        result.notes.append(f"{result.nodes} nodes: {result.ranks} ranks at {per_node} per {itype.name}")


def fill_bandwidth(result: NcclResult, avg: float | None) -> None:
    """Average, 1 GiB and plateau bus bandwidth from the rows (the tool's own average when it printed one)."""
    rows = result.rows
    every = [row.oop_busbw for row in rows] + [row.ip_busbw for row in rows if row.ip_busbw is not None]
    result.avg_busbw = avg if avg is not None else round(sum(every) / len(every), 3)
    large = [row for row in rows if row.size >= GIB]
    result.large_message_busbw = min(large, key=lambda row: row.size).busbw if large else None
    result.plateau_busbw = max(row.busbw for row in large) if large else None
