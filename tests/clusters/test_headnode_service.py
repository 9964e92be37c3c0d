"""Submitting a validation job on a cluster's head node through the portal's AWS client."""

import pytest

from clusters.choices import StackRole
from clusters.health.validation import headnode
from clusters.software import release
from portal.core import aws as portal_aws
from sandbox.aws import moto_sbatch
from tests.clusters.factories_clusters import finished_invocation, ready_cluster
from tests.clusters.test_moto_headnode import _parallelcluster

pytestmark = pytest.mark.django_db


def test_sbatch_on_the_head_node_found_from_the_cluster_stack(world, aws, settings, monkeypatch):
    monkeypatch.setattr(moto_sbatch, "JOB_SECONDS", 60)  # nothing to post to here: the job stays queued

    cluster = ready_cluster(world.org_a, name="llm-train", region="ap-northeast-1")

    def client(service):  # the organization's account, as the portal reaches it
        return portal_aws.client(service, organization=cluster.organization, region="ap-northeast-1")

    outputs = _parallelcluster(client)
    cluster.stacks.filter(role=StackRole.CLUSTER).update(stack_name="pc", stack_id="")
    node = headnode.target(cluster)
    assert node == outputs["HeadNodeInstanceId"]
    script = release.validation_script(upload_url="http://portal.invalid/x/", upload_token="gv1.s")
    command_id = headnode.send(cluster, node, [headnode.sbatch_command(script)], comment="validation 1")
    result = finished_invocation(cluster, node, command_id)
    assert (result.status, result.exit_status) == ("Success", 0)
    job_id = headnode.slurm_job_id(result.stdout)
    assert job_id is not None
    queued = finished_invocation(cluster, node, headnode.send(cluster, node, [f"squeue --noheader -j {job_id}"]))
    assert queued.stdout.startswith(f"{job_id}|geniac-validation|PENDING|")


def test_a_missing_stack_is_an_aws_error(world, aws):
    cluster = ready_cluster(world.org_a, name="gone", region="ap-northeast-1")
    cluster.stacks.filter(role=StackRole.CLUSTER).update(stack_name="no-such-stack", stack_id="")
    with pytest.raises(portal_aws.AwsError):
        headnode.target(cluster)


def test_sbatch_output_parsing():
    assert headnode.slurm_job_id("1234\n") == "1234"
    assert headnode.slurm_job_id("Submitted batch job 77\n") == "77"
    assert headnode.slurm_job_id("1234;parallelcluster\n") == "1234"
    assert headnode.slurm_job_id("") is None
