"""Factories for clusters and their health rows."""
from pathlib import Path

import factory
from django.utils import timezone
from factory.django import DjangoModelFactory

from clusters.health.models import AgentWorkItem, GpuFault, ValidationRun
from tests.clusters.factories_clusters import ClusterFactory as BaseClusterFactory

DATA = Path(__file__).resolve().parents[1] / "data"


def sample(name: str) -> str:
    return (DATA / name).read_text()


class ClusterFactory(BaseClusterFactory):
    """Health tests start from a ready cluster."""

    state = "ready"


class GpuFaultFactory(DjangoModelFactory):
    class Meta:
        model = GpuFault

    cluster = factory.SubFactory(ClusterFactory)
    hostname = factory.Sequence(lambda n: f"ip-10-0-0-{n}")
    gpu = "2"
    kind = "xid"
    xid = 79
    severity = "critical"
    severity_rank = 2
    verdict = "reboot"
    meaning = "XID 79: GPU has fallen off the bus"
    action = "reboot the node; replace it if it recurs"
    first_seen = factory.LazyFunction(timezone.now)
    last_seen = factory.LazyFunction(timezone.now)


def validation_run(cluster, name="nccl_allreduce_2xp5_efa_srun.txt", notes="", user=None) -> ValidationRun:
    from clusters.health.ingest import service as services

    text = sample(name)
    result = services.parse_validation(cluster, text)
    return services.store_validation(cluster, text, result, user=user, notes=notes)


class AgentWorkItemFactory(DjangoModelFactory):
    """Work for a HyperPod Slurm controller's agent (the node listing by default)."""

    class Meta:
        model = AgentWorkItem

    cluster = factory.SubFactory(ClusterFactory, orchestrator="hyperpod")
    kind = "nodes"
    payload = factory.LazyFunction(dict)
