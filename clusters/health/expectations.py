"""What bus bandwidth an nccl-tests run should reach, and a verdict a person can act on.

A run is compared with the figure for its instance type, node count and collective at
large messages (>= 1 GiB), never with one number for everything. Figures marked
``estimate`` are the portal's own assumptions where no measured public figure was at
hand; replace them with measured runs when the program has some.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clusters import instance_types

if TYPE_CHECKING:
    from clusters.health.nccl import NcclResult

PASS, WARN, FAIL = "pass", "warn", "fail"
_LEVEL = {PASS: 0, WARN: 1, FAIL: 2}
WARN_BELOW = 0.8  # under 80 % of the reference: worth a look
FAIL_BELOW = 0.5  # under half: something is wrong with the fabric or the setup
LARGE_MESSAGE = 1 << 30


@dataclass(frozen=True)
class Reference:
    """Expected bus bandwidth in GB/s at >= 1 GiB, with where the figure comes from."""

    busbw: float
    source: str
    estimate: bool = False


_P5_ALL_REDUCE = {
    # Single H100 node with NVLink SHARP (NVLS): about 480 GB/s (DOMAIN.md, reference figures).
    1: Reference(480.0, "single H100 node with NVLS peaks near 480 GB/s (DOMAIN.md)"),
    # 2 × p5.48xlarge over EFA: about 440 GB/s at 1 GiB, 487 GB/s at 16 GiB (DOMAIN.md).
    2: Reference(440.0, "2 × p5.48xlarge over EFA: ~440 GB/s at 1 GiB, ~487 at 16 GiB (DOMAIN.md)"),
    # 4+ nodes: ring/tree bandwidth drops a little as the fabric gets involved more.
    4: Reference(400.0, "portal estimate for 4+ p5 nodes over EFA", estimate=True),
}
_P5_SOURCE_NOTE = "assumed equal to p5.48xlarge (same NVLink, 3,200 Gbps EFA)"
_P4D_ALL_REDUCE = {
    # Single p4d node (8 × A100, NVLink 3): about 230 GB/s (DOMAIN.md).
    1: Reference(230.0, "single p4d node ~230 GB/s (DOMAIN.md)"),
    # Across nodes the 400 Gbps (50 GB/s) of EFA per node is the limit; DOMAIN.md records a run at
    # 30-57 GB/s on 2-4 nodes. 45 GB/s is the portal's estimate of a good multi-node run.
    2: Reference(45.0, "portal estimate from p4d's 400 Gbps EFA per node", estimate=True),
}

EXPECTED: dict[tuple[str, str], dict[int, Reference]] = {
    ("p5.48xlarge", "all_reduce"): _P5_ALL_REDUCE,
    ("p5e.48xlarge", "all_reduce"): {n: Reference(r.busbw, f"{_P5_SOURCE_NOTE}; {r.source}", True)
                                     for n, r in _P5_ALL_REDUCE.items()},
    ("p5en.48xlarge", "all_reduce"): {n: Reference(r.busbw, f"{_P5_SOURCE_NOTE}; {r.source}", True)
                                      for n, r in _P5_ALL_REDUCE.items()},
    ("p4d.24xlarge", "all_reduce"): _P4D_ALL_REDUCE,
    ("p4de.24xlarge", "all_reduce"): _P4D_ALL_REDUCE,
}

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
    notes: list[str] = field(default_factory=list)


def reference(instance_type: str | None, collective: str, nodes: int | None) -> Reference | None:
    """The expected figure for the largest node bucket not above ``nodes`` (3 nodes use the 2-node figure)."""
    itype = instance_types.find(instance_type)
    if itype is None or not nodes:
        return None
    table = EXPECTED.get((itype.name, collective))
    if not table:
        return None
    buckets = [bucket for bucket in table if bucket <= nodes]
    return table[max(buckets)] if buckets else None


def verdict(result: NcclResult, instance_type: str | None, nodes: int | None) -> Judgement:
    """Judge a run: data errors and a socket fallback fail it; bandwidth is compared when a reference exists."""
    findings: list[tuple[str, str]] = []
    notes: list[str] = []
    itype = instance_types.find(instance_type)
    if instance_type and itype is None:
        notes.append(f"unknown instance type {instance_type!r}: bandwidth not judged, only transport and data errors")
    elif not instance_type:
        notes.append("no instance type given: bandwidth not judged, only transport and data errors")

    if result.wrong_total:
        findings.append((FAIL, f"#wrong = {result.wrong_total} > 0: {WRONG_ADVICE}"))
    if result.out_of_bounds or result.out_of_bounds_ok is False:
        findings.append((FAIL, f"{result.out_of_bounds or 0} out-of-bounds values (FAILED): {WRONG_ADVICE}"))

    multi_node = nodes is None or nodes > 1
    transport = result.transport
    if transport == "socket" and multi_node:
        findings.append((FAIL, SOCKET_ADVICE))
    elif transport and transport.startswith("ofi-") and multi_node:
        findings.append((FAIL, (f"NCCL used the libfabric provider '{transport[4:]}' instead of efa: set "
                               "FI_PROVIDER=efa and check the EFA devices with `fi_info -p efa`")))
    elif transport is None and nodes and nodes > 1:
        notes.append("transport unknown: rerun with NCCL_DEBUG=INFO to confirm NCCL used EFA")

    ref = reference(instance_type, result.collective, nodes)
    if itype is not None and itype.gpus == 0:
        notes.append(f"{itype.name} has Trainium chips, not GPUs: nccl-tests figures do not apply (use nccom-test)")
    elif ref is not None:
        findings.append(_bandwidth(result, itype, nodes, ref))
        if ref.estimate:
            notes.append(f"the expected figure is an estimate: {ref.source}")
    elif itype is not None:
        notes.append(f"no reference figure for {result.collective} on {nodes or '?'} × {itype.name}: "
                     "bandwidth not judged")

    if not result.complete:
        findings.append((WARN, "the run was cut off before its footer: rerun it to completion"))
    level = max((_LEVEL[lvl] for lvl, _ in findings), default=0)
    worst_first = sorted(findings, key=lambda item: -_LEVEL[item[0]])
    diagnosis = "; ".join(text for _, text in worst_first) or "no problems found"
    return Judgement(
        verdict=(PASS, WARN, FAIL)[level], diagnosis=diagnosis,
        expected_busbw=ref.busbw if ref else None, reference_source=ref.source if ref else None, notes=notes,
    )


def _bandwidth(result: NcclResult, itype: instance_types.InstanceType, nodes: int, ref: Reference) -> tuple[str, str]:
    measured = result.large_message_busbw
    partial = measured is None
    if partial:
        measured = result.peak_busbw
    ratio = measured / ref.busbw if ref.busbw else 0.0
    text = (f"bus bandwidth {measured:g} GB/s is {ratio:.0%} of the {ref.busbw:g} GB/s expected for "
            f"{nodes} × {itype.name} at 1 GiB")
    if partial:
        largest = max(row.size for row in result.rows)
        text += (f" (the largest message was {largest:,} bytes: smaller messages reach less, "
                 "rerun with -e 16G to judge)")
        return (WARN if ratio < WARN_BELOW else PASS), text
    if ratio < FAIL_BELOW:
        return FAIL, text
    return (WARN if ratio < WARN_BELOW else PASS), text
