"""The embedded endpoint argues back as AWS does (botocore's models), and the portal's HyperPod and SSM calls
hold up against it."""
from __future__ import annotations

import botocore.session
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from clusters import provider_states
from clusters.remediation import providers
from portal.core import aws
from portal.core.aws import AwsError
from sandbox.aws import model_rules, model_validation
from tests.health.factories_health import ClusterFactory
from tests.remediation.factories_remediation import hyperpod_cluster

MODEL = botocore.session.get_session()


def _error(call, **params) -> dict:
    with pytest.raises(ClientError) as refused:
        call(**params)
    return refused.value.response["Error"]


@pytest.mark.django_db
def test_send_command_to_a_hyperpod_node_target_is_refused_as_ssm_refuses_it(world, aws):
    ssm = aws_client("ssm", world)
    error = _error(ssm.send_command, InstanceIds=["sagemaker-cluster:abc_grp-i-0123"],
                   DocumentName="AWS-RunShellScript", Parameters={"commands": ["true"]})
    assert error["Code"] == "ValidationException"
    assert "at 'instanceIds.1.member' failed to satisfy constraint" in error["Message"]
    assert "(^i-(\\w{8}|\\w{17})$)|(^mi-\\w{17}$)" in error["Message"]


@pytest.mark.django_db
def test_what_botocore_lets_through_is_refused_enum_list_size_and_missing_member(world, aws):
    cluster = hyperpod_cluster(world.org_a)
    sm = aws_client("sagemaker", world)
    error = _error(sm.list_cluster_nodes, ClusterName=cluster.name, SortOrder="Sideways")
    assert error["Code"] == "ValidationException" and "'sortOrder'" in error["Message"]
    error = _error(sm.batch_reboot_cluster_nodes, ClusterName=cluster.name, NodeIds=[f"i-{n:017x}" for n in range(26)])
    assert "at 'nodeIds' failed to satisfy constraint: Member must have length less than or equal to 25" in error[
        "Message"]
    raw = botocore.session.get_session().create_client(
        "ec2", region_name="ap-northeast-1", endpoint_url=aws_endpoint(), aws_access_key_id="AKIAIOSFODNN7EXAMPLE",
        aws_secret_access_key="x", config=Config(parameter_validation=False))
    error = _error(raw.get_capacity_reservation_usage)
    assert error["Code"] == "MissingParameter" and "capacityReservationId" in error["Message"]


@pytest.mark.django_db
def test_node_logical_id_only_when_asked_and_the_hostname_always(world, aws):
    cluster = hyperpod_cluster(world.org_a)
    sm = aws_client("sagemaker", world)
    plain = sm.list_cluster_nodes(ClusterName=cluster.name)["ClusterNodeSummaries"]
    asked = sm.list_cluster_nodes(ClusterName=cluster.name, IncludeNodeLogicalIds=True)["ClusterNodeSummaries"]
    assert plain and all("NodeLogicalId" not in node for node in plain)
    assert all(node["NodeLogicalId"] for node in asked)
    assert all(node["PrivateDnsHostname"].startswith("ip-10-1-") for node in plain + asked)
    assert all(node["InstanceStatus"].get("Message") != "message" for node in plain)
    assert model_validation.violations() == []


def test_an_answer_with_a_member_aws_returns_only_when_asked_breaks_the_rules():
    operation = MODEL.get_service_model("sagemaker").operation_model("ListClusterNodes")
    node = {"InstanceGroupName": "g", "InstanceId": "i-0123456789abcdef0", "InstanceType": "ml.p5.48xlarge",
            "LaunchTime": 0, "InstanceStatus": {"Status": "Running"}, "NodeLogicalId": "g-0"}
    found = model_rules.broken("sagemaker", operation, {"ClusterName": "c"}, {"ClusterNodeSummaries": [node]})
    assert {(p.path, p.kind) for p in found} == {("ClusterNodeSummaries.1.NodeLogicalId", "conditional"),
                                                  ("ClusterNodeSummaries.1.PrivateDnsHostname", "required")}
    node["PrivateDnsHostname"] = "ip-10-1-0-10.ap-northeast-1.compute.internal"
    assert model_rules.broken("sagemaker", operation, {"IncludeNodeLogicalIds": True},
                              {"ClusterNodeSummaries": [node]}) == []


@pytest.mark.django_db
def test_hyperpod_nodes_are_located_from_one_listing_without_describing_each(world, aws):
    cluster = hyperpod_cluster(world.org_a)
    model_validation.forget()
    mapping = providers.HyperPod(cluster).locate(["ip-10-1-0-10", "ip-10-1-0-12"])
    assert set(mapping) == {"ip-10-1-0-10", "ip-10-1-0-12"} and all(n["logical"] for n in mapping.values())
    assert model_validation.checked() == {("sagemaker", "ListClusterNodes"): 1}


@pytest.mark.django_db
def test_an_invocation_ssm_does_not_show_yet_is_pending_for_a_bounded_time(world, aws, settings):
    cluster = ClusterFactory(organization=world.org_a, outputs={"HeadNodeInstanceId": "i-0123456789abcdef0"})
    provider = providers.ParallelCluster(cluster)
    command = provider.send("hostname")
    assert provider.result(command) == ("Pending", "")  # the endpoint hides it on the first read, as SSM may
    assert provider.result(command)[0] != "Pending"
    settings.SSM_INVISIBLE_SECONDS = 0
    later = provider.send("hostname")
    with pytest.raises(AwsError, match="InvocationDoesNotExist"):
        provider.result(later)


@pytest.mark.parametrize(("table", "shape"), [
    (provider_states.HYPERPOD_NODE, ("sagemaker", "ClusterInstanceStatus")),
    (provider_states.SSM_INVOCATION, ("ssm", "CommandInvocationStatus")),
])
def test_every_status_of_the_models_enum_is_decided(table, shape):
    assert set(table) == set(MODEL.get_service_model(shape[0]).shape_for(shape[1]).enum)
    assert not provider_states.ssm_running("Success") and provider_states.ssm_running("Cancelling")


def aws_client(service: str, world):
    return aws.client(service, organization=world.org_a, region="ap-northeast-1")


def aws_endpoint() -> str:
    from django.conf import settings

    return settings.AWS_ENDPOINT_URL
