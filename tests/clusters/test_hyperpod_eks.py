"""HyperPod on EKS: the blueprint launches to ready on the embedded endpoint with its software stack."""
from __future__ import annotations

import base64
import re

import pytest
import yaml

from clusters.blueprints import cfn, path
from clusters.choices import ClusterState, JobStatus
from clusters.launches import kubernetes
from clusters.launches import service as launch
from clusters.launches.pipeline import steps as pipeline
from clusters.software import release
from portal.core import instance_types
from portal.core.aws import client as aws_client
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
    assert cluster.software_version == release.CURRENT_VERSION
    # The pipeline applied the stack's plain manifests through the EKS cluster's Kubernetes API.
    assert ("applied 5 objects in the EKS cluster: StorageClass/fsx-lustre (created), PersistentVolume/fsx-pv "
            "(created), PersistentVolumeClaim/fsx-claim (created), ConfigMap/geniac-dcgm-counters (created), "
            "DaemonSet/efa-exporter (created)") in job.log
    api = kubernetes.connect(cluster)
    applied = api.get("/api/v1/persistentvolumes/fsx-pv")
    assert applied["spec"]["csi"]["volumeHandle"] == cluster.outputs["LustreFileSystemId"]
    assert applied["metadata"]["managedFields"][0]["manager"] == kubernetes.FIELD_MANAGER
    claim = api.get("/api/v1/namespaces/default/persistentvolumeclaims/fsx-claim")
    assert claim["spec"]["volumeName"] == "fsx-pv"
    counters = api.get("/api/v1/namespaces/kube-system/configmaps/geniac-dcgm-counters")
    assert "DCGM_FI_DEV_THERMAL_VIOLATION" in counters["data"]["dcgm-counters.csv"]
    exporter = api.get("/apis/apps/v1/namespaces/kube-system/daemonsets/efa-exporter")
    assert exporter["spec"]["template"]["spec"]["containers"][0]["image"].endswith("efa_exporter:1.0.0")
    # The MPIJob is kept as a manifest: its resource comes with HyperPod's dependency chart (apply.sh).
    assert api.get("/apis/kubeflow.org/v2beta1/namespaces/default/mpijobs/nccl-tests") is None
    # Applying again changes nothing but the resource version.
    assert [api.apply(o) for o in kubernetes.manifests(cluster)] == ["configured"] * 5


def test_an_orchestrator_naming_no_eks_cluster_is_refused_by_the_endpoint(world, aws):
    from moto.cloudformation.exceptions import ValidationError

    from sandbox.aws import moto_eks

    with pytest.raises(ValidationError, match="does not exist"):
        moto_eks.check_orchestrator({"Orchestrator": {"Eks": {"ClusterArn": "arn:aws:eks:ap-northeast-1:123456789012:cluster/none"}}},
                                    "123456789012", "ap-northeast-1")
    with pytest.raises(ValidationError, match="EKS cluster ARN"):
        moto_eks.check_orchestrator({"Orchestrator": {"Eks": {"ClusterArn": "nope"}}}, "123456789012", "ap-northeast-1")
    moto_eks.check_orchestrator({}, "123456789012", "ap-northeast-1")  # Slurm: nothing to check


