"""Every generated ParallelCluster configuration loads in ParallelCluster's schema and passes its validators.

The validators run against the embedded endpoint, in the organization's account, after the real
network, storage and cluster stacks were launched there (``tests/clusters/pcluster_official.py``).
"""
from __future__ import annotations

import pytest
import yaml

from clusters.blueprints import pcluster_config, pcluster_spec
from clusters.launches import capacity
from portal.core.aws import client as aws_client
from sandbox.aws import moto_ec2
from tests.clusters import pcluster_official
from tests.clusters.factories_clusters import deploy, launched_cluster
from tests.workloads.factories_workloads import CapacityReservationFactory

pytestmark = pytest.mark.django_db
# Information ParallelCluster prints for choices the blueprint makes on purpose.
EXPECTED_WARNINGS = {"DetailedMonitoringValidator", "KeyPairValidator"}


def _reservation(org, kind, zone, count, instance_type="p5.48xlarge"):
    """The reservation in the organization's account (the endpoint) and as the portal records it."""
    if kind == "capacity_block":
        reservation_id = moto_ec2.add_capacity_block(org.aws_account_id, org.home_region, instance_type=instance_type,
                                                     availability_zone=zone, count=count)
    else:
        reservation_id = aws_client("ec2", organization=org).create_capacity_reservation(
            InstanceType=instance_type, InstancePlatform="Linux/UNIX", AvailabilityZone=zone,
            InstanceCount=count)["CapacityReservation"]["CapacityReservationId"]
    return CapacityReservationFactory(organization=org, reservation_id=reservation_id, kind=kind,
                                      instance_type_name=instance_type, availability_zone=zone, count=count)


def _launch(org, name, *, instance_type="p5.48xlarge", count=2, reservation=None, zone_override=None, **cluster_params):
    cluster = launched_cluster(org, name=name, instance_type=instance_type, count=count)
    params = cluster.parameters
    params["network"]["AvailabilityZone"] = f"{cluster.region}a"
    params["cluster"].update(cluster_params)
    if reservation is not None:
        params = capacity.wire(params, reservation, blueprint_kind="parallelcluster")
    if zone_override:
        params["network"]["AvailabilityZone"] = zone_override
    return deploy(cluster, params)


def _findings(cluster, monkeypatch):
    printed = yaml.safe_load(pcluster_config.for_cluster(cluster))
    return pcluster_official.check(printed, cluster_name=cluster.name, organization=cluster.organization,
                                   monkeypatch=monkeypatch)


def _assert_clean(findings, also_expected=frozenset()):
    errors = [f for f in findings if f.level == "ERROR"]
    assert errors == []
    assert {f.validator for f in findings} <= EXPECTED_WARNINGS | also_expected, findings


@pytest.mark.parametrize("case", ["on-demand", "odcr", "capacity-block", "trn1"])
def test_generated_configuration_passes_parallelclusters_schema_and_validators(world, aws, monkeypatch, case):
    org = world.org_a
    if case == "on-demand":
        cluster = _launch(org, "od")
    elif case == "odcr":
        cluster = _launch(org, "odcr", reservation=_reservation(org, "odcr", "ap-northeast-1c", 4), ComputeMaxCount="4")
    elif case == "capacity-block":
        cluster = _launch(org, "blk", reservation=_reservation(org, "capacity_block", "ap-northeast-1d", 2))
    else:  # Trainium is offered in us-east-1, not in Tokyo (ParallelCluster refuses it there)
        org.home_region = "us-east-1"
        org.save(update_fields=["home_region"])
        cluster = _launch(org, "trn", instance_type="trn1.32xlarge", DisableSimultaneousMultithreading="true")
    # On a targeted ODCR the placement group is off on purpose (the reference does the same); ParallelCluster
    # says a placement group may perform better, as a warning.
    _assert_clean(_findings(cluster, monkeypatch), {"EfaPlacementGroupValidator"} if case == "odcr" else frozenset())


