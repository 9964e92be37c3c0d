"""HyperPod's own signals on the embedded endpoint: ListClusterEvents (paged), DescribeClusterEvent and
StartClusterHealthCheck, called through boto3 and held to botocore's SageMaker model."""
from __future__ import annotations

import datetime

import pytest
from botocore.exceptions import ClientError

from portal.core import aws
from sandbox.aws import model_validation, moto_cluster_events, moto_hyperpod_nodes
from tests.remediation.factories_remediation import FAULTY, hyperpod_cluster


def _client(world):
    return aws.client("sagemaker", organization=world.org_a, region="ap-northeast-1")


def _settle(sm, name: str, reads: int = 12) -> None:
    for _ in range(reads):
        sm.list_cluster_nodes(ClusterName=name)


@pytest.mark.django_db
def test_a_deep_health_check_runs_through_the_nodes_status_and_is_recorded_as_events(world, aws):
    cluster = hyperpod_cluster(world.org_a, name="hp-check")
    sm = _client(world)
    node = moto_hyperpod_nodes.node(cluster.name, FAULTY)
    answer = sm.start_cluster_health_check(ClusterName=cluster.name, DeepHealthCheckConfigurations=[{
        "InstanceGroupName": "worker-group-1", "InstanceIds": [node.instance_id],
        "DeepHealthChecks": ["InstanceStress", "InstanceConnectivity"]}])
    assert answer["ClusterArn"].rsplit("/", 1)[-1] == sm.describe_cluster(ClusterName=cluster.name)["ClusterArn"] \
        .rsplit("/", 1)[-1]
    statuses = []
    for _ in range(6):
        found = sm.list_cluster_nodes(ClusterName=cluster.name)["ClusterNodeSummaries"]
        statuses.append(next(n for n in found if n["InstanceId"] == node.instance_id)["InstanceStatus"]["Status"])
    assert "DeepHealthCheckInProgress" in statuses and statuses[-1] == "Running"
    events = sm.list_cluster_events(ClusterName=cluster.name)["Events"]
    assert [e["Description"].rsplit(" ", 1)[-1] for e in events] == ["started", "passed"]
    assert all(e["InstanceId"] == node.instance_id and e["ResourceType"] == "Instance" for e in events)
    detail = sm.describe_cluster_event(ClusterName=cluster.name, EventId=events[0]["EventId"])["EventDetails"]
    assert detail["EventDetails"]["EventMetadata"]["Instance"]["NodeLogicalId"] == node.logical_id
    assert model_validation.violations() == []
    assert {op for _service, op in model_validation.checked()} >= {
        "StartClusterHealthCheck", "ListClusterEvents", "DescribeClusterEvent"}


@pytest.mark.django_db
def test_a_failed_check_ends_in_failure_with_its_message(world, aws):
    cluster = hyperpod_cluster(world.org_a, name="hp-check-fails")
    sm = _client(world)
    moto_cluster_events.fail_next_health_check(cluster.name, FAULTY)
    sm.start_cluster_health_check(ClusterName=cluster.name, DeepHealthCheckConfigurations=[{
        "InstanceGroupName": "worker-group-1", "DeepHealthChecks": ["InstanceStress"]}])  # the whole group
    _settle(sm, cluster.name)
    assert moto_hyperpod_nodes.node(cluster.name, FAULTY).status == "Failure"
    assert moto_hyperpod_nodes.node(cluster.name, "ip-10-1-0-11").status == "Running"
    failed = [e for e in sm.list_cluster_events(ClusterName=cluster.name)["Events"] if e["EventLevel"] == "Error"]
    assert len(failed) == 1 and failed[0]["Description"].endswith("deep health check in Cluster hp-check-fails and "
                                                                  "InstanceGroup worker-group-1 failed"[-40:])
    meta = sm.describe_cluster_event(ClusterName=cluster.name, EventId=failed[0]["EventId"])["EventDetails"]
    assert "InstanceStress" in meta["EventDetails"]["EventMetadata"]["Instance"]["FailureMessage"]


