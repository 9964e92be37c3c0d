"""Collective test output for the embedded endpoint's emulated Slurm jobs, in the real tools' format.

An emulated validation job has to hand the portal what nccl-tests (GPU clusters) or Neuron's
nccom-test (Trainium) would print, so that the portal's own readers (:mod:`clusters.health.readers.nccl`,
:mod:`clusters.health.readers.nccom`) parse it as they parse a real log. The shape of the bandwidth curve is
read from published runs kept as demo samples (AWS's 2 × p5.48xlarge all_reduce over EFA, Neuron's
2 × trn1.32xlarge all-reduce); the plateau is scaled to the published figure for the cluster's
hardware (:mod:`clusters.health.readers.expectations`), times ``factor`` for an emulated slow link. Two runs never read
the same, as on real hardware: each run lands a little under or at the published plateau (``RUN_SPREAD``) and each
row jitters around the curve, more for the small, latency-bound messages (``ROW_JITTER``).
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

from clusters.health.readers import expectations, nccl, nccom

SAMPLES = Path(__file__).resolve().parent.parent / "demo_samples"
NCCL_SAMPLE = SAMPLES / "nccl_allreduce_2xp5_efa_srun.txt"
NCCOM_SAMPLE = SAMPLES / "nccom_allr_2xtrn1.txt"
# GPU names the device lines print, per instance type family (the readers tell the hardware from them).
DEVICES = {"p5.": "NVIDIA H100 80GB HBM3", "p5e.": "NVIDIA H200", "p5en.": "NVIDIA H200",
           "p4d.": "NVIDIA A100-SXM4-40GB", "p4de.": "NVIDIA A100-SXM4-80GB", "g5.": "NVIDIA A10G",
           "g6e.": "NVIDIA L40S", "p6-b200.": "NVIDIA B200"}
# Bus bandwidth is algbw × this (nccl-tests' PERFORMANCE.md), n ranks.
BUS_FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
              "reduce_scatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n}
NCCL_BINARY = {"all_reduce": "all_reduce_perf", "all_gather": "all_gather_perf",
               "reduce_scatter": "reduce_scatter_perf", "alltoall": "alltoall_perf"}
NCCOM_OPERATION = {"all_reduce": "allr", "all_gather": "allg", "reduce_scatter": "redsct", "alltoall": "alltoall"}
RUN_SPREAD = (0.95, 1.01)  # a healthy run's plateau as a share of the published one
ROW_JITTER = (0.04, 0.008)  # relative spread of a row's figures: the smallest message, the largest
_random = random.Random()


def _run_factor(rng: random.Random) -> float:
    low, high = RUN_SPREAD
    return min(high, max(low, rng.gauss((low + high) / 2 + 0.01, 0.012)))


def _jitter(rng: random.Random, position: float) -> float:
    """A row's multiplier; ``position`` is 0 for the smallest message and 1 for the largest."""
    small, large = ROW_JITTER
    return 1 + rng.gauss(0, small + (large - small) * position)


def _plain(instance_type: str) -> str:
    return instance_type.removeprefix("ml.")


def is_trainium(instance_type: str) -> bool:
    return _plain(instance_type).startswith("trn")


@cache
def _shape(path: Path) -> tuple[tuple[int, float], ...]:
    """(message size, busbw as a share of the sample's plateau) for each row of a published run."""
    text = path.read_text()
    result = (nccom if nccom.looks_like(text) else nccl).parse(text)
    top = result.plateau_busbw or max(row.busbw for row in result.rows)
    return tuple((row.size, row.busbw / top) for row in result.rows)


def plateau_for(instance_type: str, nodes: int, trainium: bool) -> float:
    """The published plateau for the hardware and node count, else the sample's own hardware's."""
    tool = "nccom-test" if trainium else "nccl-tests"
    ref = expectations.reference(_plain(instance_type), "all_reduce", max(nodes, 1), tool=tool)
    if ref is None:
        ref = expectations.reference("trn1.32xlarge" if trainium else "p5.48xlarge", "all_reduce", 2, tool=tool)
    return ref.busbw if ref else 400.0


