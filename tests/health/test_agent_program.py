"""The agent program the HyperPod lifecycle scripts install on the controller (``geniac_agent.py``), run for real
against the live test server: it claims its cluster's work, runs each item on the emulated Slurm and posts the
result; killed after running an item and started again, it posts what it had and does not run it twice."""
from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from clusters.health.models import AgentWorkItem, ClusterHealthConfig, SlurmNode
from clusters.health.validation import agent, headnode
from clusters.health.validation import service as validation
from clusters.remediation import execution, providers, services
from clusters.remediation.models import RemediationPolicy
from portal.core.aws import client as aws_client
from sandbox import remediation as demo
from sandbox.aws import moto_agent
from tests.health.factories_health import ClusterFactory
from tests.remediation.factories_remediation import faulty_report

WORKERS = ["ip-10-1-1-10", "ip-10-1-1-11", "ip-10-1-1-12"]


def hyperpod_on_endpoint(org, name: str):
    cluster = ClusterFactory(organization=org, orchestrator="hyperpod", name=name, outputs={"ClusterName": name})
    common = {"LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-lifecycle/", "OnCreate": "on_create.sh"},
              "ExecutionRole": "arn:aws:iam::123456789012:role/hp"}
    aws_client("sagemaker", organization=org, region=cluster.region).create_cluster(ClusterName=name, InstanceGroups=[
        {"InstanceGroupName": "controller-machine", "InstanceType": "ml.m5.12xlarge", "InstanceCount": 1,
         "ThreadsPerCore": 2, **common},
        {"InstanceGroupName": "worker-group-1", "InstanceType": "ml.p5.48xlarge", "InstanceCount": len(WORKERS),
         "ThreadsPerCore": 1, **common}])
    config, _ = ClusterHealthConfig.objects.get_or_create(cluster=cluster)
    token = config.rotate_token()
    config.save()
    return cluster, token


@pytest.fixture
def cluster_and_runs(world, aws):
    cluster, token = hyperpod_on_endpoint(world.org_a, "hp-agent")
    emulated = moto_agent.runner(world.org_a.aws_account_id, cluster.region, "hp-agent")
    runs = []

    def run(argv, stdin="", timeout=60):
        runs.append(argv)
        return emulated(argv, stdin, timeout)

    return cluster, token, run, runs


def test_the_agent_claims_runs_and_posts_its_clusters_work(cluster_and_runs, live_server, tmp_path):
    cluster, token, run, runs = cluster_and_runs
    program = moto_agent.program().Agent(live_server.url, cluster.pk, token, str(tmp_path), run=run, wait=0,
                                         allow_http=True)
    listing = headnode.send(cluster, headnode.AGENT, [headnode.listing()], comment="names")
    drain = headnode.send(cluster, headnode.AGENT,
                          [providers.scontrol_work("drain", [WORKERS[0]], "XID 79; rm -rf /")], comment="drain")
    assert program.once() == 2
    assert [argv[:2] for argv in runs] == [["sinfo", "--Node"], ["scontrol", "update"]]
    assert runs[1][-1] == "reason=portal remediation: XID 79; rm -rf /"  # one argument: no shell ever reads it
    found = headnode.invocation(cluster, headnode.AGENT, listing)
    assert found.status == "Success" and sorted(line.split()[1] for line in found.stdout.splitlines()) == WORKERS
    assert sorted(SlurmNode.objects.filter(cluster=cluster).values_list("hostname", flat=True)) == WORKERS
    assert headnode.invocation(cluster, headnode.AGENT, drain).status == "Success"
    status, shown, _ = run(["scontrol", "show", "nodes", "--json"])
    states = {n["name"]: (n["state"][0], n["reason"]) for n in json.loads(shown)["nodes"]}
    assert states[WORKERS[0]] == ("DRAIN", "portal remediation: XID 79; rm -rf /")
    assert states[WORKERS[1]] == ("IDLE", "")
    assert program.once() == 0  # nothing more: done items are never handed out again
    assert ClusterHealthConfig.objects.get(cluster=cluster).agent_seen_at is not None


