"""What an nccl-tests run says outside its result table, and what its table says about itself.

:mod:`clusters.health.readers.nccl` splits the output into runs and reads the table; these are the facts around it
that change the verdict or the figures, kept apart so the reader stays small:

* failure lines (``Test NCCL failure common.cu:1005 'unhandled cuda error'``, ``Test CUDA failure``,
  ``NCCL ERROR``) after some rows mean the run crashed: the run failed, whatever its bandwidth so far, and
  the verdict says so with the line and how many ranks printed it; ``NCCL WARN`` lines are shown too;
* the launcher's command line (``mpirun -n 256 -npernode 16``, ``-np 2``, ``srun -N 2 --ntasks-per-node 8``,
  the test's own ``-g 2``/``-t 2``) gives the rank and node counts when the log has no rank lines;
* ``-c 0`` (no data check) prints ``N/A`` where the error column would be: the results were not checked,
  which is not the same as no wrong value;
* rows of two runs printed into one table (two processes writing to one file, or a second table pasted
  without its header) restart their sizes mid-table: they are two runs, not one run of twice the rows.
"""
from __future__ import annotations

import re
import shlex

from clusters.health.readers import expectations
from clusters.health.readers.nccl_rows import NcclResult, NcclRow

FAILURE = re.compile(r"Test (?:NCCL |CUDA )?failure|NCCL ERROR")
_ECHO = re.compile(r"\bpid \d+: Test failure\b")  # nccl-tests repeats the failure with its pid: not another rank
_LAUNCHERS = ("mpirun", "mpiexec", "srun", "orterun")
_PERF = re.compile(r"_perf[\w.-]*$")
NOT_CHECKED = ("results were not checked (-c 0: the error column is N/A): data errors would not show; "
               "run with -c 1 to check them")


def failures_of(lines: list[str]) -> list[str]:
    """The lines that say the run crashed, without nccl-tests' per-pid echoes of the same failure."""
    found = [line for line in lines if FAILURE.search(line)]
    return [line for line in found if not _ECHO.search(line)] or found


def judge_failures(result: NcclResult, lines: list[str], warnings: list[str]) -> None:
    """A run with failure lines failed, and the verdict says how; NCCL's warnings are shown beside it."""
    failed = failures_of(lines)
    if failed:
        first = failed[0][failed[0].find("Test") if "Test" in failed[0] else 0:]
        ranks = f" on {len(failed)} ranks" if len(failed) > 1 else ""
        before = "; ".join(part for part in result.diagnosis.split("; ") if "cut off" not in part) \
            if result.verdict not in (None, expectations.NONE) else ""
        result.verdict = expectations.FAIL
        result.diagnosis = (f"the run failed: {first}{ranks}, after {len(result.rows)} message sizes"
                            + (f"; the sizes before the failure: {before}" if before else ""))
        result.notes = [note for note in result.notes if "the run was cut off" not in note]
        result.warnings = list(dict.fromkeys(failed))[:5] + [w for w in result.warnings if w not in failed]
    warned = [line for line in warnings if "NCCL WARN" in line]
    if warned:
        more = f" (and {len(warned) - 1} more)" if len(warned) > 1 else ""
        result.diagnosis = f"{result.diagnosis}; NCCL warned: {warned[0]}{more}" if result.diagnosis \
            else f"NCCL warned: {warned[0]}{more}"


def _value(tokens: list[str], i: int, names: tuple[str, ...]) -> int | None:
    """The number given to one of ``names`` at ``tokens[i]`` (``-n 8``, ``-n8``, ``--np=8``), or None."""
    token = tokens[i]
    for name in names:
        if token == name and i + 1 < len(tokens) and tokens[i + 1].isdigit():
            return int(tokens[i + 1])
        if name.startswith("--") and token.startswith(name + "=") and token[len(name) + 1:].isdigit():
            return int(token[len(name) + 1:])
        if len(name) == 2 and token.startswith(name) and token[2:].isdigit():
            return int(token[2:])
    return None


