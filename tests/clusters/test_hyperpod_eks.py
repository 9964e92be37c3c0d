"""HyperPod on EKS: the blueprint launches to ready on the embedded endpoint with its software stack."""
from __future__ import annotations

import pytest
import yaml

from clusters import software
from clusters.choices import ClusterState, JobStatus
from portal.aws import client as aws_client
from tests.clusters.factories_clusters import launched_cluster, run_pipeline

pytestmark = pytest.mark.django_db


def test_a_full_stack_eks_launch_reaches_ready_with_its_eks_cluster_and_manifests(world, aws):
    cluster = launched_cluster(world.org_a, name="eks-main", blueprint="hyperpod-eks")
    job = run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.log
    assert cluster.state == ClusterState.READY and cluster.orchestrator == "hyperpod-eks"
    assert [s.role for s in cluster.stacks.order_by("order")] == ["network", "storage", "cluster"]
    eks = aws_client("eks", organization=world.org_a).describe_cluster(name="eks-main-eks")["cluster"]
    assert eks["arn"] == cluster.outputs["EksClusterArn"] and eks["status"] == "ACTIVE"
    assert len(eks["resourcesVpcConfig"]["subnetIds"]) == 2
    hyperpod = aws_client("sagemaker", organization=world.org_a).describe_cluster(ClusterName="eks-main")
    assert hyperpod["ClusterArn"] == cluster.outputs["ClusterArn"]
    bucket = cluster.outputs["BucketName"]
    s3 = aws_client("s3", organization=world.org_a)
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="geniac/eks-main/")["Contents"]}
    assert "geniac/eks-main/lifecycle/on_create_eks.sh" in keys
    assert "geniac/eks-main/kubernetes/nccl-tests-mpijob.yaml" in keys
    pv = list(yaml.safe_load_all(s3.get_object(Bucket=bucket, Key="geniac/eks-main/kubernetes/fsx-lustre.yaml")["Body"].read()))
    volume = next(d for d in pv if d["kind"] == "PersistentVolume")
    assert volume["spec"]["csi"]["volumeHandle"] == cluster.outputs["LustreFileSystemId"]
    assert volume["spec"]["csi"]["volumeAttributes"]["mountname"] == cluster.outputs["LustreMountName"]
    assert cluster.software_version == software.CURRENT_VERSION


def test_an_orchestrator_naming_no_eks_cluster_is_refused_by_the_endpoint(world, aws):
    from moto.cloudformation.exceptions import ValidationError

    from clusters.aws import moto_eks

    with pytest.raises(ValidationError, match="does not exist"):
        moto_eks.check_orchestrator({"Orchestrator": {"Eks": {"ClusterArn": "arn:aws:eks:ap-northeast-1:123456789012:cluster/none"}}},
                                    "123456789012", "ap-northeast-1")
    with pytest.raises(ValidationError, match="EKS cluster ARN"):
        moto_eks.check_orchestrator({"Orchestrator": {"Eks": {"ClusterArn": "nope"}}}, "123456789012", "ap-northeast-1")
    moto_eks.check_orchestrator({}, "123456789012", "ap-northeast-1")  # Slurm: nothing to check


def test_the_eks_bundle_renders_every_placeholder_and_sizes_the_mpijob():
    inputs = {"ClusterName": "e1", "WorkerInstanceType": "ml.p5.48xlarge", "WorkerCount": "4",
              "LustreFileSystemId": "fs-0123456789abcdef0", "LustreDnsName": "fs-1.fsx", "LustreMountName": "abc"}
    files = software.kubernetes_objects(inputs, region="us-east-1", remote_write_url="https://aps/w/api/v1/remote_write",
                                        cluster_id=9)
    for name, body in files.items():
        assert b"{{" not in body, name
        if name.endswith(".yaml"):
            list(yaml.safe_load_all(body))
    job = yaml.safe_load(files["nccl-tests-mpijob.yaml"])
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]
    assert job["kind"] == "MPIJob" and worker["replicas"] == 4
    limits = worker["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}
    agent = yaml.safe_load(files["prometheus-agent.values.yaml"])["server"]
    assert agent["remoteWrite"] == [{"url": "https://aps/w/api/v1/remote_write", "sigv4": {"region": "us-east-1"}}]
    assert agent["global"]["external_labels"] == {"cluster": "e1", "geniac_cluster_id": "9"}
    counters = yaml.safe_load(files["dcgm-counters-configmap.yaml"])["data"]["dcgm-counters.csv"]
    assert "DCGM_FI_DEV_THERMAL_VIOLATION" in counters
    trn = software.kubernetes_objects({**inputs, "WorkerInstanceType": "ml.trn1.32xlarge"}, region="us-east-1")
    assert "nccl-tests-mpijob.yaml" not in trn  # Trainium validates with nccom-test
    assert yaml.safe_load(trn["prometheus-agent.values.yaml"])["server"]["remoteWrite"] == []
    with pytest.raises(ValueError, match="LustreFileSystemId is missing"):
        software.kubernetes_objects({"ClusterName": "e1"}, region="us-east-1")


def test_the_eks_cluster_shows_on_the_board_and_its_health_page(client, world, aws):
    from django.urls import reverse

    cluster = launched_cluster(world.org_a, name="eks-board", blueprint="hyperpod-eks")
    run_pipeline(cluster.jobs.get())
    client.force_login(world.lead_a)
    board = client.get(reverse("clusters:launch_day"))
    assert board.status_code == 200 and b"1 cluster \xc2\xb7 nothing in progress" in board.content
    listed = client.get(reverse("clusters:cluster_list"))
    assert b"eks-board" in listed.content
    page = client.get(reverse("clusters:cluster_detail", args=[cluster.pk]))
    assert b"eks-board" in page.content and software.CURRENT_VERSION.encode() in page.content
    health = client.get(reverse("health:cluster_health", args=[cluster.pk]))
    assert health.status_code == 200 and b"eks-board" in health.content
