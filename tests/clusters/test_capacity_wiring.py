"""A chosen reservation decides the capacity type, static nodes, the network's zone and placement."""
from __future__ import annotations

import pytest
import yaml
from django.core.exceptions import ValidationError
from django.urls import reverse
from moto.cloudformation.models import cloudformation_backends
from rest_framework.test import APIClient

from clusters.blueprints import pcluster_config
from clusters.launches import capacity
from clusters.models import Cluster
from tests.clusters.factories_clusters import deploy, launched_cluster
from tests.clusters.test_launch_views import _form
from tests.workloads.factories_workloads import CapacityReservationFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quotas")]
LAUNCH = reverse("clusters:launch", kwargs={"slug": "parallelcluster"})
LAUNCH_HYPERPOD = reverse("clusters:launch", kwargs={"slug": "hyperpod"})
CLUSTERS = reverse("clusters-api:cluster-list")


def _queue(params):
    return pcluster_config.build("ap-northeast-1", params, {})["Scheduling"]["SlurmQueues"][0]


def _block(org, **fields):
    return CapacityReservationFactory(organization=org, reservation_id="cr-0123456789abcdef0", kind="capacity_block",
                                      availability_zone="ap-northeast-1c", count=4, **fields)


def test_a_capacity_block_runs_every_node_in_its_zone_without_a_placement_group(client, world):
    block = _block(world.org_a)
    client.force_login(world.lead_a)
    # The form says ONDEMAND, 0 static nodes and zone 1a: the block overrides all three.
    response = client.post(LAUNCH, _form(world.org_a, cluster__CapacityReservationId=block.reservation_id))
    assert response.status_code == 302
    params = Cluster.objects.get().parameters
    assert params["network"]["AvailabilityZone"] == "ap-northeast-1c"
    assert (params["cluster"]["CapacityType"], params["cluster"]["ComputeMinCount"]) == ("CAPACITY_BLOCK", "4")
    queue = _queue(params["cluster"])
    resource = queue["ComputeResources"][0]
    assert queue["CapacityType"] == "CAPACITY_BLOCK"
    assert (resource["MinCount"], resource["MaxCount"]) == (4, 4)
    assert resource["CapacityReservationTarget"] == {"CapacityReservationId": block.reservation_id}
    assert queue["Networking"]["PlacementGroup"] == {"Enabled": False}


def test_an_odcr_is_targeted_on_demand_and_plain_on_demand_keeps_the_placement_group(client, world):
    odcr = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0123456789abcdef1",
                                      availability_zone="ap-northeast-1d")
    client.force_login(world.lead_a)
    client.post(LAUNCH, _form(world.org_a, name="odcr", cluster__CapacityReservationId=odcr.reservation_id,
                              cluster__CapacityType="CAPACITY_BLOCK"))
    params = Cluster.objects.get(name="odcr").parameters
    assert params["network"]["AvailabilityZone"] == "ap-northeast-1d"
    queue = _queue(params["cluster"])
    assert queue["CapacityType"] == "ONDEMAND"
    assert queue["ComputeResources"][0]["CapacityReservationTarget"] == {"CapacityReservationId": odcr.reservation_id}
    assert queue["ComputeResources"][0]["MinCount"] == 0  # an ODCR may scale down; a block may not
    assert queue["Networking"]["PlacementGroup"] == {"Enabled": False}
    client.post(LAUNCH, _form(world.org_a, name="plain"))
    plain = _queue(Cluster.objects.get(name="plain").parameters["cluster"])
    assert plain["Networking"]["PlacementGroup"] == {"Enabled": True, "Name": "<network:PlacementGroupName>"}
    assert "CapacityReservationTarget" not in plain["ComputeResources"][0]


def test_hyperpod_is_offered_training_plans_not_ec2_reservations(client, world):
    odcr = CapacityReservationFactory(organization=world.org_a, reservation_id="cr-0123456789abcdef2",
                                      instance_type_name="trn1.32xlarge")
    plan = CapacityReservationFactory(
        organization=world.org_a, kind="training_plan", instance_type_name="trn1.32xlarge", availability_zone="ap-northeast-1d",
        reservation_id="arn:aws:sagemaker:ap-northeast-1:123456789012:training-plan/alpha-trn1")
    client.force_login(world.lead_a)
    html = client.get(LAUNCH_HYPERPOD).content.decode()
    assert f'<option value="{plan.reservation_id}">' in html and odcr.reservation_id not in html
    assert odcr.reservation_id in client.get(LAUNCH).content.decode() and plan.reservation_id not in client.get(LAUNCH).content.decode()
    data = {"organization": world.org_a.pk, "name": "hp", "region": "ap-northeast-1", "full_stack": "on",
            "network__AvailabilityZone": "ap-northeast-1a", "storage__LustreStorageCapacity": "1200",
            "storage__LustreThroughputPerTiB": "250", "storage__CreateHomeFileSystem": "false",
            "storage__HomeStorageCapacity": "512", "storage__HomeThroughputCapacity": "64",
            "cluster__ControllerInstanceType": "ml.m5.12xlarge", "cluster__WorkerInstanceType": "ml.trn1.32xlarge",
            "cluster__WorkerCount": "4", "cluster__WorkerThreadsPerCore": "1", "cluster__InstanceVolumeSizeInGB": "500",
            "cluster__OnCreateScript": "on_create.sh"}
    response = client.post(LAUNCH_HYPERPOD, {**data, "cluster__TrainingPlanArn": odcr.reservation_id})
    assert response.status_code == 400 and "cluster__TrainingPlanArn" in response.context["form"].errors
    response = client.post(LAUNCH_HYPERPOD, {**data, "cluster__TrainingPlanArn": plan.reservation_id})
    assert response.status_code == 302
    params = Cluster.objects.get(name="hp").parameters
    assert params["cluster"]["TrainingPlanArn"] == plan.reservation_id
    assert params["network"]["AvailabilityZone"] == "ap-northeast-1d"


