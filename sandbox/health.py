"""Demo health: one report per cluster through the real ingestion service, every node in it (one cluster with an
XID 79 node and a missing GPU; a Trainium cluster with neuron-monitor's NeuronCore utilization and its EFA devices),
a passing NCCL run on one cluster and a socket fallback on another.
Idempotent: a cluster that already has a report or a run is left alone."""
from __future__ import annotations

import re
from pathlib import Path

from clusters.choices import ClusterState
from clusters.health.choices import Source
from clusters.health.ingest import service as services
from clusters.health.models import HealthReport, ValidationRun
from clusters.models import Cluster
from sandbox import slurm as demo_slurm

SAMPLES = Path(__file__).resolve().parent / "demo_samples"
FALLBACK_CLUSTERS = (("kotoba-labs", "kotoba-p5-main", 2), ("sakura-vision", "sakura-p5-eval", 2))


def _sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def _clusters(context) -> list[Cluster]:
    clusters = list(Cluster.objects.filter(state=ClusterState.READY).select_related("organization")
                    .order_by("organization__name", "name"))
    if clusters:
        return clusters
    orgs = context.get("organizations", {})
    for slug, name, nodes in FALLBACK_CLUSTERS:
        org = orgs.get(slug)
        if org is None:
            continue
        cluster, _ = Cluster.objects.get_or_create(
            organization=org, name=name,
            defaults={"instance_type": "p5.48xlarge", "node_count": nodes, "state": ClusterState.READY,
                      "region": org.home_region},
        )
        clusters.append(cluster)
    return clusters


def _body(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))


def _scrape(cluster: Cluster, faulty: bool, hosts: list[str] | None = None) -> str:
    """Every node of the cluster with its EFA devices: -12 healthy, -13 with XID 79 and a missing GPU when
    ``faulty``, and the others (-14, …) healthy copies of -12 with GPUs of their own, so the health page does not
    read "14 nodes not reporting" on a 16-node cluster. ``hosts``, the cluster's own hostnames in Slurm's order
    (``demo_slurm.learn``), name the nodes when there are enough of them."""
    healthy = _sample("dcgm_p5_healthy.prom")
    second = _sample("dcgm_p5_xid79_missing_gpu.prom") if faulty else healthy.replace("ip-10-1-45-12", "ip-10-1-45-13")
    efa = _sample("efa_p5_two_nodes.prom")
    efa_node = "".join(line for line in _body(efa).splitlines(keepends=True) if 'instance="ip-10-1-45-12:' in line)
    parts = [healthy, _body(second), efa]
    for index in range(2, max(2, cluster.node_count)):
        host = f"ip-10-1-45-{12 + index}"
        gpus = re.sub(r'UUID="GPU-[0-9a-f]{8}', f'UUID="GPU-{index:08x}', _body(healthy))
        parts += [gpus.replace("ip-10-1-45-12", host), efa_node.replace("ip-10-1-45-12", host)]
    text = "".join(parts)
    if hosts and len(hosts) >= max(2, cluster.node_count):
        return re.sub(r"ip-10-1-45-(\d+)\b", lambda match: hosts[int(match.group(1)) - 12], text)
    prefix = f"ip-10-{cluster.pk % 250}-45-"
    return text.replace("ip-10-1-45-", prefix)


def _efa_lines(host: str, devices: int | None = None) -> str:
    """The EFA exporter's series of one node (the sample's first node renamed), its first ``devices`` devices."""
    lines = [line for line in _body(_sample("efa_p5_two_nodes.prom")).splitlines(keepends=True)
             if 'instance="ip-10-1-45-12:' in line]
    if devices is not None:
        names = sorted({m.group(1) for m in map(_DEVICE.search, lines) if m}, key=lambda d: int(d[5:-2]))[:devices]
        lines = [line for line in lines if (m := _DEVICE.search(line)) and m.group(1) in names]
    return "".join(lines).replace("ip-10-1-45-12", host)


