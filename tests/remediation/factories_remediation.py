"""Remediation tests start from a ready HyperPod cluster that exists in the embedded endpoint, with a health report
naming its nodes as the emulation does (``ip-10-1-0-10`` …), one of them faulty (XID 79, a missing GPU)."""
from __future__ import annotations

from factory.django import DjangoModelFactory

from clusters.health.ingest import service as health
from clusters.remediation.models import RemediationPolicy
from portal.core.aws import client as aws_client
from tests.clusters.factories_clusters import READY_OUTPUTS
from tests.health.factories_health import ClusterFactory, sample

FAULTY = "ip-10-1-0-10"


class RemediationPolicyFactory(DjangoModelFactory):
    class Meta:
        model = RemediationPolicy

    mode = "approval"
    max_nodes = 1
    cooldown_hours = 24


def faulty_report(cluster, host: str = FAULTY):
    return health.ingest(cluster, sample("dcgm_p5_xid79_missing_gpu.prom").replace("ip-10-1-45-13", host), "push")


def clean_report(cluster, host: str = FAULTY):
    return health.ingest(cluster, sample("dcgm_p5_healthy.prom").replace("ip-10-1-45-12", host), "push")


def hyperpod_cluster(org, name: str = "hp-fix", nodes: int = 4, *, in_endpoint: bool = True, **fields):
    """A ready HyperPod cluster of ``org``; with ``in_endpoint`` it also exists in the embedded endpoint."""
    cluster = ClusterFactory(organization=org, name=name, orchestrator="hyperpod", node_count=nodes,
                             instance_type="p5.48xlarge", outputs={**READY_OUTPUTS, "ClusterName": name}, **fields)
    if in_endpoint:
        sm = aws_client("sagemaker", organization=org, region=cluster.region)
        sm.create_cluster(ClusterName=name, InstanceGroups=[{
            "InstanceGroupName": "worker-group-1", "InstanceType": "ml.p5.48xlarge", "InstanceCount": nodes,
            "LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-lifecycle/", "OnCreate": "on_create.sh"},
            "ExecutionRole": "arn:aws:iam::123456789012:role/hp", "ThreadsPerCore": 1}])
    faulty_report(cluster)
    return cluster