def nccl_tests(collective: str, hosts: list[str], instance_type: str, *, factor: float = 1.0,
               nccl_version: str = "2.27.7", ofi_version: str = "1.16.3", gpus_per_node: int = 8,
               rng: random.Random | None = None) -> str:
    """What ``srun -l <collective>_perf -b 1M -e 16G -f 2 -g 1`` prints on ``hosts`` (one run: ``rng`` draws its
    noise)."""
    rng = rng or _random
    ranks = len(hosts) * gpus_per_node
    device = next((name for prefix, name in DEVICES.items() if _plain(instance_type).startswith(prefix)), DEVICES["p5."])
    binary = NCCL_BINARY[collective]
    lines = ["# nccl-tests version 2.13.11 nccl-headers=22707 nccl-library=22707",
             f"# Collective test starting: {binary}",
             "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 "
             "agg iters: 1 validation: 1 graph: 0", "#", "# Using devices"]
    for rank in range(ranks):
        host = hosts[rank // gpus_per_node]
        lines.append(f"#  Rank {rank:2d} Group  0 Pid {40000 + rank:6d} on {host} device {rank % gpus_per_node:2d} "
                     f"[0x{0x53 + 0x11 * (rank % gpus_per_node):02x}] {device}")
    for index, host in enumerate(hosts):
        pid = f"{host}:{40000 + index * gpus_per_node}:{40000 + index * gpus_per_node} [0]"
        if index == 0:
            lines.append(f"{pid} NCCL INFO NCCL version {nccl_version}+cuda12.8")
        lines += [f"{pid} NCCL INFO NET/Plugin: Loaded net plugin NCCL OFI (v10)",
                  f"{pid} NCCL INFO NET/OFI Initializing aws-ofi-nccl {ofi_version}",
                  f"{pid} NCCL INFO NET/OFI Selected Provider is efa (found 32 nics)",
                  f"{pid} NCCL INFO Using network AWS Libfabric"]
    lines += ["#", "#                                                              out-of-place                       in-place          ",
              "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "]
    plateau = plateau_for(instance_type, len(hosts), False) * factor * _run_factor(rng)
    bus = BUS_FACTOR[collective](ranks)
    total = 0.0
    shape = _shape(NCCL_SAMPLE)
    for index, (size, share) in enumerate(shape):
        busbw = plateau * share * _jitter(rng, index / max(len(shape) - 1, 1))
        algbw = busbw / bus
        time_us = size / (algbw * 1e3)
        redop, root = ("sum", -1) if collective in ("all_reduce", "reduce_scatter") else ("none", -1)
        figures = f"{time_us:8.1f} {algbw:7.2f} {busbw:7.2f}      0"
        lines.append(f"{size:12d}  {size // 4:12d}     float {redop:>7s} {root:7d} {figures} {figures}")
        total += busbw
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {total / len(shape):.3f} ", "#",
              f"# Collective test concluded: {binary}", ""]
    return "\n".join(f"0: {line}" for line in lines)


def nccom_test(collective: str, addresses: list[str], *, factor: float = 1.0, ranks_per_node: int = 32,
               rng: random.Random | None = None) -> str:
    """What ``nccom-test -r <ranks> -N <nodes> -b 8 -e 1GB -f 2 <operation> --hosts …`` prints (one run)."""
    rng = rng or _random
    nodes = len(addresses)
    plateau = plateau_for("trn1.32xlarge", nodes, True) * factor * _run_factor(rng)
    ranks = nodes * ranks_per_node
    bus = BUS_FACTOR[collective](ranks)
    lines = [f"        NEURON_RT_ROOT_COMM_ID={addresses[0]}:45654 nccom-test -r {ranks} -N {nodes} -b 8 -e 1GB -f 2 "
             f"-n 50 -w 5 -d fp32 {NCCOM_OPERATION[collective]} --hosts {' '.join(addresses)}",
             "               size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)"]
    total = 0.0
    shape = _shape(NCCOM_SAMPLE)
    for index, (size, share) in enumerate(shape):
        busbw = plateau * share * _jitter(rng, index / max(len(shape) - 1, 1))
        algbw = busbw / bus
        time_us = max(size / (algbw * 1e3), 520.0) if algbw else 520.0
        lines.append(f"{size:22d}{size // 4:16d}    fp32{time_us:12.0f}{algbw:15.2f}{busbw:15.2f}")
        total += busbw
    lines.append(f"        Avg bus bandwidth:      {total / len(shape):.4f}GB/s")
    return "\n".join(lines) + "\n"