def test_the_eks_bundle_renders_every_placeholder_and_sizes_the_mpijob():
    inputs = {"ClusterName": "e1", "WorkerInstanceType": "ml.p5.48xlarge", "WorkerCount": "4",
              "LustreFileSystemId": "fs-0123456789abcdef0", "LustreDnsName": "fs-1.fsx", "LustreMountName": "abc"}
    files = release.kubernetes_objects(inputs, region="us-east-1", remote_write_url="https://aps/w/api/v1/remote_write",
                                        cluster_id=9)
    for name, body in files.items():
        assert b"{{" not in body, name
        if name.endswith(".yaml"):
            list(yaml.safe_load_all(body))
    job = yaml.safe_load(files["nccl-tests-mpijob.yaml"])
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]
    assert job["kind"] == "MPIJob" and worker["replicas"] == 4
    limits = worker["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32, "hugepages-2Mi": "5120Mi", "memory": "32000Mi"}
    requests = worker["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert requests["hugepages-2Mi"] == "5120Mi" and requests["vpc.amazonaws.com/efa"] == 32
    agent = yaml.safe_load(files["prometheus-agent.values.yaml"])["server"]
    assert agent["remoteWrite"] == [{"url": "https://aps/w/api/v1/remote_write", "sigv4": {"region": "us-east-1"}}]
    assert agent["global"]["external_labels"] == {"cluster": "e1", "geniac_cluster_id": "9"}
    counters = yaml.safe_load(files["dcgm-counters-configmap.yaml"])["data"]["dcgm-counters.csv"]
    assert "DCGM_FI_DEV_THERMAL_VIOLATION" in counters
    trn = release.kubernetes_objects({**inputs, "WorkerInstanceType": "ml.trn1.32xlarge"}, region="us-east-1")
    assert "nccl-tests-mpijob.yaml" not in trn  # Trainium validates with nccom-test
    assert yaml.safe_load(trn["prometheus-agent.values.yaml"])["server"]["remoteWrite"] == []
    with pytest.raises(ValueError, match="LustreFileSystemId is missing"):
        release.kubernetes_objects({"ClusterName": "e1"}, region="us-east-1")


def test_the_efa_exporter_runs_unprivileged_within_a_budget_and_says_why_for_what_it_cannot():
    inputs = {"ClusterName": "e1", "WorkerInstanceType": "ml.p5.48xlarge", "WorkerCount": "2",
              "LustreFileSystemId": "fs-0123456789abcdef0", "LustreDnsName": "fs-1.fsx", "LustreMountName": "abc"}
    daemonset = yaml.safe_load(release.kubernetes_objects(inputs, region="us-east-1")["efa-exporter.yaml"])
    pod = daemonset["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert set(container["resources"]["requests"]) == set(container["resources"]["limits"]) == {"cpu", "memory"}
    assert container["livenessProbe"]["httpGet"]["port"] == container["readinessProbe"]["httpGet"]["port"] == "metrics"
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] > 10000
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert "hostPID" not in pod and pod["automountServiceAccountToken"] is False
    skips = {v.split("=", 1)[0]: v.split("=", 1)[1] for k, v in daemonset["metadata"]["annotations"].items()
             if k.startswith("checkov.io/skip")}
    assert set(skips) == {"CKV_K8S_19", "CKV_K8S_43", "CKV2_K8S_6"} and all(len(reason) > 40 for reason in skips.values())


def test_hyperpod_eks_provisions_continuously_and_checks_every_accelerated_type():
    template = cfn.load(path("hyperpod-eks"))
    cluster = template["Resources"]["Cluster"]["Properties"]
    assert cluster["NodeProvisioningMode"] == "Continuous"
    assert template["Conditions"]["RunsDeepHealthChecks"] == {"Fn::Equals": [{"Ref": "DeepHealthChecks"}, "true"]}
    assert cluster["InstanceGroups"][0]["OnStartDeepHealthChecks"]["Fn::If"][0] == "RunsDeepHealthChecks"
    allowed = template["Parameters"]["WorkerInstanceType"]["AllowedValues"]
    assert {"ml.p5e.48xlarge", "ml.p5en.48xlarge", "ml.p6-b200.48xlarge", "ml.trn2.48xlarge", "ml.trn1.32xlarge",
            "ml.trn1n.32xlarge"} <= set(allowed)
    for name in allowed:  # every type the form offers is one the portal's catalog knows (GPUs or NeuronCores, EFA)
        itype = instance_types.find(name)
        assert itype is not None and itype.efa_devices > 0, name


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
    assert b"eks-board" in page.content and release.CURRENT_VERSION.encode() in page.content
    health = client.get(reverse("health:cluster_health", args=[cluster.pk]))
    assert health.status_code == 200 and b"eks-board" in health.content


def test_the_api_server_takes_only_a_current_eks_token_of_the_clusters_account(world, aws):
    cluster = launched_cluster(world.org_a, name="eks-auth", blueprint="hyperpod-eks")
    run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    api = kubernetes.connect(cluster)
    assert api.token.startswith("k8s-aws-v1.")
    assert api.get("/api/v1/namespaces/kube-system")["metadata"]["name"] == "kube-system"
    for bearer in ("", "k8s-aws-v1.bm90LWEtdXJs", "a-static-token"):
        assert kubernetes.Api(api.base, bearer).request("GET", "/api/v1/namespaces")[0] == 401
    expired = base64.urlsafe_b64decode(api.token[len("k8s-aws-v1."):] + "==").decode()
    old = re.sub(r"X-Amz-Date=\d{8}T\d{6}Z", "X-Amz-Date=20200101T000000Z", expired)
    stale = "k8s-aws-v1." + base64.urlsafe_b64encode(old.encode()).decode().rstrip("=")
    assert kubernetes.Api(api.base, stale).request("GET", "/api/v1/namespaces")[0] == 401


def test_the_api_server_refuses_what_kubernetes_would(world, aws):
    cluster = launched_cluster(world.org_a, name="eks-checks", blueprint="hyperpod-eks")
    run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    api = kubernetes.connect(cluster)
    volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "bare"},
              "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"]}}
    with pytest.raises(kubernetes.KubernetesError, match="exactly one volume source") as refused:
        api.apply(volume)
    assert not refused.value.retryable
    workload = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "x", "namespace": "kube-system"},
                "spec": {"selector": {"matchLabels": {"app": "x"}},
                         "template": {"metadata": {"labels": {"app": "y"}}, "spec": {"containers": [{"name": "c"}]}}}}
    with pytest.raises(kubernetes.KubernetesError, match="selector.*does not match.*containers\\[0\\].image"):
        api.apply(workload)
    elsewhere = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "monitoring"}}
    with pytest.raises(kubernetes.KubernetesError, match='namespaces "monitoring" not found'):
        api.apply(elsewhere)
    api.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "monitoring"}})
    assert api.apply(elsewhere) == "created"
    status, _ = api.request("PATCH", "/api/v1/namespaces/default/configmaps/c2", body=b"{}",
                            content_type="application/apply-patch+yaml")
    assert status == 422  # no fieldManager


