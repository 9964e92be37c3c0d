"""The controller agent's token reaches the controller: the portal writes it to the SSM parameter the HyperPod
lifecycle script and the agent's unit read (at launch and on each rotation), and keeps it only once AWS took it, so
a refused write leaves the old token working. The agent stops when the portal refuses its token, so the unit's next
start reads the rotated one."""
from __future__ import annotations

import socket

import pytest
from django.test import Client
from django.urls import reverse

from clusters.health.models import ClusterHealthConfig
from clusters.health.validation import agent
from clusters.software import release
from portal.core import aws as portal_aws
from portal.core.aws import client as aws_client
from sandbox.aws import moto_agent
from tests.health.factories_health import ClusterFactory


def _parameter(cluster) -> str:
    ssm = aws_client("ssm", organization=cluster.organization, region=cluster.region)
    return ssm.get_parameter(Name=f"/geniac/{cluster.name}/agent-token", WithDecryption=True)["Parameter"]["Value"]


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def hyperpod(world):
    return ClusterFactory(organization=world.org_a, orchestrator="hyperpod", name="hp-token")


def _lead(world) -> Client:
    client = Client()
    client.force_login(world.lead_a)
    return client


def test_the_parameter_is_where_the_bundle_says_and_holds_the_token_the_portal_accepts(hyperpod, aws):
    token = agent.publish_token(hyperpod)
    assert release.agent_token_parameter("hp-token") == "/geniac/hp-token/agent-token"
    assert _parameter(hyperpod) == token
    config = ClusterHealthConfig.objects.get(cluster=hyperpod)
    assert config.token_matches(token)
    ssm = aws_client("ssm", organization=hyperpod.organization, region=hyperpod.region)
    assert ssm.get_parameter(Name="/geniac/hp-token/agent-token")["Parameter"]["Type"] == "SecureString"
    # A launch step run again does not rotate what the controller may already have read.
    assert agent.publish_token(hyperpod, only_if_unset=True) is None
    assert _parameter(hyperpod) == token and ClusterHealthConfig.objects.get(cluster=hyperpod).token_matches(token)


def test_a_refused_write_changes_nothing(hyperpod, aws, settings):
    token = agent.publish_token(hyperpod)
    settings.AWS_ENDPOINT_URL = _closed_port()
    portal_aws.clear_credentials()
    with pytest.raises(portal_aws.AwsError):
        agent.publish_token(hyperpod)
    assert ClusterHealthConfig.objects.get(cluster=hyperpod).token_matches(token)
    settings.AWS_ENDPOINT_URL = aws
    portal_aws.clear_credentials()
    assert _parameter(hyperpod) == token


def test_rotating_on_the_page_writes_the_parameter_and_a_refusal_keeps_the_old_token(world, hyperpod, aws, settings):
    url = reverse("health:rotate_token", kwargs={"pk": hyperpod.pk})
    assert _lead(world).post(url).status_code == 302
    first = _parameter(hyperpod)
    assert ClusterHealthConfig.objects.get(cluster=hyperpod).token_matches(first)
    settings.AWS_ENDPOINT_URL = _closed_port()
    portal_aws.clear_credentials()
    response = _lead(world).post(url, follow=True)
    assert "could not be written to the cluster&#x27;s SSM parameter" in response.content.decode()
    assert ClusterHealthConfig.objects.get(cluster=hyperpod).token_matches(first)


def test_rotating_through_the_api_answers_502_when_aws_refuses(world, hyperpod, aws, settings):
    url = reverse("health-api:rotate-token", kwargs={"cluster_id": hyperpod.pk})
    created = _lead(world).post(url)
    assert created.status_code == 201 and _parameter(hyperpod) == created.json()["token"]
    settings.AWS_ENDPOINT_URL = _closed_port()
    portal_aws.clear_credentials()
    refused = _lead(world).post(url)
    assert refused.status_code == 502 and "nothing changed" in refused.json()["detail"]
    assert ClusterHealthConfig.objects.get(cluster=hyperpod).token_matches(created.json()["token"])


def test_a_parallelcluster_token_stays_in_the_portal(world, aws):
    cluster = ClusterFactory(organization=world.org_a, orchestrator="parallelcluster", name="pc-token")
    token = agent.rotate_token(cluster)
    assert ClusterHealthConfig.objects.get(cluster=cluster).token_matches(token)
    ssm = aws_client("ssm", organization=cluster.organization, region=cluster.region)
    assert ssm.describe_parameters()["Parameters"] == []


def test_the_agent_stops_when_its_token_is_rotated_away(hyperpod, aws, live_server, tmp_path):
    token = agent.publish_token(hyperpod)
    program = moto_agent.program().Agent(live_server.url, hyperpod.pk, token, str(tmp_path), wait=0, allow_http=True)
    assert program.once() == 0  # accepted: nothing queued
    agent.publish_token(hyperpod)
    assert program.serve(end_when_refused=True) is False  # returns at the first refusal, for the unit to restart it


def test_an_endpoint_that_never_answers_fails_the_write_within_its_bounds(hyperpod, aws, settings, monkeypatch):
    """A person's rotation waits on the PutParameter: an endpoint that takes the connection and says nothing fails
    it after the bounded attempts (the default client would retry for minutes), and nothing changes."""
    token = agent.publish_token(hyperpod)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections are taken and never answered
        monkeypatch.setattr(agent, "PUBLISH_TIMEOUTS", (1, 1))
        settings.AWS_ENDPOINT_URL = f"http://127.0.0.1:{silent.getsockname()[1]}"
        portal_aws.clear_credentials()
        with pytest.raises(portal_aws.AwsError):
            agent.publish_token(hyperpod)
    assert ClusterHealthConfig.objects.get(cluster=hyperpod).token_matches(token)
