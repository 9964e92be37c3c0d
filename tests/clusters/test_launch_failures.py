"""Sequences the embedded endpoint cannot produce (in-progress stacks, rollbacks, throttling, denied
roles), fed to the poller through botocore's Stubber in the shapes AWS returns."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.stub import Stubber

from clusters.choices import ClusterState, JobStatus
from clusters.launches.backend import CloudFormation
from clusters.launches.pipeline import steps as pipeline
from tests.clusters.factories_clusters import launched_cluster

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)


@pytest.fixture
def stubbed(monkeypatch):
    client = boto3.client("cloudformation", region_name="ap-northeast-1", aws_access_key_id="x",
                          aws_secret_access_key="x")
    stubber = Stubber(client)
    monkeypatch.setattr(pipeline, "cloudformation_for", lambda cluster: CloudFormation(client=client))
    with stubber:
        yield stubber


def _stack(name, stack_id, status, reason=None, outputs=()):
    body = {"StackId": stack_id, "StackName": name, "StackStatus": status, "CreationTime": T0,
            "Tags": [{"Key": "geniac:launch-id", "Value": "x"}],
            "Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in outputs]}
    if reason:
        body["StackStatusReason"] = reason
    return {"Stacks": [body]}


def _event(stack_id, name, n, logical, rtype, status, reason=None):
    event = {"StackId": stack_id, "EventId": f"{logical}-{status}-{n}", "StackName": name,
             "LogicalResourceId": logical, "PhysicalResourceId": "", "ResourceType": rtype,
             "Timestamp": T0 + timedelta(seconds=n), "ResourceStatus": status}
    if reason:
        event["ResourceStatusReason"] = reason
    return event


def _resources(*statuses):
    return {"StackResourceSummaries": [
        {"LogicalResourceId": f"R{i}", "ResourceType": "AWS::APS::Workspace", "ResourceStatus": s,
         "LastUpdatedTimestamp": T0} for i, s in enumerate(statuses)]}


def _not_found(stubber, name):
    stubber.add_client_error("describe_stacks", service_error_code="ValidationError",
                             service_message=f"Stack with id {name} does not exist", http_status_code=400)


def _created_observability_stack(world, stubbed, name: str, n: int):
    """A launched observability cluster whose first poll finds no stack and creates it."""
    cluster = launched_cluster(world.org_a, name=name, full_stack=False, blueprint="observability")
    stack = cluster.stacks.get()
    sid = f"arn:aws:cloudformation:ap-northeast-1:100000000000:stack/{stack.stack_name}/{n}"
    _not_found(stubbed, stack.stack_name)
    stubbed.add_response("create_stack", {"StackId": sid})
    return cluster, stack, stack.stack_name, sid


def test_create_in_progress_then_rollback_fails_with_the_first_failing_resource(world, stubbed):
    # Poll 1: not there yet → create → in progress, two events.
    cluster, stack, name, sid = _created_observability_stack(world, stubbed, "obs", 1)
    stubbed.add_response("describe_stacks", _stack(name, sid, "CREATE_IN_PROGRESS", "User Initiated"))
    stubbed.add_response("describe_stack_events", {"StackEvents": [
        _event(sid, name, 2, "PrometheusWorkspace", "AWS::APS::Workspace", "CREATE_IN_PROGRESS"),
        _event(sid, name, 1, name, "AWS::CloudFormation::Stack", "CREATE_IN_PROGRESS", "User Initiated")]})
    stubbed.add_response("list_stack_resources", _resources("CREATE_IN_PROGRESS", "CREATE_COMPLETE"))
    # Poll 2: the workspace failed, Grafana was cancelled, rollback in progress.
    failing = ("Resource handler returned message: \"You have exceeded the number of workspaces allowed "
               "(Service: Amp, Status Code: 402, Request ID: 4f1c)\" (HandlerErrorCode: ServiceLimitExceeded)")
    stubbed.add_response("describe_stacks", _stack(name, sid, "ROLLBACK_IN_PROGRESS",
                                                   "The following resource(s) failed to create: [PrometheusWorkspace]."))
    stubbed.add_response("describe_stack_events", {"StackEvents": [
        _event(sid, name, 5, name, "AWS::CloudFormation::Stack", "ROLLBACK_IN_PROGRESS",
               "The following resource(s) failed to create: [PrometheusWorkspace]."),
        _event(sid, name, 4, "GrafanaWorkspace", "AWS::Grafana::Workspace", "CREATE_FAILED", "Resource creation cancelled"),
        _event(sid, name, 3, "PrometheusWorkspace", "AWS::APS::Workspace", "CREATE_FAILED", failing),
        _event(sid, name, 2, "PrometheusWorkspace", "AWS::APS::Workspace", "CREATE_IN_PROGRESS")]})
    stubbed.add_response("list_stack_resources", _resources("DELETE_IN_PROGRESS", "CREATE_COMPLETE"))
    # Poll 3: rollback complete.
    stubbed.add_response("describe_stacks", _stack(name, sid, "ROLLBACK_COMPLETE"))
    stubbed.add_response("describe_stack_events", {"StackEvents": [
        _event(sid, name, 6, name, "AWS::CloudFormation::Stack", "ROLLBACK_COMPLETE"),
        _event(sid, name, 5, name, "AWS::CloudFormation::Stack", "ROLLBACK_IN_PROGRESS", "x")]})
    stubbed.add_response("list_stack_resources", _resources("DELETE_COMPLETE", "DELETE_COMPLETE"))

    job = cluster.jobs.get()
    assert pipeline.step(job.pk) == pipeline.POLL
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.CREATING and cluster.stack_status == "observability: CREATE_IN_PROGRESS"
    stack.refresh_from_db()
    assert (stack.resources_done, stack.events.count()) == (1, 2)
    assert pipeline.step(job.pk) == pipeline.POLL  # rollback in progress: still polling
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.CREATING
    assert pipeline.step(job.pk) == pipeline.DONE
    stubbed.assert_no_pending_responses()
    cluster.refresh_from_db()
    job.refresh_from_db()
    assert cluster.state == ClusterState.FAILED and cluster.failure_reason == "stack_failed"
    assert "ROLLBACK_COMPLETE" in cluster.error_message
    assert "PrometheusWorkspace (AWS::APS::Workspace)" in cluster.error_message
    assert "exceeded the number of workspaces" in cluster.error_message
    assert job.status == JobStatus.FAILED and job.error == cluster.error_message
    assert stack.events.count() == 6  # each event stored once


def test_create_failed_without_rollback_is_a_failure_too(world, stubbed):
    cluster, stack, name, sid = _created_observability_stack(world, stubbed, "obs2", 2)
    stubbed.add_response("describe_stacks", _stack(name, sid, "CREATE_FAILED", "Resource creation failed"))
    stubbed.add_response("describe_stack_events", {"StackEvents": [
        _event(sid, name, 3, "GrafanaRole", "AWS::IAM::Role", "CREATE_FAILED",
               "Resource handler returned message: \"User is not authorized to perform: iam:CreateRole\""),
        _event(sid, name, 1, name, "AWS::CloudFormation::Stack", "CREATE_IN_PROGRESS", "User Initiated")]})
    stubbed.add_response("list_stack_resources", _resources("CREATE_FAILED"))
    assert pipeline.step(cluster.jobs.get().pk) == pipeline.DONE
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.FAILED
    assert "GrafanaRole (AWS::IAM::Role)" in cluster.error_message and "iam:CreateRole" in cluster.error_message


def test_throttling_retries_then_fails_with_a_clear_message(world, stubbed, settings):
    settings.JOB_MAX_AWS_ERRORS = 3
    cluster = launched_cluster(world.org_a, name="slow", full_stack=False, blueprint="observability")
    for _ in range(3):
        stubbed.add_client_error("describe_stacks", service_error_code="Throttling", service_message="Rate exceeded",
                                 http_status_code=400)
    job = cluster.jobs.get()
    assert pipeline.step(job.pk) == pipeline.POLL
    assert pipeline.step(job.pk) == pipeline.POLL
    assert pipeline.step(job.pk) == pipeline.DONE
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.FAILED and cluster.failure_reason == "throttling"
    assert cluster.error_message == "Throttling: Rate exceeded (after 3 attempts)"


def test_missing_template_parameter_fails_with_aws_message(world, stubbed):
    cluster = launched_cluster(world.org_a, name="noparam", full_stack=False, blueprint="observability")
    _not_found(stubbed, cluster.stacks.get().stack_name)
    stubbed.add_client_error("create_stack", service_error_code="ValidationError",
                             service_message="Parameters: [WorkspaceAlias] must have values", http_status_code=400)
    assert pipeline.step(cluster.jobs.get().pk) == pipeline.DONE
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.FAILED and cluster.failure_reason == "parameter"
    assert cluster.error_message == "ValidationError: Parameters: [WorkspaceAlias] must have values"


def test_access_denied_on_the_role_fails_the_launch(world, monkeypatch, aws):
    """The organization's role refuses us at STS: the launch fails at once with AWS's message."""
    from portal.core import aws as portal_aws

    real_client = boto3.client
    sts = real_client("sts", region_name="ap-northeast-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(sts)
    message = ("User: arn:aws:iam::123456789012:user/portal is not authorized to perform: sts:AssumeRole on "
               f"resource: {world.org_a.role_arn}")
    stubber.add_client_error("assume_role", service_error_code="AccessDenied", service_message=message,
                             http_status_code=403)
    monkeypatch.setattr(portal_aws.boto3, "client",
                        lambda service, **kw: sts if service == "sts" else real_client(service, **kw))
    cluster = launched_cluster(world.org_a, name="denied", full_stack=False, blueprint="observability")
    with stubber:
        assert pipeline.step(cluster.jobs.get().pk) == pipeline.DONE
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.FAILED and cluster.failure_reason == "access_denied"
    assert cluster.error_message == f"AccessDenied: {message}"
    assert cluster.stacks.get().stack_id == ""  # nothing was created


def test_retry_deletes_the_rolled_back_stack_and_creates_it_again(world, aws):
    """Against the embedded endpoint: a failed stack is removed and the launch resumes."""
    from clusters.launches import service as launch
    from portal.core.aws import client

    cluster = launched_cluster(world.org_a, name="again", full_stack=False, blueprint="observability")
    job = cluster.jobs.get()
    while pipeline.step(job.pk) != pipeline.DONE:
        pass
    stack = cluster.stacks.get()
    first_id = stack.stack_id
    # Pretend the first attempt rolled back (moto cannot roll back).
    cluster.refresh_from_db()
    cluster.state = ClusterState.CREATING
    cluster.save()
    cluster.transition(ClusterState.FAILED, error="rolled back", reason="stack_failed")
    stack.status = "ROLLBACK_COMPLETE"
    stack.save()
    retry = launch.request_retry(cluster)
    while pipeline.step(retry.pk) != pipeline.DONE:
        pass
    cluster.refresh_from_db()
    stack.refresh_from_db()
    assert cluster.state == ClusterState.READY
    assert stack.stack_id != first_id and stack.status == "CREATE_COMPLETE"
    live = client("cloudformation", organization=world.org_a).list_stacks(StackStatusFilter=["CREATE_COMPLETE"])
    assert [s["StackName"] for s in live["StackSummaries"]].count(stack.stack_name) == 1
