"""Prometheus text for a P5 cluster of known health and utilization, for the accounting tests and the bench."""
from __future__ import annotations

MODEL = "NVIDIA H100 80GB HBM3"


def p5_scrape(nodes: int, *, busy: float, unhealthy: int = 0, gpus: int = 8, efa_bytes: int | None = None) -> str:
    """``nodes`` hosts of ``gpus`` GPUs at ``busy`` (0..1) graphics engine activity; the first ``unhealthy``
    hosts report XID 79 (GPU fallen off the bus: reboot) on GPU 0. With ``efa_bytes``, each host's 32 EFA devices
    (as the EFA node exporter names them) report that many RDMA bytes read and written between them, and no
    errors."""
    lines = ["# TYPE DCGM_FI_DEV_XID_ERRORS gauge", "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge"]
    for n in range(nodes):
        host = f"ip-10-0-0-{n}"
        for g in range(gpus):
            labels = f'gpu="{g}",UUID="GPU-{n:04d}-{g:04d}",modelName="{MODEL}",Hostname="{host}"'
            lines.append(f"DCGM_FI_DEV_XID_ERRORS{{{labels}}} {79 if n < unhealthy and g == 0 else 0}")
            lines.append(f"DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{labels}}} {busy}")
    if efa_bytes is not None:
        for family, value in (("rdma_read_bytes", efa_bytes // 64), ("rdma_write_bytes", efa_bytes // 64),
                              ("rdma_read_wr_err", 0), ("rx_drops", 0)):
            lines.append(f"# TYPE node_amazonefa_{family} counter")
            for n in range(nodes):
                lines += [f'node_amazonefa_{family}{{device="rdmap{d}s0",instance="ip-10-0-0-{n}:9109",port="1"}} '
                          f"{value}" for d in range(32)]
    return "\n".join(lines) + "\n"
