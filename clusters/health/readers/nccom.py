"""Read AWS Neuron ``nccom-test`` output (Trainium collective benchmarks) into the same result as
an nccl-tests run, so Trn1 clusters are validated, judged and shown like GPU clusters.

The format is the one the Neuron nccom-test user guide prints::

    nccom-test -r 64 -N 2 -b 8 -e 1GB -f 2 -n 50 -w 5 -d fp32 allr --hosts 127.0.0.1 10.1.4.138
           size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)
                 8               2    fp32         520           0.00           0.00
    ...
    Avg bus bandwidth:      9.3924GB/s

The header names the columns (``time:avg(us)``, ``--stats`` percentiles, ``--show-input-output-size``
and ``--show-algorithm`` add or rename some), so rows are read by the header's names. The command
line gives the operation (``allr``, ``allg``, ``redsct``, ``alltoall``, ``sendrecv``, and the ones read without
a reference: ``permute``, ``allgv``, ``alltoallv`` and any other the command names), the ranks
(``-r``) and the instances (``-N``). A ``Failure running neuron-bench`` row or ``test failed``
line fails the run. There is one measurement per size: it fills the out-of-place columns.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from statistics import median

from clusters.health.readers import expectations
from clusters.health.readers.nccl import NcclParseError, NcclResult, NcclRow, _lines, fill_bandwidth, nodes_from_ranks

TOOL = "nccom-test"
OPERATIONS = {"allr": "all_reduce", "all_reduce": "all_reduce", "allg": "all_gather", "all_gather": "all_gather",
              "redsct": "reduce_scatter", "reduce_scatter": "reduce_scatter", "alltoall": "alltoall",
              "sendrecv": "sendrecv"}
# The guide's other operations (variable-size gathers and all-to-alls, permute with src/target pairs, ...):
# read like the others, named as nccom-test names them, judged against nothing.
OTHER_OPERATIONS = {"allgv": "all_gatherv", "all_gatherv": "all_gatherv", "alltoallv": "alltoallv",
                    "permute": "permute", "redsctv": "reduce_scatterv", "reduce_scatterv": "reduce_scatterv"}
_COMMAND = re.compile(r"\bnccom-test\b(.*)$")
_AVG = re.compile(r"Avg bus bandwidth:\s*([-+.\deE]+)\s*GB/s")
_FAILED = re.compile(r"Failure running neuron-bench|errors? found - test failed")


def looks_like(text) -> bool:
    """Whether ``text`` (a string) is nccom-test output rather than nccl-tests output."""
    return isinstance(text, str) and ("size(B)" in text and "busbw(GB/s)" in text)


def parse(text: str | bytes | Iterable, collective: str | None = None, instance_type: str | None = None,
          nodes: int | None = None) -> NcclResult:
    """Parse nccom-test output and judge it; the last block with rows is the primary run."""
    runs: list[dict] = []
    current: dict | None = None
    command: dict = {}
    failures: list[str] = []
    for raw in _lines(text):
        line = raw.strip()
        if not line:
            continue
        found = _COMMAND.search(line)
        if found:
            command = _command(found.group(1))
            continue
        if line.startswith("size(B)"):
            current = {"columns": line.split(), "rows": [], "avg": None, **command}
            runs.append(current)
            continue
        if _FAILED.search(line):
            failures.append(line[:200])
            continue
        match = _AVG.search(line)
        if match and current is not None:
            current["avg"] = float(match.group(1))
            continue
        if current is not None:
            row = _row(line.split(), current["columns"])
            if row is not None:
                current["rows"].append(row)
    with_rows = [run for run in runs if run["rows"]]
    if not with_rows:
        if failures:
            raise NcclParseError(f"nccom-test failed before any result: {failures[0]}")
        raise NcclParseError("no nccom-test output found: no 'size(B) … busbw(GB/s)' header with result rows")
    operations = _operations(with_rows, collective)
    results = [_result(run, name, source, why, instance_type, nodes, failures)
               for run, (name, source, why) in zip(with_rows, operations, strict=True)]
    # The block that reaches the largest message is the measurement; with --streams-json the other
    # streams can be fixed at 1 KiB (the guide's multistream example), which says nothing about the fabric.
    largest = max(max(row.size for row in result.rows) for result in results)
    index = max(i for i, result in enumerate(results) if max(row.size for row in result.rows) == largest)
    primary = results[index]
    if len(results) > 1:
        primary.runs, primary.primary_run = results, index
        which = "the last one" if index == len(results) - 1 else f"block {index + 1}, which reaches the largest message,"
        primary.notes.insert(0, f"the input holds {len(results)} nccom-test runs "
                                f"({', '.join(r.collective for r in results)}); {which} is shown")
    return primary


def _operations(runs: list[dict], collective: str | None) -> list[tuple[str, str, str | None]]:
    """(collective, source, evidence) per block.

    The command line names one operation; with ``--streams-json`` each stream has its own, which
    nccom-test does not print, so each block is told from its own figures and the command's operation
    goes to the one block whose figures cannot tell, never to all of them.
    """
    if collective:
        return [(collective, "given", None)] * len(runs)
    found: list[tuple[str | None, str, str | None]] = []
    for run in runs:
        operation = run.get("operation")
        if operation and not run.get("streams"):
            found.append((OPERATIONS[operation], "command", None))
            continue
        if run.get("other_operation") and not run.get("streams"):
            # read and reported with its figures; the verdict says there is no reference to judge it by
            other = run["other_operation"]
            found.append((OTHER_OPERATIONS.get(other, other), "command", None))
            continue
        name, evidence = infer_operation(run["rows"])
        found.append((name, "inferred", evidence))
    open_blocks = [i for i, (name, _, _) in enumerate(found) if name is None]
    for i in open_blocks:
        run = runs[i]
        operation = run.get("operation")
        claimed = operation and OPERATIONS[operation] in {name for name, _, _ in found if name}
        if operation and len(open_blocks) == 1 and not claimed:
            found[i] = (OPERATIONS[operation], "command",
                        f"the command line's operation: the other streams' figures name theirs ({found[i][2]})")
            continue
        raise NcclParseError(f"cannot tell which nccom-test operation ran ({found[i][2]}): pass the collective")
    return found  # type: ignore[return-value]


def infer_operation(rows: list[NcclRow]) -> tuple[str | None, str]:
    """The operation a block's figures belong to, and the evidence, for output pasted without its command.

    nccom-test computes busbw from algbw as nccl-tests does (the user guide's "bus bandwidth" section):
    2(r−1)/r for all-reduce, (r−1)/r for all-gather, reduce-scatter and all-to-all (which the figures
    cannot tell apart), 1 for all-reduce on 2 ranks and send-receive.
    """
    sized = [row for row in rows if row.oop_algbw >= 1.0] or [row for row in rows if row.oop_algbw > 0]
    if not sized or not any(row.oop_busbw > 0 for row in sized):
        return None, "every bandwidth is 0, so the figures cannot tell"
    factor = median(row.oop_busbw / row.oop_algbw for row in sized)
    shown = f"busbw/algbw {factor:.3f}"
    if factor > 1.05:
        return "all_reduce", f"operation inferred from the data: {shown} = 2(r−1)/r, which only all-reduce gives"
    if abs(factor - 1) <= 0.01:
        return "all_reduce", (f"operation inferred from the data: {shown}: all-reduce on 2 ranks or send-receive "
                              "print the same figures; all-reduce assumed, pass the collective if it was sendrecv")
    if factor > 1:
        return None, f"{shown} matches no operation's factor"
    return None, (f"{shown} = (r−1)/r: all-gather, reduce-scatter and all-to-all print the same figures")


def _command(args: str) -> dict:
    tokens = args.split()
    found: dict = {}
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if token in ("-r", "--nworkers") and following.isdigit():
            found["ranks"] = int(following)
        elif token in ("-N", "--nnodes") and following.isdigit():
            found["nodes"] = int(following)
        elif token == "--streams-json":
            found["streams"] = True
        elif token.lower() in OPERATIONS and "operation" not in found:
            found["operation"] = token.lower()
        elif not token.startswith("-") and token.isalpha() and "operation" not in found and token.islower():
            found.setdefault("other_operation", token)
    return found


def _row(tokens: list[str], columns: list[str]) -> NcclRow | None:
    if len(tokens) != len(columns) or not tokens[0].isdigit() or not tokens[1].isdigit():
        return None
    values = dict(zip(columns, tokens, strict=True))
    time_key = next((c for c in columns if c.startswith("time") and "avg" in c), None) or \
        next((c for c in columns if c.startswith("time")), None)
    try:
        return NcclRow(size=int(values["size(B)"]), count=int(values["count(elems)"]), type=values.get("type"),
                       redop=None, root=None, oop_time_us=float(values[time_key]) if time_key else 0.0,
                       oop_algbw=float(values["algbw(GB/s)"]), oop_busbw=float(values["busbw(GB/s)"]),
                       oop_wrong=None)
    except (KeyError, ValueError):
        return None


def _result(run: dict, name: str, source: str, evidence: str | None, instance_type: str | None,
            nodes: int | None, failures: list[str]) -> NcclResult:
    rows = run["rows"]
    result = NcclResult(
        collective=name, rows=rows, ranks=run.get("ranks"), nodes=run.get("nodes") or nodes or
        (1 if "ranks" in run else None), peak_busbw=max(row.busbw for row in rows),
        complete=run["avg"] is not None, tool=TOOL, collective_source=source,
        hardware="Trainium", instance_type=instance_type,
    )
    if evidence:
        result.notes.append(evidence)
    fill_bandwidth(result, run["avg"])
    nodes_from_ranks(result, None)
    if result.ranks and result.nodes:
        result.gpus_per_node = result.ranks // result.nodes if result.ranks % result.nodes == 0 else None
    if failures:
        result.warnings.extend(failures[:5])
    judged = expectations.verdict(result, instance_type, result.nodes)
    verdict, diagnosis = judged.verdict, judged.diagnosis
    if failures:
        verdict = expectations.FAIL
        diagnosis = f"nccom-test reported a failure: {failures[0]}" + (f"; {diagnosis}" if judged.verdict != "none"
                                                                        else "")
    result.verdict, result.diagnosis = verdict, diagnosis
    result.expected_busbw, result.reference_source = judged.expected_busbw, judged.reference_source
    result.reference_for = judged.reference_for
    result.notes.extend(judged.notes)
    return result