def test_an_unavailable_api_server_is_retried_and_a_refused_manifest_fails_the_launch(world, aws, quotas):
    from sandbox.aws import moto_kubernetes

    cluster = launched_cluster(world.org_a, name="eks-refused", blueprint="hyperpod-eks")
    job = cluster.jobs.get()
    moto_kubernetes.unavailable_for(1)
    assert pipeline.step(job.pk) == pipeline.POLL
    job.refresh_from_db()
    assert "The EKS API server could not take StorageClass fsx-lustre (HTTP 503" in job.log and "(retrying, 1 in a row)" in job.log
    # Meanwhile the claim in the bucket lost its size: the API server refuses it and the launch fails.
    broken = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "fsx-claim"},
              "spec": {"accessModes": ["ReadWriteMany"]}}
    cluster.refresh_from_db()
    s3, key = aws_client("s3", organization=world.org_a), "geniac/eks-refused/kubernetes/fsx-lustre.yaml"
    original = s3.get_object(Bucket=cluster.outputs["BucketName"], Key=key)["Body"].read()
    s3.put_object(Bucket=cluster.outputs["BucketName"], Key=key, Body=yaml.safe_dump(broken).encode())
    assert pipeline.step(job.pk) == pipeline.DONE
    cluster.refresh_from_db()
    job.refresh_from_db()
    assert cluster.state == ClusterState.FAILED and cluster.failure_reason == "kubernetes", job.log
    assert "PersistentVolumeClaim fsx-claim" in cluster.error_message
    assert "spec.resources.requests.storage: Required value" in cluster.error_message
    assert job.status == JobStatus.FAILED
    # The manifest put right, a retry keeps the complete stacks and runs the step again.
    s3.put_object(Bucket=cluster.outputs["BucketName"], Key=key, Body=original)
    stack_ids = sorted(cluster.stacks.values_list("stack_id", flat=True))
    retry = run_pipeline(launch.request_retry(cluster))
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.READY and retry.status == JobStatus.SUCCEEDED, retry.log
    assert sorted(cluster.stacks.values_list("stack_id", flat=True)) == stack_ids
    assert "PersistentVolumeClaim/fsx-claim (created)" in retry.log  # the refused claim, created now
