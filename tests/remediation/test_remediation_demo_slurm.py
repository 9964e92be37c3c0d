"""The demo's ParallelCluster loop end to end: the seed launches ``kotoba-p5-pretrain`` on the embedded endpoint,
its health report names the instances' hostnames (learned from Slurm), the lead SA proposes a reboot of the faulty
node, the customer engineer ``kotoba`` approves, a real worker maps the hostname to Slurm's node name and reboots it
with scontrol, the node reports itself healthy again (to a live server) and the action ends done."""
from __future__ import annotations

import time

import pytest

from clusters.health.models import GpuFault, SlurmNode
from clusters.models import Cluster
from clusters.remediation import services
from clusters.remediation.choices import ActionState, FaultOutcome
from portal.core.models import Membership, User
from sandbox import clusters as demo_clusters
from sandbox import health as demo_health
from sandbox import program as demo
from sandbox import remediation as remediation_demo


def _wait(predicate, timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.3)
    return False


@pytest.mark.worker
def test_a_reboot_on_kotoba_p5_pretrain_approved_by_kotoba_ends_done(celery_worker_process, live_server, settings):
    settings.PORTAL_BASE_URL = live_server.url
    context = demo.seed_core()
    for seeder in (demo_clusters.seed, demo_health.seed, remediation_demo.seed):
        context = seeder(context)
    cluster = Cluster.objects.get(name="kotoba-p5-pretrain")
    assert cluster.state == "ready", cluster.error_message
    names = dict(SlurmNode.objects.filter(cluster=cluster).values_list("hostname", "node_name"))
    assert len(names) == cluster.node_count and all("-st-" in n for n in names.values())
    fault = GpuFault.objects.filter(cluster=cluster, xid=79, cleared_at__isnull=True).get()
    host = fault.hostname
    assert host in names and host.startswith("ip-")  # the report names the instance, Slurm its own name

    lead = Membership.objects.filter(organization=cluster.organization, role="lead_sa").get().user
    action, _ = services.propose(cluster, kind="reboot", nodes=[host], actor=lead, reason="XID 79")
    assert action.state == ActionState.PROPOSED, action.refusal
    services.approve(action, User.objects.get(username="kotoba"))

    def settled() -> bool:
        action.refresh_from_db()
        return action.state in (ActionState.DONE, ActionState.FAILED)

    assert _wait(settled), (action.state, list(action.steps.values_list("summary", flat=True)))
    assert action.state == ActionState.DONE, (action.error, list(action.steps.values_list("summary", flat=True)))
    assert [s.name for s in action.steps.all()] == ["locate", "submit", "command"]
    assert "scontrol reboot ASAP nextstate=RESUME" in action.steps.get(name="submit").detail
    assert action.steps.get(name="submit").detail.endswith(f" {names[host]}")
    assert set(action.fault_rows.values_list("outcome", flat=True)) == {FaultOutcome.CLEARED}
    assert not GpuFault.objects.filter(cluster=cluster, hostname=host, cleared_at__isnull=True).exists()
