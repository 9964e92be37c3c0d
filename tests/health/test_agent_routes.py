"""The controller agent's routes (HyperPod Slurm, docs/DECISIONS.md 42): a cluster's token polls for that cluster's
work only, a result is applied once, a claim whose lease ran out is handed out again, and a poll that finds nothing
returns empty after its bounded wait."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from clusters.health.models import AgentWorkItem, ClusterHealthConfig, SlurmNode
from clusters.health.validation import agent, headnode
from tests.health.factories_health import AgentWorkItemFactory, ClusterFactory
from tests.queries import count_queries

pytestmark = pytest.mark.django_db


def _token(cluster) -> str:
    config, _ = ClusterHealthConfig.objects.get_or_create(cluster=cluster)
    token = config.rotate_token()
    config.save()
    return token


def _as(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def poll(client, cluster, wait=0):
    return client.post(f"/api/health/clusters/{cluster.pk}/agent/poll/", {"wait": wait, "version": "1.0.0"},
                       format="json")


def result(client, cluster, item, **body):
    return client.post(f"/api/health/clusters/{cluster.pk}/agent/items/{item.pk}/result/",
                       {"exit_status": 0, **body}, format="json")


def test_a_token_gets_its_own_clusters_work_only(world):
    mine = ClusterFactory(organization=world.org_a, orchestrator="hyperpod", name="hp-mine")
    theirs = ClusterFactory(organization=world.org_b, orchestrator="hyperpod", name="hp-theirs")
    own = AgentWorkItemFactory(cluster=mine)
    other = AgentWorkItemFactory(cluster=theirs)
    client = _as(_token(mine))
    _token(theirs)
    answer = poll(client, mine)
    assert answer.status_code == 200
    assert [i["id"] for i in answer.json()["items"]] == [own.pk]
    assert answer.json()["items"][0]["kind"] == "nodes"
    # Another cluster's work: its URL and its items are not found with this token, and nothing is claimed or answered.
    assert poll(client, theirs).status_code == 404
    assert result(client, theirs, other).status_code == 404
    assert result(client, mine, other).status_code == 404
    other.refresh_from_db()
    assert (other.state, other.attempts, other.stdout) == ("queued", 0, "")
    assert poll(_as("gh1.not-a-token"), mine).status_code == 401
    assert poll(APIClient(), mine).status_code == 401
    config = ClusterHealthConfig.objects.get(cluster=mine)
    assert config.agent_seen_at is not None and config.agent_version == "1.0.0"
    assert ClusterHealthConfig.objects.get(cluster=theirs).agent_seen_at is None


def test_a_result_is_applied_once_and_a_repeat_is_answered_without_change(world):
    cluster = ClusterFactory(organization=world.org_a, orchestrator="hyperpod", name="hp-once")
    item = AgentWorkItemFactory(cluster=cluster)
    client = _as(_token(cluster))
    assert poll(client, cluster).json()["items"][0]["id"] == item.pk
    listing = "ip-10-1-1-10 ip-10-1-1-10 10.1.1.10\nip-10-1-1-11 ip-10-1-1-11 10.1.1.11\n"
    first = result(client, cluster, item, stdout=listing)
    assert first.status_code == 201 and first.json() == {"id": item.pk, "state": "done", "applied": True}
    again = result(client, cluster, item, exit_status=1, stdout="", stderr="a second run")
    assert again.status_code == 200 and again.json() == {"id": item.pk, "state": "done", "applied": False}
    item.refresh_from_db()
    assert (item.state, item.exit_status, item.stdout, item.stderr) == ("done", 0, listing, "")
    assert item.finished_at is not None and item.lease_until is None
    # The listing fed the cluster's map of Slurm's names, and the portal reads the item as a finished command.
    assert dict(SlurmNode.objects.filter(cluster=cluster).values_list("hostname", "node_name")) == {
        "ip-10-1-1-10": "ip-10-1-1-10", "ip-10-1-1-11": "ip-10-1-1-11"}
    found = headnode.invocation(cluster, headnode.AGENT, f"agent-{item.pk}")
    assert (found.status, found.exit_status, found.stdout) == ("Success", 0, listing)
    assert poll(client, cluster).json()["items"] == []  # done: never handed out again


def test_an_item_the_agent_could_not_run_fails_and_reads_as_a_failed_command(world):
    cluster = ClusterFactory(organization=world.org_a, orchestrator="hyperpod", name="hp-refused")
    item = AgentWorkItemFactory(cluster=cluster, kind="scontrol", payload={"action": "drain", "nodes": ["a;b"]})
    client = _as(_token(cluster))
    poll(client, cluster)
    assert result(client, cluster, item, exit_status=-1, ran=False, stderr="not Slurm node names").status_code == 201
    found = headnode.invocation(cluster, headnode.AGENT, f"agent-{item.pk}")
    assert (found.status, found.stderr) == ("Failed", "not Slurm node names")
    assert headnode.invocation(cluster, headnode.AGENT, "agent-999999").status == "Failed"


def test_a_claim_whose_lease_ran_out_is_queued_again_and_handed_out_once_more(world):
    cluster = ClusterFactory(organization=world.org_a, orchestrator="hyperpod", name="hp-lease")
    item = AgentWorkItemFactory(cluster=cluster)
    client = _as(_token(cluster))
    assert [i["id"] for i in poll(client, cluster).json()["items"]] == [item.pk]
    item.refresh_from_db()
    assert (item.state, item.attempts) == ("claimed", 1)
    assert headnode.invocation(cluster, headnode.AGENT, f"agent-{item.pk}").status == "InProgress"
    assert poll(client, cluster).json()["items"] == []  # leased: not handed out twice
    AgentWorkItem.objects.filter(pk=item.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert agent.requeue() == 1
    item.refresh_from_db()
    assert (item.state, item.lease_until) == ("queued", None)
    assert headnode.invocation(cluster, headnode.AGENT, f"agent-{item.pk}").status == "Pending"
    AgentWorkItem.objects.filter(pk=item.pk).update(state="claimed", lease_until=timezone.now() - timedelta(seconds=1))
    answer = poll(client, cluster).json()["items"]  # a poll requeues what ran out before it claims
    assert [(i["id"], i["attempts"]) for i in answer] == [(item.pk, 2)]


def test_a_poll_waits_no_longer_than_the_portal_allows_and_its_queries_do_not_grow_with_the_items(world, settings):
    settings.AGENT_POLL_SECONDS = 0
    cluster = ClusterFactory(organization=world.org_a, orchestrator="hyperpod", name="hp-count")
    client = _as(_token(cluster))
    assert poll(client, cluster, wait=3600).json()["items"] == []  # capped at AGENT_POLL_SECONDS (0 here)
    AgentWorkItemFactory(cluster=cluster)
    one = count_queries(lambda: poll(client, cluster))
    AgentWorkItemFactory.create_batch(agent.BATCH, cluster=cluster)
    many = count_queries(lambda: poll(client, cluster))
    assert many <= one
    assert AgentWorkItem.objects.filter(cluster=cluster, state="claimed").count() == 1 + agent.BATCH