def test_the_api_wires_the_reservation_and_refuses_the_wrong_kind(world):
    block = _block(world.org_a)
    api = APIClient()
    api.force_authenticate(world.lead_a)
    body = {"organization": world.org_a.slug, "name": "api-block", "blueprint": "parallelcluster", "full_stack": True,
            "parameters": {"network": {"AvailabilityZone": "ap-northeast-1a"},
                           "cluster": {"ComputeMaxCount": "4", "CapacityReservationId": block.reservation_id}}}
    response = api.post(CLUSTERS, body, format="json")
    assert response.status_code == 202, response.json()
    params = Cluster.objects.get(name="api-block").parameters
    assert (params["cluster"]["CapacityType"], params["network"]["AvailabilityZone"]) == ("CAPACITY_BLOCK", "ap-northeast-1c")
    body = {**body, "name": "api-hp", "blueprint": "hyperpod",
            "parameters": {"cluster": {"WorkerInstanceType": "ml.p5.48xlarge", "TrainingPlanArn": block.reservation_id}}}
    response = api.post(CLUSTERS, body, format="json")
    assert response.status_code == 400
    # A capacity block's id is not even a training plan ARN: refused on the parameter itself.
    assert "training plan ARN" in response.json()["parameters"]["cluster__TrainingPlanArn"]
    assert not Cluster.objects.filter(name="api-hp").exists()


def test_a_training_plan_is_named_by_its_arn_and_an_ec2_reservation_by_its_id(world):
    with pytest.raises(ValidationError, match="A training plan is named by its ARN"):
        CapacityReservationFactory.build(organization=world.org_a, kind="training_plan").full_clean()
    with pytest.raises(ValidationError, match="looks like cr-0123456789abcdef0"):
        CapacityReservationFactory.build(
            organization=world.org_a, reservation_id="arn:aws:sagemaker:ap-northeast-1:123456789012:training-plan/x").full_clean()


def test_wire_refuses_a_blueprint_without_capacity():
    with pytest.raises(capacity.WrongKind, match="takes no capacity reservation"):
        capacity.wire({}, object(), blueprint_kind="observability")


def _deployed_configuration(stack_id: str) -> dict:
    """The ClusterConfiguration the emulated ParallelCluster provider received for this stack."""
    for regions in cloudformation_backends.values():
        for backend in regions.values():
            stack = backend.stacks.get(stack_id)
            if stack is not None:
                return stack.resource_map["PclusterCluster"].configuration
    raise AssertionError(f"no stack {stack_id}")


def test_printed_configuration_is_exactly_what_the_capacity_block_cluster_deployed(world, aws):
    block = _block(world.org_a)
    cluster = launched_cluster(world.org_a, name="blk", count=4)
    cluster = deploy(cluster, capacity.wire(cluster.parameters, block, blueprint_kind="parallelcluster"))
    deployed = _deployed_configuration(cluster.stacks.get(role="cluster").stack_id)
    printed = yaml.safe_load(pcluster_config.for_cluster(cluster))
    assert printed == pcluster_config._typed(deployed)
    queue = printed["Scheduling"]["SlurmQueues"][0]
    assert queue["CapacityType"] == "CAPACITY_BLOCK" and queue["Networking"]["PlacementGroup"] == {"Enabled": False}
    assert printed["HeadNode"]["Networking"]["SubnetId"] == cluster.outputs["PublicSubnetId"]
    assert printed["SharedStorage"][1]["FsxOpenZfsSettings"]["VolumeId"] == cluster.outputs["OpenZfsRootVolumeId"]
    assert printed["SharedStorage"][1]["MountDir"] == "/home" and printed["HeadNode"]["LocalStorage"]["RootVolume"]["Size"] == 200