_DEVICE = re.compile(r'device="(rdmap\d+s0)"')


def is_trainium(cluster: Cluster) -> bool:
    return cluster.instance_type.removeprefix("ml.").startswith("trn")


def trainium_scrape(hosts: list[str], utilization: float = 0.91) -> str:
    """What a Trainium node's exporters send, as the portal reads them: neuron-monitor's NeuronCore utilization
    (``neuroncore_utilization_ratio``, 32 NeuronCores on trn1.32xlarge) and the EFA exporter's 8 devices."""
    header = ("# HELP neuroncore_utilization_ratio NeuronCore utilization\n"
              "# TYPE neuroncore_utilization_ratio gauge\n")
    parts = [header]
    for host in hosts:
        parts += [f'neuroncore_utilization_ratio{{instance="{host}:8000",instance_type="trn1.32xlarge",'
                  f'neuroncore="{core}"}} {utilization - core % 4 * 0.01:.2f}\n' for core in range(32)]
    efa = _sample("efa_p5_two_nodes.prom")
    parts.append("".join(line for line in efa.splitlines(keepends=True) if line.startswith("#")))
    parts += [_efa_lines(host, devices=8) for host in hosts]
    return "".join(parts)


def nodes_scrape(hosts: list[str], faulty: set[str], *, efa: bool = True) -> str:
    """One exposition of the named P5 nodes as they stand: the healthy sample with GPUs of their own, or the
    XID 79 / missing-GPU one for a node in ``faulty``; with their EFA devices when ``efa``."""
    healthy, bad = _sample("dcgm_p5_healthy.prom"), _sample("dcgm_p5_xid79_missing_gpu.prom")
    parts = []
    for index, host in enumerate(hosts):
        if host in faulty:
            text = bad.replace("ip-10-1-45-13", host)
        else:
            text = re.sub(r'UUID="GPU-[0-9a-f]{8}', f'UUID="GPU-{index:08x}', healthy).replace("ip-10-1-45-12", host)
        parts.append(text if not index else _body(text))
    if efa and hosts:
        parts.append("".join(line for line in _sample("efa_p5_two_nodes.prom").splitlines(keepends=True)
                             if line.startswith("#")))
        parts += [_efa_lines(host) for host in hosts]
    return "".join(parts)


def _trainium_hosts(cluster: Cluster) -> list[str]:
    return demo_slurm.learn(cluster) or [f"ip-10-{cluster.pk % 250}-47-{10 + i}" for i in range(cluster.node_count)]


def seed(context: dict) -> dict:
    clusters = _clusters(context)
    reported = set(HealthReport.objects.filter(cluster__in=clusters).values_list("cluster_id", flat=True))
    # The DCGM samples are H100 scrapes: a Trainium cluster reports what neuron-monitor and the EFA exporter send.
    gpu_clusters = [c for c in clusters if not is_trainium(c)]
    for index, cluster in enumerate(gpu_clusters):
        if cluster.pk not in reported:
            services.ingest(cluster, _scrape(cluster, faulty=index == 0, hosts=demo_slurm.learn(cluster)), Source.PUSH)
    for cluster in clusters:
        if is_trainium(cluster) and cluster.pk not in reported:
            services.ingest(cluster, trainium_scrape(_trainium_hosts(cluster)), Source.PUSH)
    validated = set(ValidationRun.objects.filter(cluster__in=clusters).values_list("cluster_id", flat=True))
    runs = (("nccl_allreduce_2xp5_efa_srun.txt", "Acceptance run after launch."),
            ("nccl_allreduce_2xp5_socket_srun.txt", "First run: aws-ofi-nccl plugin not on LD_LIBRARY_PATH."))
    # Made once: clusters later seeders add (the accounting ones) sort among these on a second seed.
    for cluster, (name, notes) in zip([] if validated else clusters, runs, strict=False):
        text = _sample(name)
        services.store_validation(cluster, text, services.parse_validation(cluster, text), notes=notes)
    context["health_clusters"] = clusters
    return context
