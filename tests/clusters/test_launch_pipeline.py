"""The launch pipeline against the embedded endpoint: full-stack launches, adoption, delete, hyperpod."""
from __future__ import annotations

import pytest

from clusters.blueprints import catalog
from clusters.choices import ClusterJobKind, ClusterState, JobStatus
from clusters.launches.backend import LAUNCH_TAG
from clusters.models import LaunchJob
from clusters.software import release
from portal.core.aws import client as aws_client
from portal.core.models import TimelineEntry
from tests.clusters.factories_clusters import launched_cluster, run_pipeline

pytestmark = pytest.mark.django_db


def _cfn(org):
    """CloudFormation in the organization's account, through its role, as the pipeline sees it."""
    return aws_client("cloudformation", organization=org)


def test_full_stack_launch_creates_network_storage_cluster_in_order_and_wires_outputs(world, aws):
    cluster = launched_cluster(world.org_a, name="p5-main")
    job = run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.finished is not None
    assert cluster.state == ClusterState.READY
    stacks = list(cluster.stacks.order_by("order"))
    assert [s.role for s in stacks] == ["network", "storage", "cluster"]
    assert all(s.status == "CREATE_COMPLETE" for s in stacks)
    assert stacks[0].stack_name == f"geniac-alpha-labs-p5-main-network-{cluster.short_launch_id}"
    # The storage stack got the network's subnet; the cluster stack got Lustre and the subnets.
    live = _cfn(world.org_a).describe_stacks(StackName=stacks[2].stack_id)["Stacks"][0]
    params = {p["ParameterKey"]: p["ParameterValue"] for p in live["Parameters"]}
    assert params["PrivateSubnetId"] == stacks[0].outputs["PrivateSubnetId"]
    assert params["LustreFileSystemId"] == stacks[1].outputs["LustreFileSystemId"]
    assert {t["Key"]: t["Value"] for t in live["Tags"]}[LAUNCH_TAG] == str(cluster.launch_id)
    assert cluster.outputs["HeadNodeIp"] and cluster.outputs["LustreDnsName"].startswith("fs-")
    assert all(s.resources_done == s.resources_total > 0 for s in stacks)
    assert cluster.stacks.get(role="network").events.filter(status="CREATE_COMPLETE").count() == 1
    titles = list(TimelineEntry.objects.filter(organization=world.org_a).values_list("title", flat=True))
    assert "Cluster p5-main: creating → ready" in titles


def test_a_stack_created_before_a_worker_died_is_adopted_not_created_twice(world, aws):
    cluster = launched_cluster(world.org_a, name="adopt", full_stack=False,
                               blueprint="hyperpod", instance_type="trn1.32xlarge")
    cluster.parameters["cluster"].update(PrivateSubnetId="subnet-0a1b2c3d4e5f60718", SecurityGroupId="sg-0a1b2c3d4e5f60718",
                                         BucketName="sagemaker-geniac-adopt", LustreMountName="abcdefgh",
                                         LustreDnsName="fs-0a1b2c3d4e5f6071c.fsx.ap-northeast-1.amazonaws.com")
    stack = cluster.stacks.get()
    stack.parameters = cluster.parameters["cluster"]
    stack.save()
    # The earlier attempt uploaded the lifecycle scripts and its create_stack reached CloudFormation,
    # but the worker died before saving the id.
    s3 = aws_client("s3", organization=world.org_a)
    s3.create_bucket(Bucket="sagemaker-geniac-adopt", CreateBucketConfiguration={"LocationConstraint": "ap-northeast-1"})
    release.upload(s3, "sagemaker-geniac-adopt", release.bundle("hyperpod", stack.parameters, region="ap-northeast-1"))
    body = catalog.template_body("hyperpod")
    client = _cfn(world.org_a)
    client.create_stack(StackName=stack.stack_name, TemplateBody=body, Capabilities=["CAPABILITY_IAM"],
                        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in stack.parameters.items()],
                        Tags=[{"Key": LAUNCH_TAG, "Value": str(cluster.launch_id)}])
    job = run_pipeline(cluster.jobs.get())
    assert job.status == JobStatus.SUCCEEDED
    assert "adopted" in job.log
    names = [s["StackName"] for s in client.list_stacks()["StackSummaries"]]
    assert names.count(stack.stack_name) == 1
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.READY and cluster.outputs["ClusterArn"].startswith("arn:aws:sagemaker:")


def test_a_stack_under_our_name_without_our_tag_is_never_adopted(world, aws):
    cluster = launched_cluster(world.org_a, name="taken", full_stack=False, blueprint="observability")
    stack = cluster.stacks.get()
    _cfn(world.org_a).create_stack(StackName=stack.stack_name, TemplateBody=catalog.template_body("observability"),
                           Capabilities=["CAPABILITY_IAM"], Tags=[{"Key": LAUNCH_TAG, "Value": "someone-else"}])
    job = run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert cluster.state == ClusterState.FAILED and cluster.failure_reason == "name_taken"
    assert stack.stack_name in cluster.error_message


def test_delete_removes_stacks_in_reverse_order(world, aws):
    from clusters.launches import service as launch

    cluster = launched_cluster(world.org_a, name="gone")
    run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    job = launch.request_delete(cluster, confirmed=True)
    job = run_pipeline(job)
    cluster.refresh_from_db()
    assert job.kind == ClusterJobKind.DELETE and job.status == JobStatus.SUCCEEDED
    assert cluster.state == ClusterState.DELETED
    order = [line.split()[2] for line in job.log.splitlines() if line.endswith(" deleted") and "geniac-" in line]
    assert [name.split("-")[-2] for name in order] == ["cluster", "storage", "network"]
    live = [s["StackName"] for s in _cfn(world.org_a).list_stacks(StackStatusFilter=["CREATE_COMPLETE"])["StackSummaries"]]
    # (moto keeps the ParallelCluster provider's nested stack after its parent goes; AWS deletes it.)
    assert not set(cluster.stacks.values_list("stack_name", flat=True)) & set(live)


def test_a_ready_cluster_is_not_deleted_without_confirmation(world, aws):
    from clusters.launches import service as launch

    cluster = launched_cluster(world.org_a, name="keep", full_stack=False, blueprint="observability")
    run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    with pytest.raises(launch.ActionRefused, match="confirm"):
        launch.request_delete(cluster)
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.READY
    assert LaunchJob.objects.filter(cluster=cluster, kind=ClusterJobKind.DELETE).count() == 0


def test_illegal_transitions_raise(world, aws):
    from portal.core.jobs import IllegalTransition

    cluster = launched_cluster(world.org_a, name="sm")
    with pytest.raises(IllegalTransition):
        cluster.transition(ClusterState.READY)  # scheduled → ready skips creating
    cluster.transition(ClusterState.CREATING)
    cluster.transition(ClusterState.FAILED, error="boom", reason="error")
    assert cluster.error_message == "boom"
    cluster.transition(ClusterState.SCHEDULED)
    assert cluster.error_message == "" and cluster.failure_reason == ""