def test_parallelclusters_validators_catch_a_block_outside_the_subnets_zone_and_an_odcr_as_a_block(world, aws, monkeypatch):
    org = world.org_a
    block = _reservation(org, "capacity_block", "ap-northeast-1c", 2)
    cluster = _launch(org, "wrongzone", reservation=block, zone_override="ap-northeast-1a")
    messages = [f.message for f in _findings(cluster, monkeypatch) if f.level == "ERROR"]
    assert any(f"Capacity reservation {block.reservation_id} must use the same availability zone" in m for m in messages)
    odcr = _reservation(org, "odcr", "ap-northeast-1a", 2)
    cluster = _launch(org, "odcrblock", reservation=odcr, CapacityType="CAPACITY_BLOCK", ComputeMinCount="2")
    cluster.parameters["cluster"]["CapacityType"] = "CAPACITY_BLOCK"  # as if wired wrongly
    printed = yaml.safe_load(pcluster_config.generate(cluster.region, cluster.parameters["cluster"], cluster.outputs))
    messages = [f.message for f in pcluster_official.check(printed, cluster_name=cluster.name, organization=org,
                                                            monkeypatch=monkeypatch) if f.level == "ERROR"]
    assert any("is not a Capacity Block reservation" in m for m in messages)


@pytest.mark.parametrize("queue", [
    pcluster_spec.Queue(name="train", instance_type="p5.48xlarge", max_count=4, placement_group="pg-a"),
    pcluster_spec.Queue(name="odcr", instance_type="p5.48xlarge", max_count=4, capacity_reservation_id="cr-0123456789abcdef0"),
    pcluster_spec.Queue(name="block", instance_type="p5.48xlarge", max_count=2, capacity_reservation_id="cr-0123456789abcdef1",
                   capacity_block=True),
    pcluster_spec.Queue(name="neuron", instance_type="trn1.32xlarge", max_count=8, disable_smt=True),
], ids=lambda q: q.name)
def test_library_configurations_load_in_parallelclusters_schema(world, aws, monkeypatch, queue):
    spec = pcluster_spec.ClusterSpec(region="ap-northeast-1", subnet_id="subnet-0123456789abcdef0", queues=(queue,),
                                security_group_id="sg-0123456789abcdef0", lustre_file_system_id="fs-0123456789abcdef0",
                                openzfs_volume_id="fsvol-0123456789abcdef0", custom_ami="ami-0123456789abcdef0",
                                custom_actions=pcluster_spec.CustomActions(on_node_configured="s3://b/x.sh"))
    assert pcluster_spec.validate(pcluster_spec.build(spec)) == []
    pcluster_official.check(pcluster_spec.build(spec), cluster_name="lib", organization=world.org_a,
                            monkeypatch=monkeypatch, validate=False)


def test_blueprint_options_print_and_load_in_parallelclusters_schema(world, aws, monkeypatch):
    outputs = {"PublicSubnetId": "subnet-0123456789abcdef0", "PrivateSubnetId": "subnet-0123456789abcdef1",
               "SecurityGroupId": "sg-0123456789abcdef0", "PlacementGroupName": "pg-a", "BucketName": "sagemaker-b1",
               "LustreFileSystemId": "fs-0123456789abcdef0"}
    secret = "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:slurmdb-AbCdEf"
    params = {"ClusterName": "opts", "CustomAmi": "ami-0123456789abcdef0", "AccountingDatabaseUri": "slurmdb.internal:3306",
              "AccountingDatabaseUserName": "slurm", "AccountingDatabasePasswordSecretArn": secret,
              "DisableSimultaneousMultithreading": "true", "ComputeInstanceType": "trn1.32xlarge"}
    printed = pcluster_config.build("ap-northeast-1", params, outputs)
    assert printed["Image"] == {"Os": "alinux2023", "CustomAmi": "ami-0123456789abcdef0"}
    assert printed["Scheduling"]["SlurmSettings"]["Database"] == {
        "Uri": "slurmdb.internal:3306", "UserName": "slurm", "PasswordSecretArn": secret}
    assert printed["HeadNode"]["LocalStorage"]["RootVolume"]["Size"] == 500  # /home lives on the head node
    assert [s["MountDir"] for s in printed["SharedStorage"]] == ["/fsx"]
    queue = printed["Scheduling"]["SlurmQueues"][0]
    resource = queue["ComputeResources"][0]
    assert resource["DisableSimultaneousMultithreading"] is True and resource["Efa"] == {"Enabled": True}
    assert "HealthChecks" not in queue and "HealthChecks" not in resource  # Trainium has no GPUs
    plain = pcluster_config.build("ap-northeast-1", {"ClusterName": "plain"}, outputs)
    assert "Database" not in plain["Scheduling"]["SlurmSettings"] and "CustomAmi" not in plain["Image"]
    assert plain["Scheduling"]["SlurmQueues"][0]["ComputeResources"][0]["DisableSimultaneousMultithreading"] is False
    for each in (printed, plain):
        pcluster_official.check(each, cluster_name="opts", organization=world.org_a, monkeypatch=monkeypatch, validate=False)