def test_a_restarted_agent_posts_what_it_ran_and_never_runs_an_item_twice(cluster_and_runs, live_server, tmp_path):
    cluster, token, run, runs = cluster_and_runs
    program = moto_agent.program()
    first = program.Agent(live_server.url, cluster.pk, token, str(tmp_path), run=run, wait=0, allow_http=True)
    ran = headnode.send(cluster, headnode.AGENT, [headnode.listing()])
    cut = headnode.send(cluster, headnode.AGENT, [providers.scontrol_work("resume", [WORKERS[1]], "")])
    items = first.poll()
    assert [i["id"] for i in items] == [int(ran.removeprefix("agent-")), int(cut.removeprefix("agent-"))]
    first.execute(items[0])  # ran, then killed before it posted
    first.remember(items[1]["id"], {"state": "started"})  # killed while running the second
    assert len(runs) == 1
    # The portal hands both out again once their lease runs out; the agent started again with the same state
    # directory posts the first's result and answers the second as not run: nothing runs a second time.
    AgentWorkItem.objects.filter(cluster=cluster).update(lease_until=timezone.now() - timedelta(seconds=1))
    second = program.Agent(live_server.url, cluster.pk, token, str(tmp_path), run=run, wait=0, allow_http=True)
    assert second.once() == 2
    assert len(runs) == 1
    listing = headnode.invocation(cluster, headnode.AGENT, ran)
    assert listing.status == "Success" and len(listing.stdout.splitlines()) == len(WORKERS)
    unknown = AgentWorkItem.objects.get(pk=items[1]["id"])
    assert (unknown.state, unknown.exit_status) == ("failed", -1) and "does not run an item twice" in unknown.stderr
    assert headnode.invocation(cluster, headnode.AGENT, cut).status == "Failed"
    # A result it posted already, posted again (its answer was lost), changes nothing.
    assert second.post_result(items[0]["id"], {"exit_status": 3, "stdout": "", "stderr": "", "ran": True}) == {
        "id": items[0]["id"], "state": "done", "applied": False}
    assert AgentWorkItem.objects.get(pk=items[0]["id"]).exit_status == 0


def test_another_clusters_token_gets_nothing_and_answers_nothing(world, aws, live_server, tmp_path):
    mine, _token = hyperpod_on_endpoint(world.org_a, "hp-mine")
    _theirs, their_token = hyperpod_on_endpoint(world.org_b, "hp-theirs")
    item = headnode.send(mine, headnode.AGENT, [headnode.listing()])
    intruder = moto_agent.program().Agent(live_server.url, mine.pk, their_token, str(tmp_path), wait=0,
                                          allow_http=True, run=lambda *a: (0, "", ""))
    with pytest.raises(OSError, match="404"):
        intruder.poll()
    with pytest.raises(OSError, match="404"):
        intruder.post_result(int(item.removeprefix("agent-")), {"exit_status": 0, "stdout": "forged"})
    assert AgentWorkItem.objects.get(pk=int(item.removeprefix("agent-"))).state == "queued"


def test_a_poll_waiting_for_work_returns_when_an_item_arrives(cluster_and_runs, live_server, tmp_path, settings):
    """The long poll: an item queued while the agent's poll waits is handed to that poll (a poll that did not wait
    would have answered nothing, the queue being empty when it came in)."""
    settings.AGENT_POLL_SECONDS = 30
    cluster, token, run, _runs = cluster_and_runs
    program = moto_agent.program().Agent(live_server.url, cluster.pk, token, str(tmp_path), run=run, wait=30,
                                         allow_http=True)
    got = []
    waiting = threading.Thread(target=lambda: got.append(program.poll()))
    waiting.start()
    seen = ClusterHealthConfig.objects.filter(cluster=cluster, agent_seen_at__isnull=False)
    for _ in range(100):  # the poll came in (it marks the agent seen first) and found nothing
        if seen.exists():
            break
        waiting.join(0.1)
    assert seen.exists() and not got
    command = headnode.send(cluster, headnode.AGENT, [headnode.listing()])
    waiting.join(30)
    assert not waiting.is_alive()
    assert [i["id"] for i in got[0]] == [int(command.removeprefix("agent-"))]


