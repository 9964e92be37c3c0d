"""The versioned software stack: scripts that parse, one place for versions, uploaded before the cluster stack."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml

from clusters.blueprints import catalog, pcluster_config
from clusters.choices import ClusterState, JobStatus
from clusters.health.models import ClusterHealthConfig
from clusters.software import release
from portal.core.aws import client as aws_client
from tests.clusters.factories_clusters import launched_cluster, run_pipeline

SCRIPTS = sorted((release.SOFTWARE_DIR / release.CURRENT_VERSION / "scripts").glob("*.sh"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_script_parses_with_bash(script):
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert script.read_text().startswith("#!/bin/bash\n")


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed (Debian: apt-get install shellcheck)")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_script_passes_shellcheck(script):
    result = subprocess.run(["shellcheck", "-S", "warning", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_versions_live_in_the_manifest_and_reach_every_script_through_stack_env():
    env = release.stack_env(cluster_name="c1", region="ap-northeast-1", remote_write_url="https://aps/x/api/v1/remote_write")
    values = dict(re.findall(r"^(\w+)='([^']*)'$", env, re.M))
    pinned = {c.name: c.version for c in release.components()}
    assert pinned["nccl"] == "v2.29.3-1" and pinned["aws_ofi_nccl"] == "v1.16.3"
    for name, version in pinned.items():
        assert values[f"{name.upper()}_VERSION"] == version
    used = set()
    for script in SCRIPTS:
        used |= set(re.findall(r"\$\{?([A-Z_]+_VERSION)\b", script.read_text()))
    assert used <= set(values), f"scripts read versions the manifest does not pin: {used - set(values)}"
    for script in SCRIPTS:  # no version hard-coded in a script
        assert not re.search(r"\b(v?2\.27\.\d|1\.16\.3|1\.43\.1|3\.5\.0|0\.20\.0)\b", script.read_text()), script.name
    assert values["AMP_REMOTE_WRITE_URL"] == "https://aps/x/api/v1/remote_write"
    assert values["HYPERPOD_WORKER_SCRIPTS"] == ("install_efa.sh install_nccl.sh install_containers.sh install_pyxis.sh "
                                                 "install_exporters.sh")


def test_manifest_and_blueprint_name_only_scripts_that_exist():
    names = {p.name for p in SCRIPTS}
    manifest = release.manifest()
    listed = set(manifest["parallelcluster"]["head_node"] + manifest["parallelcluster"]["compute_node"]
                 + manifest["parallelcluster"]["compute_node_start"] + manifest["hyperpod"]["controller"]
                 + manifest["hyperpod"]["worker"] + [manifest["hyperpod"]["entry_point"]])
    assert listed <= names
    shipped = {p.name for p in (release.SOFTWARE_DIR / release.CURRENT_VERSION / "scripts").iterdir()}
    assert set(manifest["files"]) <= shipped
    printed = pcluster_config.build("ap-northeast-1", {"ClusterName": "c1", "BucketName": "b1"}, {})
    head = [a["Script"] for a in printed["HeadNode"]["CustomActions"]["OnNodeConfigured"]["Sequence"]]
    actions = printed["Scheduling"]["SlurmQueues"][0]["CustomActions"]
    compute = [a["Script"] for a in actions["OnNodeConfigured"]["Sequence"]]
    start = [a["Script"] for a in actions["OnNodeStart"]["Sequence"]]
    base = "s3://b1/geniac/c1/software/"
    assert head == [base + s for s in manifest["parallelcluster"]["head_node"]]
    assert compute == [base + s for s in manifest["parallelcluster"]["compute_node"]]
    assert start == [base + s for s in manifest["parallelcluster"]["compute_node_start"]] == [
        base + "configure_lustre_efa.sh", base + "install_pyxis.sh"]
    template = catalog.template("hyperpod")
    assert template["Parameters"]["OnCreateScript"]["Default"] == manifest["hyperpod"]["entry_point"]


def test_content_hash_covers_manifest_and_scripts(tmp_path, monkeypatch):
    assert re.fullmatch(r"[0-9a-f]{64}", release.content_hash())
    assert release.content_hash() == release.content_hash()
    copy = tmp_path / release.CURRENT_VERSION
    shutil.copytree(release.SOFTWARE_DIR / release.CURRENT_VERSION, copy)
    monkeypatch.setattr(release, "SOFTWARE_DIR", tmp_path)
    release.manifest.cache_clear()
    same = release.content_hash()
    (copy / "scripts" / "install_nccl.sh").write_text((copy / "scripts" / "install_nccl.sh").read_text() + "\n")
    assert release.content_hash() != same
    release.manifest.cache_clear()


def test_hyperpod_bundle_carries_provisioning_parameters_and_refuses_without_lustre():
    inputs = {"ClusterName": "hp1", "WorkerInstanceType": "ml.p5.48xlarge", "LustreDnsName": "fs-1.fsx.aws",
              "LustreMountName": "abcdefgh"}
    objects = release.bundle("hyperpod", inputs, region="us-east-1")
    params = json.loads(objects["geniac/hp1/lifecycle/provisioning_parameters.json"])
    assert params == {"version": "1.0.0", "workload_manager": "slurm", "controller_group": "controller-machine",
                      "worker_groups": [{"instance_group_name": "worker-group-1", "partition_name": "ml.p5.48xlarge"}],
                      "fsx_dns_name": "fs-1.fsx.aws", "fsx_mountname": "abcdefgh"}
    assert "geniac/hp1/lifecycle/on_create.sh" in objects and "geniac/hp1/lifecycle/stack.env" in objects
    pc = release.bundle("parallelcluster", {"ClusterName": "pc1"}, region="us-east-1")
    assert "geniac/pc1/software/install_nccl.sh" in pc and not any(k.endswith(".json") for k in pc)
    with pytest.raises(ValueError, match="FSx for Lustre DNS name and mount name"):
        release.bundle("hyperpod", {"ClusterName": "hp1"}, region="us-east-1")
    with pytest.raises(ValueError, match="unknown software stack version"):
        release.bundle("parallelcluster", {"ClusterName": "pc1"}, region="us-east-1", version="1999.1.0")


def _keys(org, bucket, prefix):
    s3 = aws_client("s3", organization=org)
    return {o["Key"].removeprefix(prefix) for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])}


@pytest.mark.django_db
def test_hyperpod_full_stack_deploys_with_its_lifecycle_scripts_in_the_bucket(world, aws):
    cluster = launched_cluster(world.org_a, name="hp-e2e", blueprint="hyperpod", instance_type="trn1.32xlarge", count=4)
    job = run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert (job.status, cluster.state) == (JobStatus.SUCCEEDED, ClusterState.READY), cluster.error_message
    assert (cluster.software_version, cluster.software_hash) == (release.CURRENT_VERSION, release.content_hash())
    bucket = cluster.outputs["BucketName"]
    assert cluster.outputs["LifecycleScriptsUri"] == f"s3://{bucket}/geniac/hp-e2e/lifecycle/"
    keys = _keys(world.org_a, bucket, "geniac/hp-e2e/lifecycle/")
    assert {"on_create.sh", "mount_fsx.sh", "stack.env", "provisioning_parameters.json"} <= keys
    s3 = aws_client("s3", organization=world.org_a)
    params = json.loads(s3.get_object(Bucket=bucket, Key="geniac/hp-e2e/lifecycle/provisioning_parameters.json")["Body"].read())
    assert (params["fsx_dns_name"], params["fsx_mountname"]) == (cluster.outputs["LustreDnsName"], cluster.outputs["LustreMountName"])
    described = aws_client("sagemaker", organization=world.org_a).describe_cluster(ClusterName="hp-e2e")
    worker = next(g for g in described["InstanceGroups"] if g["InstanceGroupName"] == "worker-group-1")
    assert worker["InstanceStorageConfigs"] == [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]
    assert "uploaded software stack" in job.log
    assert job.log.index("uploaded software stack") < job.log.index("created geniac-alpha-labs-hp-e2e-cluster")
    # The controller's agent finds its token where install_agent.sh reads it, written before the stack was created.
    token = aws_client("ssm", organization=world.org_a, region=cluster.region).get_parameter(
        Name="/geniac/hp-e2e/agent-token", WithDecryption=True)["Parameter"]["Value"]
    assert ClusterHealthConfig.objects.get(cluster=cluster).token_matches(token)
    assert job.log.index("wrote the controller agent's token") < job.log.index("created geniac-alpha-labs-hp-e2e-cluster")


@pytest.mark.django_db
def test_parallelcluster_upload_and_pull_settings_from_the_observability_stack(world, aws):
    obs = launched_cluster(world.org_a, name="obs", blueprint="observability", full_stack=False)
    run_pipeline(obs.jobs.get())
    obs.refresh_from_db()
    endpoint = obs.outputs["PrometheusEndpoint"]
    cluster = launched_cluster(world.org_a, name="pc-e2e")
    job = run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.READY, cluster.error_message
    bucket = cluster.outputs["BucketName"]
    keys = _keys(world.org_a, bucket, "geniac/pc-e2e/software/")
    assert {"install_efa.sh", "install_nccl.sh", "install_containers.sh", "install_exporters.sh",
            "install_prometheus_agent.sh", "stack.env"} <= keys
    env = aws_client("s3", organization=world.org_a).get_object(Bucket=bucket, Key="geniac/pc-e2e/software/stack.env")
    assert f"AMP_REMOTE_WRITE_URL='{endpoint.rstrip('/')}/api/v1/remote_write'" in env["Body"].read().decode()
    pull = ClusterHealthConfig.objects.get(cluster=cluster)
    assert (pull.pull_enabled, pull.pull_url, pull.auth_kind, pull.aws_region) == (True, endpoint, "sigv4", obs.region)
    assert cluster.software_hash == release.content_hash() and job.status == JobStatus.SUCCEEDED


@pytest.mark.django_db
def test_a_cluster_stack_without_a_bucket_fails_before_anything_is_created(world, aws):
    cluster = launched_cluster(world.org_a, name="nobucket", full_stack=False, blueprint="hyperpod", instance_type="trn1.32xlarge")
    job = run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.FAILED and cluster.failure_reason == "parameter"
    assert "no BucketName" in cluster.error_message
    assert cluster.stacks.get().stack_id == "" and job.status == JobStatus.FAILED


@pytest.mark.django_db
def test_cluster_page_shows_the_pinned_versions_and_the_recorded_hash(client, world):
    from tests.clusters.factories_clusters import ready_cluster

    cluster = ready_cluster(world.org_a, name="shown", software_version=release.CURRENT_VERSION,
                            software_hash=release.content_hash())
    client.force_login(world.customer_a)
    html = client.get(cluster.get_absolute_url()).content.decode()
    assert f"Software stack {release.CURRENT_VERSION}" in html and release.content_hash()[:12] in html
    assert "<td>nccl</td><td><code>v2.29.3-1</code></td>" in html
    assert "<td>aws_ofi_nccl</td><td><code>v1.16.3</code></td>" in html
    pending = launched_cluster(world.org_a, name="pending")
    html = client.get(pending.get_absolute_url()).content.decode()
    assert "not uploaded yet" in html
    client.force_login(world.customer_b)
    assert client.get(cluster.get_absolute_url()).status_code == 404


@pytest.mark.django_db
def test_without_a_home_file_system_home_lives_on_a_500_gb_head_node_root(world, aws):
    cluster = launched_cluster(world.org_a, name="nohome")
    cluster.parameters["storage"]["CreateHomeFileSystem"] = "false"
    cluster.save()
    storage = cluster.stacks.get(role="storage")
    storage.parameters = cluster.parameters["storage"]
    storage.save()
    run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.READY, cluster.error_message
    assert "OpenZfsRootVolumeId" not in cluster.outputs
    printed = yaml.safe_load(pcluster_config.for_cluster(cluster))
    assert [s["MountDir"] for s in printed["SharedStorage"]] == ["/fsx"]
    assert printed["HeadNode"]["LocalStorage"]["RootVolume"]["Size"] == 500
