"""Demo health: one report per GPU cluster through the real ingestion service, every node in it (one cluster
with an XID 79 node and a missing GPU), a passing NCCL run on one cluster and a socket fallback on another.
Idempotent: a cluster that already has a report or a run is left alone."""
from __future__ import annotations

import re
from pathlib import Path

from clusters.choices import ClusterState
from clusters.health import demo_slurm, services
from clusters.health.choices import Source
from clusters.health.models import HealthReport, ValidationRun
from clusters.models import Cluster

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


def seed(context: dict) -> dict:
    clusters = _clusters(context)
    reported = set(HealthReport.objects.filter(cluster__in=clusters).values_list("cluster_id", flat=True))
    # The samples are H100 (dcgm-exporter) scrapes: a Trainium cluster gets none rather than "GPU model mismatch".
    gpu_clusters = [c for c in clusters if not c.instance_type.removeprefix("ml.").startswith("trn")]
    for index, cluster in enumerate(gpu_clusters):
        if cluster.pk not in reported:
            services.ingest(cluster, _scrape(cluster, faulty=index == 0, hosts=demo_slurm.learn(cluster)), Source.PUSH)
    validated = set(ValidationRun.objects.filter(cluster__in=clusters).values_list("cluster_id", flat=True))
    runs = (("nccl_allreduce_2xp5_efa_srun.txt", "Acceptance run after launch."),
            ("nccl_allreduce_2xp5_socket_srun.txt", "First run: aws-ofi-nccl plugin not on LD_LIBRARY_PATH."))
    # Made once: clusters later seeders add (the accounting ones) sort among these on a second seed.
    for cluster, (name, notes) in zip([] if validated else clusters, runs, strict=False):
        text = _sample(name)
        services.store_validation(cluster, text, services.parse_validation(cluster, text), notes=notes)
    context["health_clusters"] = clusters
    return context