def test_a_hyperpod_drain_reaches_slurm_through_the_controllers_agent(world, aws, live_server):
    """HyperPod's node API reboots and replaces; a drain is Slurm's, which the portal reaches through the agent: the
    remediation queues the node listing and the scontrol drain as work items, the agent (running in the endpoint as
    on the controller) runs them, and the action ends done with the node drained for the fault's reason."""
    RemediationPolicy.objects.create(organization=world.org_a, mode="lead_sa", cooldown_hours=0)
    cluster, token = hyperpod_on_endpoint(world.org_a, "hp-drain")
    faulty_report(cluster, WORKERS[0])
    refused, _ = services.propose(cluster, kind="drain", nodes=[WORKERS[0]], actor=world.lead_a, key="before")
    assert refused.refused_rule == "agent_absent"  # never heard from: refused before anything is queued
    moto_agent.start(world.org_a.aws_account_id, cluster.region, "hp-drain", url=live_server.url, cluster_id=cluster.pk,
                     token=token, wait=1)
    try:
        for _ in range(150):
            if agent.absent(cluster) == "":
                break
            time.sleep(0.2)
        drain, _ = services.propose(cluster, kind="drain", nodes=[WORKERS[0]], actor=world.lead_a,
                                    reason="XID 79 on GPU 2", key="after")
        assert drain.state == "approved"
        for _ in range(150):
            if execution.step(drain.pk)[0] == execution.DONE:
                break
            time.sleep(0.2)
    finally:
        moto_agent.stop(world.org_a.aws_account_id, cluster.region, "hp-drain")
    drain.refresh_from_db()
    assert drain.state == "done", drain.error
    assert [s.name for s in drain.steps.all()] == ["locate", "submit", "command"]
    assert drain.steps.get(name="submit").detail.startswith(f"scontrol update nodename={WORKERS[0]} state=DRAIN")
    assert set(AgentWorkItem.objects.filter(cluster=cluster).values_list("kind", "state")) == {
        ("nodes", "done"), ("scontrol", "done")}
    run = moto_agent.runner(world.org_a.aws_account_id, cluster.region, "hp-drain")
    states = {n["name"]: (n["state"][0], n["reason"]) for n in json.loads(run(["scontrol", "show", "nodes", "--json"])[1])["nodes"]}
    assert states[WORKERS[0]] == ("DRAIN", "portal remediation: XID 79 on GPU 2")


def test_the_demos_hyperpod_cluster_validates_through_its_controllers_agent(world, aws, live_server, settings):
    """The demo makes its HyperPod Slurm cluster on the endpoint, seeds a degraded link on one node and starts the
    agent on its controller (polling the demo's web server, here the live server): a pairwise sweep started there runs
    through the agent and names that node, from the figures alone (it is neither the faulty node nor the last)."""
    settings.PORTAL_BASE_URL = live_server.url
    cluster = demo._cluster(world.org_a)
    try:
        assert demo.ensure_on_endpoint(cluster)
        demo.health.ingest(cluster, demo.report({host: False for host in demo.HOSTS}), "push")
        for _ in range(150):
            if agent.absent(cluster) == "":
                break
            time.sleep(0.2)
        job, created = validation.start(cluster, actor=world.lead_a, pairwise_sweep=True)
        assert created and job.nodes == list(demo.HOSTS) and demo.SLOW_LINK not in (demo.FAULTY, demo.HOSTS[-1])
        for _ in range(300):
            job.refresh_from_db()
            if job.state not in ("pending", "submitted"):
                break
            if job.state == "pending":
                type(job).objects.filter(pk=job.pk).update(lease_until=None)
                validation.step(job.pk)
            time.sleep(0.2)
    finally:
        moto_agent.stop(world.org_a.aws_account_id, cluster.region, demo.NAME)
    assert (job.state, job.verdict, job.slow_nodes) == ("done", "fail", [demo.SLOW_LINK]), job.error
    assert job.target == headnode.AGENT
