"""What bus bandwidth a collective test should reach, and a verdict a person can act on.

A run is compared with a published figure for its hardware, node count and collective, on the
plateau of large messages (the best bus bandwidth among messages >= 1 GiB), never with one number
for everything. Every figure below names where it was published; a figure carried over to
another instance type with the same GPUs, NVLink and EFA bandwidth says so (``derived``).

The hardware is read from the log's device lines (``# Rank … NVIDIA H100 80GB HBM3``). When it
is not the hardware of the cluster's instance type, the run is flagged as not from this
cluster and judged against its own hardware's figure when one is known. A run where nothing
could be judged (no reference, no transport seen, no data errors) gets the verdict ``none``,
never ``pass``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Protocol

from portal.core import instance_types


class Run(Protocol):
    """What a verdict reads of a parsed run: ``nccl.NcclResult`` and the nccom-test result both have it (named by
    shape so this table imports neither parser)."""

    collective: str
    rows: list
    nodes: int | None
    gpus_per_node: int | None
    gpu_model: str | None
    hardware: str | None
    peak_busbw: float
    plateau_busbw: float | None
    out_of_bounds: int | None
    out_of_bounds_ok: bool | None
    wrong_total: int
    complete: bool
    transport: str | None


PASS, WARN, FAIL, NONE = "pass", "warn", "fail", "none"
_LEVEL = {PASS: 0, WARN: 1, FAIL: 2}
WARN_BELOW = 0.8  # under 80 % of the reference: worth a look
FAIL_BELOW = 0.5  # under half: something is wrong with the fabric or the setup
LARGE_MESSAGE = 1 << 30

_AWSOME = ("aws-samples/awsome-distributed-training micro-benchmarks/nccl-tests/README.md "
           "(https://github.com/aws-samples/awsome-distributed-training/blob/"
           "7217859f67bc693c52ff175ccc6082c41dbd7a1b/micro-benchmarks/nccl-tests/README.md)")
_NEURON = ("AWS Neuron nccom-test user guide, 'Multiple Instances Example' "
           "(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/tools/neuron-sys-tools/nccom-test.html)")
_P5_PAGE = "https://aws.amazon.com/ec2/instance-types/p5/"


@dataclass(frozen=True)
class Reference:
    """Expected bus bandwidth in GB/s on the >= 1 GiB plateau, with where the figure was published.

    ``nodes`` × ``instance_type`` with ``per_node`` ranks on each is the run the figure was published
    for: the diagnosis and the Expected row both say it from here, and only a run with as many ranks
    per node is compared with it (a 1-GPU-per-node run cannot reach an 8-GPU node's figure).
    """

    busbw: float
    source: str
    nodes: int
    instance_type: str
    per_node: int
    derived: bool = False

    @property
    def published_for(self) -> str:
        return f"{self.nodes} × {self.instance_type}"


_P5_ALL_REDUCE = {
    # NVIDIA/nccl-tests issue #290: one 8 × H100 SXM node, all_reduce 476.53 GB/s at 4 GiB, which
    # NVIDIA's maintainer calls "in the expected range for H100" (NVLink SHARP); NVLink-bound, so any HGX H100.
    1: Reference(476.0, "1 × 8 H100 SXM: 476.53 GB/s at 4 GiB, NVIDIA/nccl-tests issue #290 "
                        "(https://github.com/NVIDIA/nccl-tests/issues/290)", 1, "p5.48xlarge", 8),
    # AWS's own published 2 × p5.48xlarge run: 465.87 GB/s at 4 GiB, 479.28 at 8 GiB, 487.26 at 16 GiB.
    2: Reference(487.0, f"2 × p5.48xlarge over EFA: 487.26 GB/s at 16 GiB, {_AWSOME}", 2, "p5.48xlarge", 8),
}
_P4D_ALL_REDUCE = {
    # NVIDIA/nccl issue #527: 1 × p4d.24xlarge (written p4dn there) 230.81 GB/s at 1 GiB.
    1: Reference(230.0, "1 × p4d.24xlarge: 230.81 GB/s at 1 GiB, NVIDIA/nccl issue #527 "
                        "(https://github.com/NVIDIA/nccl/issues/527)", 1, "p4d.24xlarge", 8),
    # AWS's published 2 × p4de.24xlarge run: 76.86 GB/s at 1 GiB, 78.33 at 2 GiB (400 Gbps EFA per node).
    2: Reference(78.0, f"2 × p4de.24xlarge over EFA: 78.33 GB/s at 2 GiB, {_AWSOME}", 2, "p4de.24xlarge", 8),
}
_TRN1_ALL_REDUCE = {
    # Neuron's published nccom-test run: 64 ranks on 2 × trn1.32xlarge, 47.09 GB/s at 1 GiB.
    2: Reference(47.0, f"64 ranks on 2 × trn1.32xlarge: 47.09 GB/s at 1 GiB, {_NEURON}", 2, "trn1.32xlarge", 32),
}


def _derived(table: dict[int, Reference], why: str) -> dict[int, Reference]:
    return {n: replace(r, source=f"{why}; {r.source}", derived=True) for n, r in table.items()}


_H200_NOTE = f"p5.48xlarge's figure: same 8-GPU NVLink 4 board and 3,200 Gbps EFA ({_P5_PAGE})"

EXPECTED: dict[tuple[str, str, str], dict[int, Reference]] = {
    ("nccl-tests", "p5.48xlarge", "all_reduce"): _P5_ALL_REDUCE,
    ("nccl-tests", "p5e.48xlarge", "all_reduce"): _derived(_P5_ALL_REDUCE, _H200_NOTE),
    ("nccl-tests", "p5en.48xlarge", "all_reduce"): _derived(_P5_ALL_REDUCE, _H200_NOTE),
    ("nccl-tests", "p4d.24xlarge", "all_reduce"): _P4D_ALL_REDUCE,
    ("nccl-tests", "p4de.24xlarge", "all_reduce"): _P4D_ALL_REDUCE,
    ("nccom-test", "trn1.32xlarge", "all_reduce"): _TRN1_ALL_REDUCE,
}

# GPU names as the device lines print them -> the instance types with that GPU. Order matters:
# "GH200" contains "H200".
HARDWARE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("GH200", ()), ("GB200", ()), ("GB10", ()), ("H200", ("p5e.48xlarge", "p5en.48xlarge")),
    ("H100", ("p5.48xlarge",)), ("H800", ()), ("H20", ()), ("B200", ("p6-b200.48xlarge",)),
    ("A100", ("p4d.24xlarge", "p4de.24xlarge")), ("A800", ()), ("A10G", ("g5.48xlarge",)),
    ("L40S", ("g6e.48xlarge",)), ("L4", ()), ("V100", ()), ("T4", ()), ("Trainium2", ("trn2.48xlarge",)),
    ("Trainium", ("trn1.32xlarge", "trn1n.32xlarge")),
)

SOCKET_ADVICE = ("NCCL used TCP sockets instead of EFA: check the aws-ofi-nccl plugin, FI_PROVIDER=efa "
                 "and the security group's self-referencing rule")
WRONG_ADVICE = "data corruption, check GPUs/NVLink (dcgmi diag -r 3; look for XID 48/74/79 on the nodes)"


@dataclass
class Judgement:
    """The verdict with the sentences behind it."""

    verdict: str
    diagnosis: str
    expected_busbw: float | None = None
    reference_source: str | None = None
    reference_for: str | None = None  # "2 × p5.48xlarge": the run the expected figure was published for
    notes: list[str] = field(default_factory=list)


_FAMILY = tuple((name, re.compile(rf"(?<![A-Z0-9]){re.escape(name.upper())}(?![A-Z0-9])")) for name, _ in HARDWARE)


def hardware_of(model: str | None) -> str | None:
    """The GPU family a device name belongs to (``NVIDIA H100 80GB HBM3`` -> ``H100``), or None.

    Families are whole words of the name, so ``NVIDIA L40`` is not an ``L4`` and ``GH200`` not an ``H200``.
    """
    if not model:
        return None
    upper = model.upper()
    for name, pattern in _FAMILY:
        if pattern.search(upper):
            return name
    return None


def instance_types_for(hardware: str | None) -> tuple[str, ...]:
    return next((types for name, types in HARDWARE if name == hardware), ())


def reference(instance_type: str | None, collective: str, nodes: int | None,
              tool: str = "nccl-tests") -> Reference | None:
    """The figure for the largest node bucket not above ``nodes`` (3+ nodes use the 2-node figure)."""
    itype = instance_types.find(instance_type)
    if itype is None or not nodes:
        return None
    table = EXPECTED.get((tool, itype.name, collective))
    if not table:
        return None
    buckets = [bucket for bucket in table if bucket <= nodes]
    return table[max(buckets)] if buckets else None


def verdict(result: Run, instance_type: str | None, nodes: int | None) -> Judgement:
    """Judge a run: data errors and a wrong transport fail it; bandwidth is compared when a reference
    exists; when nothing could be judged the verdict is ``none``."""
    findings: list[tuple[str, str]] = []
    notes: list[str] = []
    unjudged: list[str] = []
    itype = instance_types.find(instance_type)
    tool = getattr(result, "tool", "nccl-tests")
    if instance_type and itype is None:
        notes.append(f"unknown instance type {instance_type!r}: judged on the log's own hardware")

    if result.wrong_total:
        findings.append((FAIL, f"#wrong = {result.wrong_total} > 0: {WRONG_ADVICE}"))
    if result.out_of_bounds or result.out_of_bounds_ok is False:
        findings.append((FAIL, f"{result.out_of_bounds or 0} out-of-bounds values (FAILED): {WRONG_ADVICE}"))

    multi_node = nodes is None or nodes > 1
    transport = result.transport
    transport_judged = False
    if transport == "socket" and multi_node:
        findings.append((FAIL, SOCKET_ADVICE))
    elif transport and transport.startswith("ofi-") and multi_node:
        findings.append((FAIL, (f"NCCL used the libfabric provider '{transport[4:]}' instead of efa: set "
                               "FI_PROVIDER=efa and check the EFA devices with `fi_info -p efa`")))
    elif transport and multi_node:
        transport_judged = True
    elif transport is None and nodes and nodes > 1 and tool == "nccl-tests":
        notes.append("transport unknown: rerun with NCCL_DEBUG=INFO to confirm NCCL used EFA")

    candidate = _reference_type(result, itype, tool, multi_node, findings, notes, unjudged)
    ref = reference(candidate, result.collective, nodes, tool) if candidate else None
    per_node = result.gpus_per_node
    if ref is not None and per_node and per_node != ref.per_node:
        unit = "GPU" if tool == "nccl-tests" else "rank"
        unjudged.append(f"the run had {per_node} {unit}{'s' if per_node != 1 else ''} per node; the published "
                        f"figure ({ref.busbw:g} GB/s) is for {ref.per_node} per node on {ref.published_for}, "
                        f"so the two are not comparable: rerun with {ref.per_node} per node to judge the bandwidth")
        ref = None
    elif ref is not None:
        findings.append(_bandwidth(result, nodes, ref))
        if ref.derived:
            notes.append(f"the expected figure is carried over: {ref.source}")
    elif candidate:
        unjudged.append(f"no published reference for {result.collective} on {nodes or '?'} × {candidate}")

    if not result.complete and not getattr(result, "excerpt", False):
        findings.append((WARN, "the run was cut off before its footer: rerun it to completion"))
    judged = ref is not None or transport_judged or any(level == FAIL for level, _ in findings)
    if not judged and not findings:
        if not instance_type and not transport:
            unjudged.insert(0, "no instance type given and no transport in the log")
        why = "; ".join(dict.fromkeys(unjudged)) or "no reference applies"
        return Judgement(NONE, f"nothing was judged: {why}", notes=notes)
    notes.extend(text for text in unjudged if text not in notes)
    level = max((_LEVEL[lvl] for lvl, _ in findings), default=0)
    worst_first = sorted(findings, key=lambda item: -_LEVEL[item[0]])
    diagnosis = "; ".join(text for _, text in worst_first) or "no problems found"
    return Judgement(
        verdict=(PASS, WARN, FAIL)[level], diagnosis=diagnosis,
        expected_busbw=ref.busbw if ref else None, reference_source=ref.source if ref else None,
        reference_for=ref.published_for if ref else None, notes=notes,
    )


def _reference_type(result, itype, tool, multi_node, findings, notes, unjudged) -> str | None:
    """Which instance type's figures apply: the cluster's when the log ran on its hardware, else the
    log's own hardware (intra-node always; across nodes only over EFA, where the figures were measured)."""
    hardware = result.hardware if tool == "nccl-tests" else None
    if itype is not None and itype.gpus == 0 and tool == "nccl-tests":
        findings.append((WARN, f"{itype.name} has Trainium chips, not GPUs: nccl-tests figures do not apply "
                               "(run nccom-test)"))
        return None
    if itype is not None and tool == "nccom-test" and itype.gpus:
        findings.append((WARN, f"{itype.name} has GPUs: nccom-test output is from a Trainium cluster, not this one"))
        return None
    named = result.gpu_model if tool == "nccl-tests" else None
    if itype is not None and (named is None or hardware == itype.accelerator):
        return itype.name
    if itype is not None:  # any named GPU other than the cluster's, known to the table or not
        findings.append((WARN, f"the log ran on {named} but this cluster is {itype.name} "
                               f"({itype.accelerator}): the run is not from this cluster's hardware"))
    if named is None:
        if itype is None and tool == "nccl-tests":
            unjudged.append("the log names no GPU (no rank lines) and no instance type was given")
        return None
    if hardware is None:
        unjudged.append(f"no published reference is known for {named}")
        return None
    types = instance_types_for(hardware)
    if not types:
        unjudged.append(f"no published reference is known for {hardware}")
        return None
    if multi_node and result.transport != "efa":
        unjudged.append(f"no published reference for {hardware} across nodes over "
                        f"{result.transport or 'an unknown fabric'} (the figures are for EFA on AWS)")
        return None
    if itype is None:
        notes.append(f"judged against {types[0]}'s figures: the log ran on {hardware}")
    return types[0]


def _bandwidth(result: Run, nodes: int, ref: Reference) -> tuple[str, str]:
    measured = result.plateau_busbw
    partial = measured is None
    if partial:
        measured = result.peak_busbw
    ratio = measured / ref.busbw if ref.busbw else 0.0
    where = "the largest messages" if partial else "the ≥ 1 GiB plateau"
    text = (f"bus bandwidth {measured:g} GB/s on {where} is {ratio:.0%} of the {ref.busbw:g} GB/s "
            f"published for {ref.published_for}")
    if nodes and nodes > ref.nodes:
        text += f" (the figure for {ref.nodes} nodes and more; this run had {nodes})"
    if partial:
        largest = max(row.size for row in result.rows)
        text += (f" (the largest message was {largest:,} bytes: smaller messages reach less, "
                 "rerun with -e 16G to judge)")
        return (WARN if ratio < WARN_BELOW else PASS), text
    if ratio < FAIL_BELOW:
        return FAIL, text
    return (WARN if ratio < WARN_BELOW else PASS), text