@pytest.mark.django_db
def test_what_the_model_refuses_is_refused_before_the_emulation_runs(world, aws):
    cluster = hyperpod_cluster(world.org_a, name="hp-refuse")
    sm = _client(world)
    with pytest.raises(ClientError) as too_many:
        sm.start_cluster_health_check(ClusterName=cluster.name, DeepHealthCheckConfigurations=[{
            "InstanceGroupName": "worker-group-1", "DeepHealthChecks": ["InstanceStress"] * 4}])
    assert too_many.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as unknown_kind:
        sm.start_cluster_health_check(ClusterName=cluster.name, DeepHealthCheckConfigurations=[{
            "InstanceGroupName": "worker-group-1", "DeepHealthChecks": ["Vibes"]}])
    assert unknown_kind.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as page:
        sm.list_cluster_events(ClusterName=cluster.name, MaxResults=101)
    assert page.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as missing:
        sm.describe_cluster_event(ClusterName=cluster.name, EventId="0123abcd-0000-4000-8000-000000000000")
    assert missing.value.response["Error"]["Code"] == "ResourceNotFound"
    with pytest.raises(ClientError) as busy:
        node = moto_hyperpod_nodes.node(cluster.name, FAULTY)
        moto_cluster_events.reboot_on_its_own(cluster.name, FAULTY)
        sm.start_cluster_health_check(ClusterName=cluster.name, DeepHealthCheckConfigurations=[{
            "InstanceGroupName": "worker-group-1", "InstanceIds": [node.instance_id],
            "DeepHealthChecks": ["InstanceStress"]}])
    assert "Running instances only" in busy.value.response["Error"]["Message"]


@pytest.mark.django_db
def test_events_are_paged_filtered_by_time_and_a_token_of_another_request_is_refused(world, aws):
    cluster = hyperpod_cluster(world.org_a, name="hp-pages")
    sm = _client(world)
    moto_cluster_events.add_events(cluster.name, FAULTY, 6)  # 12 events
    seen, token, pages = [], None, 0
    while True:
        page = sm.list_cluster_events(ClusterName=cluster.name, MaxResults=5, SortOrder="Ascending",
                                      **({"NextToken": token} if token else {}))
        seen += page["Events"]
        pages += 1
        token = page.get("NextToken")
        if not token:
            break
    assert pages == 3 and len({e["EventId"] for e in seen}) == 12
    assert [e["EventTime"] for e in seen] == sorted(e["EventTime"] for e in seen)
    later = sm.list_cluster_events(ClusterName=cluster.name, EventTimeAfter=seen[5]["EventTime"])["Events"]
    assert [e["EventId"] for e in later] == [e["EventId"] for e in seen[6:]]
    first = sm.list_cluster_events(ClusterName=cluster.name, MaxResults=5)
    with pytest.raises(ClientError) as other:
        sm.list_cluster_events(ClusterName=cluster.name, MaxResults=5, NodeId="i-0123456789abcdef0",
                               NextToken=first["NextToken"])
    assert other.value.response["Error"]["Code"] == "ValidationException"
    future = datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)
    assert sm.list_cluster_events(ClusterName=cluster.name, EventTimeAfter=future)["Events"] == []
    assert model_validation.violations() == []


@pytest.mark.django_db
def test_hyperpod_replacing_a_node_on_its_own_is_two_events_around_a_new_instance(world, aws):
    cluster = hyperpod_cluster(world.org_a, name="hp-own")
    sm = _client(world)
    before = moto_hyperpod_nodes.node(cluster.name, FAULTY).instance_id
    moto_cluster_events.replace_on_its_own(cluster.name, FAULTY)
    _settle(sm, cluster.name)
    after = moto_hyperpod_nodes.node(cluster.name, FAULTY).instance_id
    events = sm.list_cluster_events(ClusterName=cluster.name)["Events"]
    assert after != before
    assert [(e["InstanceId"], e["Description"].rsplit(" ", 1)[-1]) for e in events] == [
        (before, "started"), (after, "succeeded")]
