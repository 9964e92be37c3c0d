"""Each action kind on both orchestrators against the embedded endpoint: HyperPod through a real worker (proposed
and approved through the API), ParallelCluster through Slurm's scontrol on the emulated head node."""
from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from clusters import provider_states
from clusters.health.models import GpuFault, SlurmNode
from clusters.remediation import providers, services
from clusters.remediation.choices import ActionState
from clusters.remediation.models import RemediationAction, RemediationPolicy
from sandbox.aws import moto_hyperpod_nodes
from tests.clusters.factories_clusters import launched_cluster, run_pipeline
from tests.remediation.factories_remediation import FAULTY, clean_report, faulty_report, hyperpod_cluster
from tests.remediation.test_remediation import run


def _wait(predicate, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.3)
    return False


@pytest.mark.worker
def test_hyperpod_replacement_proposed_and_approved_through_the_api_runs_on_a_real_worker(world, celery_worker_process):
    cluster = hyperpod_cluster(world.org_a, name="hp-worker")
    before = moto_hyperpod_nodes.node(cluster.name, FAULTY).instance_id
    lead, customer = APIClient(), APIClient()
    lead.force_authenticate(world.lead_a)
    customer.force_authenticate(world.customer_a)
    body = {"cluster": cluster.pk, "nodes": [FAULTY], "kind": "replace", "reason": "XID 79"}
    first = lead.post("/api/health/remediations/", body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = lead.post("/api/health/remediations/", body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201 and again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    action_id = first.json()["id"]
    assert first.json()["state"] == "proposed"
    assert lead.post(f"/api/health/remediations/{action_id}/approve/").status_code == 403
    approved = customer.post(f"/api/health/remediations/{action_id}/approve/")
    assert approved.status_code == 200 and approved.json()["state"] == "approved"
    assert _wait(lambda: RemediationAction.objects.get(pk=action_id).state == ActionState.VERIFYING), \
        RemediationAction.objects.get(pk=action_id).error
    assert moto_hyperpod_nodes.node(cluster.name, FAULTY).instance_id != before
    clean_report(cluster)
    assert _wait(lambda: RemediationAction.objects.get(pk=action_id).state == ActionState.DONE)
    assert not GpuFault.objects.filter(cluster=cluster, hostname=FAULTY, cleared_at__isnull=True).exists()
    detail = customer.get(f"/api/health/remediations/{action_id}/").json()
    assert [s["name"] for s in detail["steps"]] == ["locate", "submit", "replaced"]
    assert all(s["detail"] == "" for s in detail["steps"]) and detail["provider_nodes"] == {}
    assert RemediationAction.objects.count() == 1


@pytest.mark.worker
def test_hyperpod_reboot_in_lead_sa_mode_runs_on_a_real_worker(world, celery_worker_process):
    RemediationPolicy.objects.create(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a, name="hp-reboot")
    before = moto_hyperpod_nodes.node(cluster.name, FAULTY).instance_id
    action, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    assert action.state == ActionState.APPROVED  # the lead SA may act: the worker starts at once
    assert _wait(lambda: RemediationAction.objects.get(pk=action.pk).state == ActionState.VERIFYING), \
        RemediationAction.objects.get(pk=action.pk).error
    assert moto_hyperpod_nodes.node(cluster.name, FAULTY).instance_id == before  # rebooted in place
    clean_report(cluster)
    assert _wait(lambda: RemediationAction.objects.get(pk=action.pk).state == ActionState.DONE)
    assert [s.name for s in RemediationAction.objects.get(pk=action.pk).steps.all()] == ["locate", "submit", "rebooted"]


def _show(cluster, name: str) -> str:
    provider = providers.ParallelCluster(cluster)
    command_id = provider.send(f"scontrol show node {name}")
    status, output = provider.result(command_id)
    for _ in range(20):  # read again until it has finished, as the portal does: SSM shows it a moment late
        if not provider_states.ssm_running(status):
            break
        time.sleep(0.2)
        status, output = provider.result(command_id)
    return output


def _first_node(cluster) -> tuple[str, str]:
    """(Slurm node name, hostname) of the cluster's first node, as the head node lists it."""
    words = dict(w.split("=", 1) for w in _show(cluster, "").splitlines()[0].split())
    return words["NodeName"], words["NodeHostName"]


@pytest.mark.django_db
def test_parallelcluster_drain_reboot_and_replace_through_scontrol_on_the_head_node(world, aws):

    RemediationPolicy.objects.create(organization=world.org_a, mode="lead_sa", cooldown_hours=0)
    cluster = launched_cluster(world.org_a, name="pc-fix", count=2)
    run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert cluster.state == "ready", cluster.error_message
    name, host = _first_node(cluster)
    assert (name, host) == ("compute-st-p5-nodes-1", "ip-10-1-45-12")  # ParallelCluster's naming, not the hostname
    faulty_report(cluster, host)
    drain, _ = services.propose(
        cluster, kind="drain", nodes=[host], actor=world.lead_a, reason="XID 79 on GPU 2")
    drain = run(drain)
    assert drain.state == ActionState.DONE, drain.error
    shown = _show(cluster, name)
    assert "State=DRAIN" in shown and "portal remediation: XID 79 on GPU 2" in shown
    assert drain.steps.get(name="locate").summary == f"Found the nodes in Slurm: {host} is {name}."
    assert drain.steps.get(name="submit").detail.startswith(f"scontrol update nodename={name} state=DRAIN")
    assert drain.steps.get(name="submit").summary == f"Sent the drain of {host} to Slurm on the head node."
    assert drain.provider_nodes == {host: {"id": name}}
    assert dict(SlurmNode.objects.filter(cluster=cluster).values_list("hostname", "node_name")) == {
        host: name, "ip-10-1-45-13": "compute-st-p5-nodes-2"}


    reboot, _ = services.propose(cluster, kind="reboot", nodes=[host], actor=world.lead_a)
    reboot = run(reboot)
    assert reboot.state == ActionState.VERIFYING, reboot.error
    assert "State=IDLE" in _show(cluster, name)
    clean_report(cluster, host)
    assert run(reboot).state == ActionState.DONE

    faulty_report(cluster, host)
    instance = _show(cluster, name).split("InstanceId=")[1].strip()
    replace, _ = services.propose(cluster, kind="replace", nodes=[host], actor=world.lead_a)
    replace = run(replace)
    assert replace.state == ActionState.VERIFYING, replace.error
    assert "State=IDLE" in _show(cluster, name) and instance not in _show(cluster, name)
    assert "POWER_DOWN_FORCE" in replace.steps.get(name="submit").detail

    unknown, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    assert unknown.refused_rule == "unknown_node"


@pytest.mark.django_db
def test_a_hyperpod_reboot_of_more_nodes_than_one_request_takes_goes_in_batches(world, aws):
    """BatchRebootClusterNodes takes at most 25 node ids (botocore's model; the emulation refuses more)."""
    from clusters.health.ingest import service as health
    from sandbox import remediation as remediation_demo

    assert providers.BATCH_LIMIT == moto_hyperpod_nodes.BATCH_LIMIT == 25
    RemediationPolicy.objects.create(organization=world.org_a, mode="lead_sa", max_nodes=30)
    cluster = hyperpod_cluster(world.org_a, name="hp-wide", nodes=300)
    hosts = [f"ip-10-1-0-{10 + i}" for i in range(30)]
    health.ingest(cluster, remediation_demo.report(dict.fromkeys(hosts, False)), "push")
    before = {h: moto_hyperpod_nodes.node(cluster.name, h).instance_id for h in hosts}
    action, _ = services.propose(cluster, kind="reboot", nodes=hosts, actor=world.lead_a)
    assert action.state == ActionState.APPROVED, action.refusal
    action = run(action, limit=80)
    assert action.state == ActionState.VERIFYING, action.error
    submit = action.steps.get(name="submit")
    assert [len(line.removeprefix("accepted: ").split(", ")) for line in submit.detail.splitlines()] == [25, 5]
    assert all(moto_hyperpod_nodes.node(cluster.name, h).instance_id == before[h] for h in hosts)  # rebooted in place
    assert action.steps.get(name="rebooted").summary.endswith("ip-10-1-0-17 and 22 more.")
    assert set(action.progress["seen_down"]) == set(hosts)  # every node went down and came back


@pytest.mark.worker
def test_parallelcluster_drain_reboot_and_replace_run_on_a_real_worker(world, celery_worker_process):
    RemediationPolicy.objects.create(organization=world.org_a, mode="lead_sa", cooldown_hours=0)
    cluster = launched_cluster(world.org_a, name="pc-worker", count=2)
    run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert cluster.state == "ready", cluster.error_message
    name, host = _first_node(cluster)
    faulty_report(cluster, host)

    def settled(action, *states):
        assert _wait(lambda: RemediationAction.objects.get(pk=action.pk).state in states), \
            RemediationAction.objects.get(pk=action.pk).error
        action.refresh_from_db()
        return action

    drain, _ = services.propose(cluster, kind="drain", nodes=[host], actor=world.lead_a, reason="XID 79 on GPU 2")
    drain = settled(drain, ActionState.DONE, ActionState.FAILED)
    assert drain.state == ActionState.DONE and "State=DRAIN" in _show(cluster, name)

    reboot, _ = services.propose(cluster, kind="reboot", nodes=[host], actor=world.lead_a)
    reboot = settled(reboot, ActionState.VERIFYING, ActionState.FAILED)
    assert reboot.state == ActionState.VERIFYING and "State=IDLE" in _show(cluster, name)
    clean_report(cluster, host)
    assert settled(reboot, ActionState.DONE, ActionState.FAILED).state == ActionState.DONE

    faulty_report(cluster, host)
    instance = _show(cluster, name).split("InstanceId=")[1].strip()
    replace, _ = services.propose(cluster, kind="replace", nodes=[host], actor=world.lead_a)
    replace = settled(replace, ActionState.VERIFYING, ActionState.FAILED)
    assert replace.state == ActionState.VERIFYING, replace.error
    assert instance not in _show(cluster, name)
    clean_report(cluster, host)
    replace = settled(replace, ActionState.DONE, ActionState.FAILED)
    assert replace.state == ActionState.DONE
    assert not GpuFault.objects.filter(cluster=cluster, hostname=host, cleared_at__isnull=True).exists()
    assert [s.name for s in replace.steps.all()] == ["locate", "submit", "command"]
