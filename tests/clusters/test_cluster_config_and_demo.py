"""The cluster_config command, the blueprint sync and the demo clusters."""
import pytest
import yaml
from django.core.management import CommandError, call_command

from clusters.blueprints import catalog, pcluster_config
from clusters.choices import ClusterState
from clusters.models import Blueprint, Cluster
from clusters.software import release
from tests.clusters.factories_clusters import launched_cluster, ready_cluster

pytestmark = pytest.mark.django_db


def test_cluster_config_prints_the_generated_yaml(world, capsys):
    cluster = ready_cluster(world.org_a, name="cmd")
    call_command("cluster_config", str(cluster.pk))
    config = yaml.safe_load(capsys.readouterr().out)
    queue = config["Scheduling"]["SlurmQueues"][0]
    assert config["Region"] == "ap-northeast-1"
    assert queue["ComputeResources"][0]["InstanceType"] == "p5.48xlarge"
    assert queue["ComputeResources"][0]["Efa"] == {"Enabled": True}
    assert queue["Networking"]["SubnetIds"] == ["subnet-0a1b2c3d4e5f6071a"]
    assert config["SharedStorage"][0]["FsxLustreSettings"]["FileSystemId"] == "fs-0a1b2c3d4e5f6071c"
    # What the stack deploys: IAM, custom actions from the bucket, storage, IMDSv2.
    assert config["Imds"] == {"ImdsSupport": "v2.0"}
    assert queue["Iam"]["S3Access"] == [{"BucketName": "sagemaker-geniac-0a1b2c3d", "EnableWriteAccess": False}]
    assert "arn:aws:iam::aws:policy/AmazonPrometheusRemoteWriteAccess" in [
        p["Policy"] for p in config["HeadNode"]["Iam"]["AdditionalIamPolicies"]]
    assert [a["Script"].rsplit("/", 1)[1] for a in queue["CustomActions"]["OnNodeConfigured"]["Sequence"]] == [
        "install_efa.sh", "install_nccl.sh", "install_containers.sh", "install_exporters.sh"]
    assert queue["ComputeSettings"]["LocalStorage"]["EphemeralVolume"] == {"MountDir": "/scratch"}
    assert "<" not in yaml.safe_dump(config)  # every wired value is known for a ready cluster


def test_cluster_config_refuses_unknown_and_non_parallelcluster(world):
    with pytest.raises(CommandError, match="No cluster with id 999"):
        call_command("cluster_config", "999")
    hp = launched_cluster(world.org_a, name="hp", blueprint="hyperpod", instance_type="trn1.32xlarge")
    with pytest.raises(CommandError, match="not a ParallelCluster cluster"):
        call_command("cluster_config", str(hp.pk))


def test_sync_follows_the_files(world):
    rows = catalog.sync()
    assert set(rows) == {"network", "storage", "parallelcluster", "hyperpod", "hyperpod-eks", "observability"}
    Blueprint.objects.filter(slug="network").update(content_hash="stale", version="0.0.1")
    rows = catalog.sync()
    assert rows["network"].content_hash == catalog.entry("network").content_hash
    assert Blueprint.objects.get(slug="network").version == catalog.entry("network").version
    assert Blueprint.objects.count() == 6


