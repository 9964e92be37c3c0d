"""Demo health: one report per cluster through the real ingestion service (one cluster with an
XID 79 node and a missing GPU), a passing NCCL run on one cluster and a socket fallback on another.
Idempotent: a cluster that already has a report or a run is left alone."""
from __future__ import annotations

from pathlib import Path

from clusters.choices import ClusterState
from clusters.health import services
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


def _scrape(cluster: Cluster, faulty: bool) -> str:
    """Two nodes (-12 healthy, -13 with XID 79 and a missing GPU when ``faulty``) with their EFA devices."""
    healthy = _sample("dcgm_p5_healthy.prom")
    second = _sample("dcgm_p5_xid79_missing_gpu.prom") if faulty else healthy.replace("ip-10-1-45-12", "ip-10-1-45-13")
    second = "".join(line for line in second.splitlines(keepends=True) if not line.startswith("#"))
    prefix = f"ip-10-{cluster.pk % 250}-45-"
    return (healthy + second + _sample("efa_p5_two_nodes.prom")).replace("ip-10-1-45-", prefix)


def seed(context: dict) -> dict:
    clusters = _clusters(context)
    reported = set(HealthReport.objects.filter(cluster__in=clusters).values_list("cluster_id", flat=True))
    for index, cluster in enumerate(clusters):
        if cluster.pk not in reported:
            services.ingest(cluster, _scrape(cluster, faulty=index == 0), Source.PUSH)
    validated = set(ValidationRun.objects.filter(cluster__in=clusters).values_list("cluster_id", flat=True))
    runs = (("nccl_allreduce_2xp5_efa_srun.txt", "Acceptance run after launch."),
            ("nccl_allreduce_2xp5_socket_srun.txt", "First run: aws-ofi-nccl plugin not on LD_LIBRARY_PATH."))
    for cluster, (name, notes) in zip(clusters, runs, strict=False):
        if cluster.pk in validated:
            continue
        text = _sample(name)
        services.store_validation(cluster, text, services.parse_validation(cluster, text), notes=notes)
    context["health_clusters"] = clusters
    return context
