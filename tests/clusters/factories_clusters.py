"""Factories for the launch pipeline: clusters with their stacks, jobs and events, in real shapes."""
from __future__ import annotations

import time
import uuid

import factory
from django.utils import timezone
from factory.django import DjangoModelFactory

from clusters.choices import ClusterState, JobStatus
from clusters.launches import service as launch
from clusters.models import Cluster, StackEvent
from tests.factories import OrganizationFactory

READY_OUTPUTS = {
    "VpcId": "vpc-0a1b2c3d4e5f60718", "PublicSubnetId": "subnet-0a1b2c3d4e5f60719",
    "PrivateSubnetId": "subnet-0a1b2c3d4e5f6071a", "SecurityGroupId": "sg-0a1b2c3d4e5f6071b",
    "PlacementGroupName": "geniac-pg", "LustreFileSystemId": "fs-0a1b2c3d4e5f6071c",
    "LustreDnsName": "fs-0a1b2c3d4e5f6071c.fsx.ap-northeast-1.amazonaws.com", "LustreMountName": "abcdefgh",
    "HeadNodeIp": "203.0.113.10", "ClusterName": "demo", "BucketName": "sagemaker-geniac-0a1b2c3d",
}


class ClusterFactory(DjangoModelFactory):
    class Meta:
        model = Cluster

    organization = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"cluster-{n}")
    instance_type = "p5.48xlarge"
    node_count = 2
    region = "ap-northeast-1"


class StackEventFactory(DjangoModelFactory):
    class Meta:
        model = StackEvent

    event_id = factory.LazyFunction(lambda: str(uuid.uuid4()))
    timestamp = factory.LazyFunction(timezone.now)
    logical_id = "Vpc"
    resource_type = "AWS::EC2::VPC"
    status = "CREATE_COMPLETE"


def launched_cluster(org, *, name: str, blueprint: str = "parallelcluster", full_stack: bool = True,
                     count: int = 2, instance_type: str = "p5.48xlarge", **fields) -> Cluster:
    """A cluster written the way the launch form writes it (scheduled, stacks, a pending job)."""
    params = {"cluster": {"ComputeInstanceType": instance_type, "ComputeMaxCount": str(count)}}
    if blueprint in ("hyperpod", "hyperpod-eks"):
        params = {"cluster": {"WorkerInstanceType": f"ml.{instance_type}", "WorkerCount": str(count)}}
    if full_stack:
        params["network"] = {"AvailabilityZone": "ap-northeast-1a"}
        params["storage"] = {"CreateHomeFileSystem": "true"}
    params["cluster"]["ClusterName"] = name
    cluster, _job = launch.create_launch(organization=org, name=name, blueprint_slug=blueprint,
                                         full_stack=full_stack, region=org.home_region, parameters=params)
    if fields:
        Cluster.objects.filter(pk=cluster.pk).update(**fields)
        cluster.refresh_from_db()
    return cluster


def ready_cluster(org, *, name: str, **fields) -> Cluster:
    """A ready cluster with realistic outputs, as if its launch had finished."""
    cluster = launched_cluster(org, name=name)
    for stack in cluster.stacks.all():
        stack.status, stack.resources_done = "CREATE_COMPLETE", stack.resources_total
        stack.stack_id = f"arn:aws:cloudformation:{org.home_region}:123456789012:stack/{stack.stack_name}/{uuid.uuid4()}"
        stack.save()
    cluster.jobs.update(status=JobStatus.SUCCEEDED, started=timezone.now(), finished=timezone.now(), dispatched_at=timezone.now())
    Cluster.objects.filter(pk=cluster.pk).update(state=ClusterState.READY, outputs=READY_OUTPUTS,
                                                 stack_status="cluster: CREATE_COMPLETE", **fields)
    cluster.refresh_from_db()
    return cluster


def deploy(cluster: Cluster, parameters: dict) -> Cluster:
    """``cluster`` launched with ``parameters`` through the pipeline against the embedded endpoint, until ready."""
    cluster.parameters = parameters
    cluster.save()
    for stack in cluster.stacks.all():
        stack.parameters = parameters.get(stack.role, {})
        stack.save()
    run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.READY, cluster.error_message
    return cluster


def run_pipeline(job, limit: int = 20):
    """Step the launch job through the pipeline (against the embedded endpoint) until it is done; the job reloaded."""
    from clusters.launches.pipeline import steps as pipeline

    for _ in range(limit):
        if pipeline.step(job.pk) == pipeline.DONE:
            break
    job.refresh_from_db()
    return job


def finished_invocation(cluster, node: str, command_id: str):
    """An SSM invocation read as the portal reads it: again until it has finished (SSM shows a new invocation a
    moment after SendCommand, Pending until then), bounded."""
    from clusters.health.validation import headnode  # deferred: only the tests that run commands on a head node need it

    result = headnode.invocation(cluster, node, command_id)
    for _ in range(20):
        if result.finished:
            break
        time.sleep(0.2)
        result = headnode.invocation(cluster, node, command_id)
    return result
