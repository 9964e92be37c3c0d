"""The demo's remediation loop end to end: the seed makes a HyperPod cluster with a faulty node in the portal and on
the embedded endpoint, and proposes its replacement; a customer engineer approves; a real worker replaces the
node; the new instance pushes a clean report to the portal (a live server); the fault closes, linked to the action."""
from __future__ import annotations

import time

import pytest
import requests
from django.urls import reverse

from clusters.health.models import GpuFault, HealthPush, HealthReport
from clusters.models import Cluster
from clusters.remediation import services
from clusters.remediation.choices import ActionState, FaultOutcome
from clusters.remediation.models import RemediationAction
from portal.core.models import TimelineEntry, User
from portal.core.timeline_views import with_tag
from sandbox import program as demo
from sandbox import remediation as remediation_demo
from sandbox.aws import moto_hyperpod_nodes


def _wait(predicate, timeout: float = 90) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.3)
    return False


@pytest.mark.django_db
def test_the_demo_seed_makes_the_cluster_on_the_endpoint_once_and_again_after_a_restart(aws, client):
    context = demo.seed_core()
    remediation_demo.seed(context)
    remediation_demo.seed(context)
    cluster = Cluster.objects.get(name=remediation_demo.NAME)
    assert (cluster.orchestrator, cluster.node_count, cluster.state) == ("hyperpod", 4, "ready")
    assert moto_hyperpod_nodes.node(remediation_demo.NAME, remediation_demo.FAULTY).status == "Running"
    action = RemediationAction.objects.get()
    assert (action.kind, action.state, action.nodes) == ("replace", ActionState.PROPOSED, [remediation_demo.FAULTY])
    assert HealthReport.objects.filter(cluster=cluster).count() == 1
    client.force_login(User.objects.get(username="shirakawa"))  # the customer engineer approves on the page
    assert client.get(reverse("health:cluster_health", kwargs={"pk": cluster.pk})).status_code == 200
    panel = client.get(reverse("remediation:cluster_panel", kwargs={"pk": cluster.pk})).content.decode()
    assert "Approve" in panel and remediation_demo.FAULTY in panel
    token_hint = cluster.health_config.token_hint
    requests.post(f"{aws}/moto-api/reset", timeout=10)  # the demo stopped: the endpoint forgot the cluster
    remediation_demo.seed(context)
    assert moto_hyperpod_nodes.node(remediation_demo.NAME, remediation_demo.FAULTY).instance_id.startswith("i-")
    cluster.health_config.refresh_from_db()
    assert cluster.health_config.token_hint != token_hint  # a fresh token on the new emulated nodes
    assert RemediationAction.objects.count() == 1 and HealthReport.objects.filter(cluster=cluster).count() == 1


@pytest.mark.worker
def test_the_demo_loop_replaces_the_faulty_node_and_its_clean_report_closes_the_fault(
        celery_worker_process, live_server, settings):
    settings.PORTAL_BASE_URL = live_server.url
    context = demo.seed_core()
    remediation_demo.seed(context)
    action = context["remediation_action"]
    cluster = action.cluster
    host = remediation_demo.FAULTY
    faults = set(GpuFault.objects.filter(cluster=cluster, hostname=host, cleared_at__isnull=True)
                 .values_list("pk", flat=True))
    assert len(faults) >= 2 and set(action.fault_rows.values_list("fault_id", flat=True)) == faults
    before = moto_hyperpod_nodes.node(cluster.name, host).instance_id

    services.approve(action, User.objects.get(username="shirakawa"))  # the customer engineer of Shirakawa AI

    def done() -> bool:
        action.refresh_from_db()
        return action.state in (ActionState.DONE, ActionState.FAILED)

    assert _wait(done), (action.state, action.error, list(action.steps.values_list("summary", flat=True)))
    assert action.state == ActionState.DONE, action.error
    assert moto_hyperpod_nodes.node(cluster.name, host).instance_id != before
    assert HealthPush.objects.filter(cluster=cluster).count() == 1  # the new instance's own push
    assert HealthReport.objects.filter(cluster=cluster).count() == 2
    assert not GpuFault.objects.filter(pk__in=faults, cleared_at__isnull=True).exists()
    assert set(action.fault_rows.values_list("outcome", flat=True)) == {FaultOutcome.CLEARED}
    assert [s.name for s in action.steps.all()] == ["locate", "submit", "replaced"]
    titles = list(with_tag(TimelineEntry.objects.filter(organization=cluster.organization), "remediation")
                  .values_list("title", flat=True))
    assert any("approved by" in t for t in titles) and any("done: the nodes reported without the fault" in t
                                                             for t in titles)
