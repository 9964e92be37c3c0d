"""Demo clusters: some ready, one launching (the demo worker finishes it), one failed.

With the embedded endpoint running (``settings.AWS_ENDPOINT_URL``) the ready clusters are launched
for real, stack by stack, inside the seed; without it they are recorded as ready with realistic
outputs. Idempotent: a cluster that exists is left alone.
"""
from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from clusters.choices import ClusterState, JobStatus
from clusters.launches import capacity
from clusters.launches import service as launch
from clusters.launches.pipeline import steps as pipeline
from clusters.models import Cluster, StackEvent
from clusters.software import release
from workloads.models import CapacityReservation

logger = logging.getLogger(__name__)

# (org slug, cluster name, blueprint, instance type, count, availability zone)
READY = (
    ("kotoba-labs", "kotoba-p5-pretrain", "parallelcluster", "p5.48xlarge", 16, "ap-northeast-1a"),
    ("shirakawa-ai", "shirakawa-p5-cpt", "parallelcluster", "p5.48xlarge", 32, "ap-northeast-1c"),
    ("sakura-vision", "sakura-trn1", "hyperpod", "trn1.32xlarge", 16, "us-east-1d"),
    ("minato-medical", "minato-p5", "parallelcluster", "p5.48xlarge", 8, "ap-northeast-1a"),
)
LAUNCHING = ("mirai-code", "mirai-p5-finetune", "parallelcluster", "p5.48xlarge", 4, "ap-northeast-1a")
FAILED = ("hoshi-materials", "hoshi-trn1", "hyperpod", "trn1.32xlarge", 8, "us-east-1a")
FAILED_REASON = ('Resource handler returned message: "Insufficient capacity for ml.trn1.32xlarge in us-east-1a. '
                 'Try another Availability Zone or reserve capacity." (Service: SageMaker, Status Code: 400, '
                 'Request ID: 8d1e7a3c-5b0f-4c7e-9a55-0f6f5e1a2b3c) (HandlerErrorCode: ServiceLimitExceeded)')


def _parameters(name, blueprint, instance_type, count, zone):
    if blueprint == "hyperpod":
        cluster = {"ClusterName": name, "WorkerInstanceType": f"ml.{instance_type}", "WorkerCount": str(count)}
    else:
        cluster = {"ClusterName": name, "ComputeInstanceType": instance_type, "ComputeMaxCount": str(count),
                   "ComputeMinCount": str(count)}
    return {"network": {"AvailabilityZone": zone}, "storage": {"CreateHomeFileSystem": "true"}, "cluster": cluster}


def _reservation(org, blueprint, instance_type):
    """The organization's reservation this cluster runs on: an EC2 one for ParallelCluster, a training plan for HyperPod."""
    return (CapacityReservation.objects.filter(organization=org, kind__in=capacity.kinds_for(blueprint),
                                               instance_type_name__in=(instance_type, f"ml.{instance_type}"))
            .order_by("end").first())


def create(context, spec, *, reserved=True):
    """A demo cluster written by the launch service (its blueprint, stacks and job), on its organization's
    reservation when ``reserved``; (None, None) when it exists."""
    slug, name, blueprint, instance_type, count, zone = spec
    org = context["organizations"][slug]
    if Cluster.objects.filter(organization=org, name=name).exists():
        return None, None
    lead = next(iter(context["leads"].values()))
    parameters = _parameters(name, blueprint, instance_type, count, zone)
    reservation = _reservation(org, blueprint, instance_type) if reserved else None
    if reservation is not None:
        parameters = capacity.wire(parameters, reservation, blueprint_kind=blueprint)
        zone = reservation.availability_zone
    cluster, job = launch.create_launch(organization=org, name=name, blueprint_slug=blueprint, full_stack=True,
                                        region=zone[:-1], availability_zone=zone, user=lead, parameters=parameters)
    return cluster, job


def _arn(cluster, stack) -> str:
    account = cluster.organization.aws_account_id
    return f"arn:aws:cloudformation:{cluster.region}:{account}:stack/{stack.stack_name}/{uuid.uuid4()}"