def launch_of(line: str) -> dict[str, int] | None:
    """Ranks and nodes an ``mpirun``/``mpiexec``/``srun`` command line (and the test's ``-g``/``-t``) asks for.

    Open MPI's ``-N`` and ``-npernode`` are processes per node, Slurm's ``-N`` is nodes; ``-g`` GPUs and
    ``-t`` threads per process multiply the ranks. None when the line launches nothing we can count.
    """
    try:
        tokens = shlex.split(line, comments=False)
    except ValueError:
        tokens = line.split()
    start = next((i for i, t in enumerate(tokens) if t.rsplit("/", 1)[-1] in _LAUNCHERS), None)
    if start is None:
        return None
    slurm = tokens[start].rsplit("/", 1)[-1] == "srun"
    found: dict[str, int] = {}
    per_process = 1
    perf = False
    for i in range(start + 1, len(tokens)):
        if _PERF.search(tokens[i]):
            perf = True
            continue
        if perf:
            value = _value(tokens, i, ("-g", "--ngpus", "-t", "--nthreads"))
            per_process *= value or 1
            continue
        for key, names in (
            ("processes", ("-n", "--ntasks") if slurm else ("-n", "-np", "--np", "-c")),
            ("nodes", ("-N", "--nodes") if slurm else ()),
            ("per_node", ("--ntasks-per-node",) if slurm else ("-N", "-npernode", "--npernode", "-ppn", "--ppn")),
        ):
            value = _value(tokens, i, names)
            if value is not None:
                found.setdefault(key, value)
                break
    processes = found.get("processes")
    nodes = found.get("nodes")
    per_node = found.get("per_node")
    if processes is None and nodes and per_node:
        processes = nodes * per_node
    if nodes is None and processes and per_node and processes % per_node == 0:
        nodes = processes // per_node
    if processes is None:
        return {"nodes": nodes} if nodes else None
    return {"ranks": processes * per_process, **({"nodes": nodes} if nodes else {})}


def apply_launch(result: NcclResult, launch: dict[str, int] | None, line: str | None) -> None:
    """The command line's counts where the log has none (no rank lines, no hosts)."""
    if not launch:
        return
    shown = (line or "").strip()
    shown = shown if len(shown) <= 100 else shown[:97] + "..."
    if result.ranks is None and launch.get("ranks"):
        result.ranks = launch["ranks"]
        result.notes.append(f"{result.ranks} ranks from the command line ({shown})")
    if result.nodes is None and launch.get("nodes"):
        result.nodes = launch["nodes"]
        result.notes.append(f"{result.nodes} nodes from the command line")
    if result.gpus_per_node is None and result.ranks and result.nodes and result.ranks % result.nodes == 0:
        result.gpus_per_node = result.ranks // result.nodes


def unchecked(rows: list[NcclRow]) -> bool:
    """Whether every row's error column is ``N/A`` (nccl-tests run with ``-c 0``)."""
    return bool(rows) and all(row.oop_wrong is None and row.oop_error is None and row.ip_wrong is None
                              and row.ip_error is None and row.ip_busbw is not None for row in rows)


def mark_unchecked(result: NcclResult) -> None:
    """Say that a ``-c 0`` run's figures were not checked, in the notes and in the verdict."""
    result.checked = False
    result.notes.append(NOT_CHECKED)
    result.diagnosis = f"{result.diagnosis}; {NOT_CHECKED}" if result.diagnosis else NOT_CHECKED


def average_busbw(rows: list[NcclRow]) -> float:
    """The footer's figure for a run's own rows (a shared table's footers cannot say which run is which)."""
    every = [row.oop_busbw for row in rows] + [row.ip_busbw for row in rows if row.ip_busbw is not None]
    return round(sum(every) / len(every), 4)


def split_restarts(rows: list[NcclRow]) -> list[list[NcclRow]]:
    """Rows of interleaved runs apart: each row goes to the first run whose last size it exceeds.

    nccl-tests' sizes grow down a table, so a size at or below the previous one starts (or belongs to)
    another run. Zero-byte rows (small sizes rounded down by many ranks) repeat within one run and stay.
    """
    parts: list[list[NcclRow]] = []
    for row in rows:
        home = next((part for part in parts if row.size > part[-1].size or row.size == part[-1].size == 0), None)
        if home is None:
            parts.append([row])
        else:
            home.append(row)
    if len(parts) > 1 and all(len(part) >= 2 for part in parts):
        return parts
    return [rows]
