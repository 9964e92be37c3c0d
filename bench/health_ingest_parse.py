"""How much the health summary costs on top of prometheus_client's own parser.

Builds, in memory, one scrape of N p5.48xlarge nodes (default 2,000: 16,000 GPUs with
dcgm-exporter's default counters plus the health counters, and 32 EFA devices per node),
with a few deterministic faults. Times the parser alone (consuming every family and
sample: the floor) and ``summarize`` on the same text, median of R runs each, and prints
both with their ratio. The goal is a ratio of at most 1.5.

    python bench/health_ingest_parse.py [--nodes 2000] [--runs 3]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prometheus_client.parser import text_string_to_metric_families

from clusters.health.readers.prometheus import parse_families
from clusters.health.readers.summary import summarize

BUS = ("53", "64", "75", "86", "97", "A8", "B9", "CA")
GAUGES = (
    "SM_CLOCK", "MEM_CLOCK", "MEMORY_TEMP", "GPU_TEMP", "POWER_USAGE", "GPU_UTIL", "MEM_COPY_UTIL", "ENC_UTIL",
    "DEC_UTIL", "XID_ERRORS", "FB_FREE", "FB_USED", "VGPU_LICENSE_STATUS", "ROW_REMAP_FAILURE",
)
COUNTERS = (
    "TOTAL_ENERGY_CONSUMPTION", "PCIE_REPLAY_COUNTER", "UNCORRECTABLE_REMAPPED_ROWS", "CORRECTABLE_REMAPPED_ROWS",
    "THERMAL_VIOLATION", "POWER_VIOLATION", "ECC_DBE_VOL_TOTAL", "ECC_SBE_VOL_TOTAL",
)
PROF = ("GR_ENGINE_ACTIVE", "PIPE_TENSOR_ACTIVE", "DRAM_ACTIVE", "PCIE_TX_BYTES", "PCIE_RX_BYTES")
EFA = (
    "tx_bytes", "rx_bytes", "tx_pkts", "rx_pkts", "rx_drops", "rdma_read_bytes", "rdma_write_bytes",
    "rdma_read_wr_err", "rdma_write_wr_err", "retrans_pkts", "retrans_timeout_events",
    "impaired_remote_conn_events", "unresponsive_remote_events",
)


def build(nodes: int) -> str:
    """One federated scrape: every family once, holding all nodes' series."""
    hosts = [f"ip-10-{1 + i // 62500}-{(i // 250) % 250}-{i % 250}" for i in range(nodes)]
    gpu_labels = []
    for n, host in enumerate(hosts):
        for g in range(8):
            if n % 397 == 5 and g == 3:  # a GPU that fell off the bus: no series at all
                continue
            uuid = f"GPU-{n:08x}-{g:04x}-4c1d-9a7e-{n * 8 + g:012x}"
            gpu_labels.append((n, g, (f'gpu="{g}",UUID="{uuid}",pci_bus_id="00000000:{BUS[g]}:00.0",device="nvidia{g}",'
                                     f'modelName="NVIDIA H100 80GB HBM3",Hostname="{host}",'
                                     'DCGM_FI_DRIVER_VERSION="550.127.08"')))
    out: list[str] = []
    families = [(f"DCGM_FI_DEV_{m}", "gauge") for m in GAUGES] + [(f"DCGM_FI_DEV_{m}", "counter") for m in COUNTERS]
    families += [(f"DCGM_FI_PROF_{m}", "gauge") for m in PROF]
    for name, kind in families:
        out.append(f"# HELP {name} {name.lower()}.\n# TYPE {name} {kind}\n")
        for n, g, labels in gpu_labels:
            out.append(f"{name}{{{labels}}} {_dcgm_value(name, n, g)}\n")
    devices = [f"rdmap{79 + d}s0" for d in range(32)]
    for metric in EFA:
        name = f"node_amazonefa_{metric}"
        out.append(f"# HELP {name} {metric}.\n# TYPE {name} counter\n")
        fault = metric in ("rdma_read_wr_err", "rx_drops")
        for n, host in enumerate(hosts):
            for d, device in enumerate(devices):
                value = (n + d) % 5 if fault and n % 101 == 7 else (0 if "err" in metric or "events" in metric
                                                                    else 1000003 * (n + 1) + d)
                out.append(f'{name}{{device="{device}",instance="{host}:9109",job="efa",port="1"}} {value}\n')
    return "".join(out)


def _dcgm_value(name: str, n: int, g: int) -> int | float:
    if name.endswith("XID_ERRORS"):
        return 79 if n % 331 == 11 and g == 2 else (48 if n % 509 == 3 and g == 6 else 0)
    if name.endswith("UNCORRECTABLE_REMAPPED_ROWS"):
        return 2 if n % 487 == 17 and g == 1 else 0
    if name.endswith("ROW_REMAP_FAILURE"):
        return 1 if n % 977 == 13 and g == 0 else 0
    if name.endswith("THERMAL_VIOLATION") and n % 211 == 9:
        return 9223372036854775794  # DCGM blank
    if name.endswith(("REMAPPED_ROWS", "ROW_REMAP_FAILURE", "VIOLATION", "VOL_TOTAL", "REPLAY_COUNTER")):
        return 0
    if name.endswith("GPU_TEMP"):
        return 40 + (n + g) % 30
    return (n * 8 + g) % 1000


def floor(text: str) -> int:
    """prometheus_client alone: consume every family and sample."""
    count = 0
    for family in text_string_to_metric_families(text):
        for _sample in family.samples:
            count += 1
    return count


def ours(text: str):
    return summarize(text, "p5.48xlarge")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    start = time.perf_counter()
    text = build(args.nodes)
    print(f"built {len(text) / 1e6:.0f} MB of exposition text for {args.nodes} nodes "
          f"in {time.perf_counter() - start:.1f} s", flush=True)
    # Interleave the two measurements so that load from other processes hits both alike.
    base_times, our_times = [], []
    samples, summary = 0, None
    for _ in range(args.runs):
        for func, times in ((floor, base_times), (ours, our_times)):
            gc.collect()
            start = time.perf_counter()
            result = func(text)
            times.append(time.perf_counter() - start)
            if func is floor:
                samples = result
            else:
                summary = result
    base, mine = statistics.median(base_times), statistics.median(our_times)
    families = list(text_string_to_metric_families(text))
    start = time.perf_counter()
    summarize(parse_families(families), "p5.48xlarge")
    layer = time.perf_counter() - start
    print(f"samples: {samples:,}")
    print(f"prometheus_client parser alone: {base:.2f} s (median of {args.runs}: {_fmt(base_times)})")
    print(f"parse + summarize:              {mine:.2f} s (median of {args.runs}: {_fmt(our_times)})")
    print(f"ratio: {mine / base:.3f} (goal <= 1.5)")
    print(f"summary layer alone on pre-parsed families: {layer:.2f} s")
    print(f"faults: {len(summary.faults)}, panels: {summary.panels}, healthy share: {summary.healthy_gpu_share}")


def _fmt(times: list[float]) -> str:
    return ", ".join(f"{t:.2f}" for t in times)


if __name__ == "__main__":
    main()