def test_demo_seeds_ready_launching_and_failed_clusters_once(db, aws, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_demo")
    states = dict(Cluster.objects.values_list("name", "state"))
    assert states["kotoba-p5-pretrain"] == states["sakura-trn1"] == ClusterState.READY
    assert states["mirai-p5-finetune"] == ClusterState.SCHEDULED
    assert states["hoshi-trn1"] == ClusterState.FAILED
    kotoba = Cluster.objects.get(name="kotoba-p5-pretrain")
    assert kotoba.stacks.count() == 3 and kotoba.outputs["HeadNodeIp"]  # launched against the endpoint
    assert kotoba.jobs.get().status == "succeeded"
    failed = Cluster.objects.get(name="hoshi-trn1")
    assert "Insufficient capacity for ml.trn1.32xlarge" in failed.error_message
    assert Cluster.objects.get(name="mirai-p5-finetune").jobs.get().dispatched
    count = Cluster.objects.count()
    call_command("seed_demo")
    assert Cluster.objects.count() == count == 10  # six launched, three accounting histories, one remediation
    _demo_capacity_is_wired()


def _demo_capacity_is_wired():
    """Each demo cluster runs on its organization's reservation, and its printed YAML has no placeholder."""
    by_name = {c.name: c for c in Cluster.objects.select_related("organization", "blueprint")}
    queue = lambda c: yaml.safe_load(pcluster_config.for_cluster(c))["Scheduling"]["SlurmQueues"][0]  # noqa: E731
    kotoba, shirakawa = queue(by_name["kotoba-p5-pretrain"]), queue(by_name["shirakawa-p5-cpt"])
    assert kotoba["CapacityType"] == "ONDEMAND"
    assert kotoba["ComputeResources"][0]["CapacityReservationTarget"] == {"CapacityReservationId": "cr-0a1b2c3d4e5f60001"}
    assert shirakawa["CapacityType"] == "CAPACITY_BLOCK" and shirakawa["ComputeResources"][0]["MinCount"] == 32
    assert kotoba["Networking"]["PlacementGroup"] == shirakawa["Networking"]["PlacementGroup"] == {"Enabled": False}
    assert by_name["shirakawa-p5-cpt"].parameters["network"]["AvailabilityZone"] == "ap-northeast-1c"
    sakura = by_name["sakura-trn1"]
    assert sakura.parameters["cluster"]["TrainingPlanArn"].endswith(":training-plan/sakura-trn1-cycle2")
    assert sakura.availability_zone == "us-east-1b"
    for cluster in by_name.values():  # a launching cluster's network does not exist yet: placeholders are honest there
        if cluster.state == ClusterState.READY:
            text = pcluster_config.for_cluster(cluster)
            assert text is None or "<network:" not in text and "<storage:" not in text, cluster.name
            assert cluster.software_hash == release.content_hash()


def test_demo_without_the_endpoint_records_ready_clusters_with_full_outputs(db, settings, django_capture_on_commit_callbacks):
    settings.AWS_ENDPOINT_URL = None
    with django_capture_on_commit_callbacks(execute=False):
        call_command("seed_demo")
    _demo_capacity_is_wired()
    sakura = Cluster.objects.get(name="sakura-trn1")
    assert sakura.outputs["LifecycleScriptsUri"] == f"s3://{sakura.outputs['BucketName']}/geniac/sakura-trn1/lifecycle/"


def test_the_demo_health_report_covers_every_node_of_a_launched_cluster(db, settings, django_capture_on_commit_callbacks):
    """A 16-node demo cluster reports 16 nodes (one of them faulty), not two and "14 nodes not reporting"."""
    from clusters.health.models import GpuFault, HealthReport

    settings.AWS_ENDPOINT_URL = None
    with django_capture_on_commit_callbacks(execute=False):
        call_command("seed_demo")
    kotoba = Cluster.objects.get(name="kotoba-p5-pretrain")
    report = HealthReport.objects.filter(cluster=kotoba).latest("received_at")
    assert (report.node_count, report.gpus_expected, report.gpus_seen) == (16, 128, 127)
    assert (report.nodes_healthy, report.nodes_reboot) == (15, 1)
    faulty = set(GpuFault.objects.filter(cluster=kotoba, cleared_at__isnull=True).values_list("hostname", flat=True))
    assert len(faulty) == 1
    shirakawa = HealthReport.objects.filter(cluster__name="shirakawa-p5-cpt").latest("received_at")
    # -13 lacks one of its 32 EFA devices (the published sample): degraded, not healthy
    assert (shirakawa.node_count, shirakawa.nodes_healthy, shirakawa.gpus_seen) == (32, 31, 256)
    # Trainium: its NeuronCore utilization and EFA devices, never the H100 samples (they would read "GPU model
    # mismatch" and open GPU faults on a node with no GPU).
    sakura = HealthReport.objects.filter(cluster__name="sakura-trn1").latest("received_at")
    assert (sakura.node_count, sakura.nodes_healthy) == (16, 16)
    assert not GpuFault.objects.filter(cluster__name="sakura-trn1").exists()
