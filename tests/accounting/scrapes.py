"""Prometheus text for a P5 cluster of known health and utilization, for the accounting tests and the bench."""
from __future__ import annotations

MODEL = "NVIDIA H100 80GB HBM3"


def p5_scrape(nodes: int, *, busy: float, unhealthy: int = 0, gpus: int = 8) -> str:
    """``nodes`` hosts of ``gpus`` GPUs at ``busy`` (0..1) graphics engine activity; the first ``unhealthy``
    hosts report XID 79 (GPU fallen off the bus: reboot) on GPU 0."""
    lines = ["# TYPE DCGM_FI_DEV_XID_ERRORS gauge", "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge"]
    for n in range(nodes):
        host = f"ip-10-0-0-{n}"
        for g in range(gpus):
            labels = f'gpu="{g}",UUID="GPU-{n:04d}-{g:04d}",modelName="{MODEL}",Hostname="{host}"'
            lines.append(f"DCGM_FI_DEV_XID_ERRORS{{{labels}}} {79 if n < unhealthy and g == 0 else 0}")
            lines.append(f"DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{labels}}} {busy}")
    return "\n".join(lines) + "\n"