def record_ready(cluster):
    """The launch finished as the pipeline finishes it (stacks complete, outputs, ready), without the endpoint."""
    for stack in cluster.stacks.all():
        stack.stack_id = _arn(cluster, stack)
        stack.status, stack.resources_done = "CREATE_COMPLETE", stack.resources_total
        stack.save()
    suffix = uuid.uuid4().hex[:17]
    outputs = {"VpcId": f"vpc-{suffix}", "PublicSubnetId": f"subnet-{suffix[::-1]}", "PrivateSubnetId": f"subnet-{suffix}",
               "SecurityGroupId": f"sg-{suffix}", "LustreFileSystemId": f"fs-{suffix}",
               "LustreDnsName": f"fs-{suffix}.fsx.{cluster.region}.amazonaws.com", "LustreMountName": suffix[:8],
               "PlacementGroupName": f"{cluster.stacks.get(role='network').stack_name}-ClusterPlacementGroup-{suffix[:12].upper()}",
               "BucketName": f"sagemaker-geniac-{uuid.uuid4()}"}
    if cluster.orchestrator == "hyperpod":
        outputs["ClusterArn"] = f"arn:aws:sagemaker:{cluster.region}:{cluster.organization.aws_account_id}:cluster/{suffix[:12]}"
        outputs["LifecycleScriptsUri"] = f"s3://{outputs['BucketName']}/{release.prefix(cluster.name)}lifecycle/"
    else:
        outputs["HeadNodeIp"] = "203.0.113.24"
    cluster.outputs = outputs
    cluster.stack_status = "cluster: CREATE_COMPLETE"
    cluster.software_version, cluster.software_hash = release.CURRENT_VERSION, release.content_hash()
    cluster.save(update_fields=["outputs", "stack_status", "software_version", "software_hash"])
    cluster.transition(ClusterState.CREATING)
    cluster.transition(ClusterState.READY)
    cluster.jobs.update(status=JobStatus.SUCCEEDED, started=timezone.now(), finished=timezone.now(), dispatched_at=timezone.now())


def seed(context: dict) -> dict:
    for spec in READY:
        cluster, job = create(context, spec)
        if cluster is None:
            continue
        if settings.AWS_ENDPOINT_URL:
            for _ in range(10):
                if pipeline.step(job.pk) == pipeline.DONE:
                    break
            cluster.refresh_from_db()
            if cluster.state != ClusterState.READY:
                logger.warning("demo cluster %s did not launch: %s", cluster, cluster.error_message)
        else:
            record_ready(cluster)
    cluster, job = create(context, LAUNCHING)
    if cluster is not None:
        launch.dispatch_on_commit(job)
    cluster, job = create(context, FAILED, reserved=False)  # launched without its training plan: no capacity
    if cluster is not None:
        _record_failed(cluster, job)
    return context


def _record_failed(cluster, job):
    stacks = list(cluster.stacks.order_by("order"))
    now = timezone.now()
    for stack in stacks[:-1]:
        stack.stack_id = _arn(cluster, stack)
        stack.status, stack.resources_done = "CREATE_COMPLETE", stack.resources_total
        stack.save()
    last = stacks[-1]
    last.stack_id = _arn(cluster, last)
    last.status, last.status_reason = "ROLLBACK_COMPLETE", "The following resource(s) failed to create: [Cluster]."
    last.save()
    events = [
        (0, last.stack_name, "AWS::CloudFormation::Stack", "CREATE_IN_PROGRESS", "User Initiated"),
        (4, "ExecutionRole", "AWS::IAM::Role", "CREATE_COMPLETE", ""),
        (6, "Cluster", "AWS::SageMaker::Cluster", "CREATE_IN_PROGRESS", ""),
        (95, "Cluster", "AWS::SageMaker::Cluster", "CREATE_FAILED", FAILED_REASON),
        (96, last.stack_name, "AWS::CloudFormation::Stack", "ROLLBACK_IN_PROGRESS", last.status_reason),
        (130, last.stack_name, "AWS::CloudFormation::Stack", "ROLLBACK_COMPLETE", ""),
    ]
    StackEvent.objects.bulk_create([
        StackEvent(stack=last, event_id=f"{last.stack_name}-{i}", timestamp=now - timedelta(seconds=140 - at),
                   logical_id=logical, resource_type=rtype, status=status, reason=reason)
        for i, (at, logical, rtype, status, reason) in enumerate(events)])
    cluster.stack_status = "cluster: ROLLBACK_COMPLETE"
    cluster.save(update_fields=["stack_status"])
    cluster.transition(ClusterState.CREATING)
    message = f"Stack {last.stack_name} ROLLBACK_COMPLETE: Cluster (AWS::SageMaker::Cluster): {FAILED_REASON}"
    cluster.transition(ClusterState.FAILED, error=message, reason="stack_failed")
    job.status, job.error, job.finished, job.started, job.dispatched_at = JobStatus.FAILED, message, now, now, now
    job.add_log(f"failed: {message}")
    job.save()
