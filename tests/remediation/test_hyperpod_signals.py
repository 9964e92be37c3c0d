"""HyperPod's own signals in the portal, against the embedded endpoint: its cluster events read page by page from a
cursor, each handled once (a node HyperPod replaced on its own closes the portal's fault for it and cancels an
action not started), and its deep health check as a remediation kind, under the same consent rules."""
from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from clusters.health.models import GpuFault
from clusters.remediation import hyperpod_signals, providers, services, tasks
from clusters.remediation.choices import ActionState, ProviderEventKind
from clusters.remediation.models import HyperPodEvent, HyperPodEventCursor, RemediationAction, RemediationPolicy
from portal.core.models import TimelineEntry
from sandbox.aws import model_validation, moto_cluster_events, moto_hyperpod_nodes
from tests.remediation.factories_remediation import FAULTY, hyperpod_cluster
from tests.remediation.test_remediation import run

pytestmark = pytest.mark.django_db


def _settle(cluster, reads: int = 12) -> None:
    """Read the nodes as the portal does until the emulated ones have moved on (a status moves per read)."""
    provider = providers.HyperPod(cluster)
    for _ in range(reads):
        provider.instances()


def _open(cluster, host: str = FAULTY):
    return GpuFault.objects.filter(cluster=cluster, hostname=host, cleared_at__isnull=True)


def test_a_node_hyperpod_replaced_on_its_own_has_its_fault_closed_with_the_event_as_evidence(world, aws):
    cluster = hyperpod_cluster(world.org_a, name="hp-own")
    assert _open(cluster).exists()
    waiting, _ = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    assert waiting.state == ActionState.PROPOSED
    hyperpod_signals.poll(cluster)  # the cursor starts; the instances are listed before any event names one
    old = moto_hyperpod_nodes.node(cluster.name, FAULTY).instance_id
    moto_cluster_events.replace_on_its_own(cluster.name, FAULTY)
    _settle(cluster)
    polled = hyperpod_signals.poll(cluster)
    assert [e.kind for e in polled.kept] == [ProviderEventKind.REPLACE_STARTED, ProviderEventKind.REPLACED]
    assert polled.closed >= 1 and polled.cancelled == 1
    assert not _open(cluster).exists()
    closed = GpuFault.objects.filter(cluster=cluster, hostname=FAULTY).first()
    replaced = polled.kept[1]
    assert closed.evidence["hyperpod_event"]["id"] == replaced.event_id
    assert replaced.hostname == FAULTY and replaced.instance_id != old and replaced.logical_id
    assert polled.kept[0].instance_id == old and polled.kept[0].hostname == FAULTY  # the gone instance's hostname
    waiting.refresh_from_db()
    assert waiting.state == ActionState.CANCELLED and waiting.refused_rule == "provider_acted"
    assert waiting.fault_rows.filter(outcome="cleared").count() == waiting.fault_rows.count() > 0
    told = TimelineEntry.objects.filter(organization=world.org_a, title__startswith="HyperPod on hp-own")
    assert told.count() == 1 and "closed" in told.get().body
    # Nothing is proposed again for the node: its faults are closed.
    assert services.propose_automatic() == 0


def test_each_event_is_handled_once_however_often_it_is_read(world, aws, django_assert_max_num_queries):
    cluster = hyperpod_cluster(world.org_a, name="hp-once")
    hyperpod_signals.poll(cluster)
    moto_cluster_events.reboot_on_its_own(cluster.name, FAULTY)
    _settle(cluster)
    first = hyperpod_signals.poll(cluster)
    assert [e.kind for e in first.kept] == [ProviderEventKind.REBOOT_STARTED, ProviderEventKind.REBOOTED]
    HyperPodEventCursor.objects.filter(cluster=cluster).update(after=None)  # a cursor lost: everything read again
    with django_assert_max_num_queries(12):  # read again, nothing kept: a fixed number of queries
        again = hyperpod_signals.poll(cluster)
    assert again.kept == [] and again.closed == 0
    assert HyperPodEvent.objects.filter(cluster=cluster).count() == 2
    assert TimelineEntry.objects.filter(organization=world.org_a, title__startswith="HyperPod on hp-once").count() == 1


def test_events_are_read_page_by_page_from_the_cursor(world, aws, monkeypatch):
    cluster = hyperpod_cluster(world.org_a, name="hp-paged")
    monkeypatch.setattr(providers, "EVENT_PAGE", 5)
    moto_cluster_events.add_events(cluster.name, "ip-10-1-0-11", 6)  # 12 events: pages of 5, 5 and 2
    model_validation.forget()
    polled = hyperpod_signals.poll(cluster)
    assert len(polled.kept) == 12 and len({e.event_id for e in polled.kept}) == 12
    assert model_validation.checked()[("sagemaker", "ListClusterEvents")] == 3
    cursor = HyperPodEventCursor.objects.get(cluster=cluster)
    assert cursor.after == max(e.event_time for e in polled.kept) and cursor.error == ""
    moto_cluster_events.add_events(cluster.name, "ip-10-1-0-11", 1)
    model_validation.forget()
    later = hyperpod_signals.poll(cluster)
    assert len(later.kept) == 2  # only the new ones; those within the overlap were skipped by their ids
    assert model_validation.checked()[("sagemaker", "ListClusterEvents")] == 3  # the overlap's 12 + 2 new
    assert model_validation.violations() == []


def test_the_portals_own_replacement_is_left_to_its_action(world, aws):
    RemediationPolicy.objects.create(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a, name="hp-ours")
    hyperpod_signals.poll(cluster)
    action, _ = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    action = run(action)
    assert action.state == ActionState.VERIFYING, action.error
    polled = hyperpod_signals.poll(cluster)
    replaced = [e for e in polled.kept if e.kind == ProviderEventKind.REPLACED]
    assert replaced and replaced[0].outcome == f"the portal's action {action.pk}"
    assert polled.closed == 0 and _open(cluster).exists()  # the action's verification settles it


def test_the_periodic_read_covers_ready_hyperpod_clusters_and_keeps_an_error(world, aws, settings):
    cluster = hyperpod_cluster(world.org_a, name="hp-beat")
    gone = hyperpod_cluster(world.org_a, name="hp-gone", in_endpoint=False)
    assert any(e["task"] == "remediation.poll_hyperpod_events" for e in settings.CELERY_BEAT_SCHEDULE.values())
    assert tasks.poll_cluster_events(cluster.pk) == 0
    assert tasks.poll_cluster_events(gone.pk) == 0
    assert "hp-gone" in HyperPodEventCursor.objects.get(cluster=gone).error  # kept; the cursor did not move
    assert HyperPodEventCursor.objects.get(cluster=gone).after is None
    assert HyperPodEventCursor.objects.get(cluster=cluster).error == ""


@pytest.mark.parametrize(("description", "kind"), [
    ("Instance replacement in Cluster c and InstanceGroup g succeeded", ProviderEventKind.REPLACED),
    ("Instance replacement in Cluster c and InstanceGroup g failed", ProviderEventKind.OTHER),
    ("Instance reboot in Cluster c and InstanceGroup g started", ProviderEventKind.REBOOT_STARTED),
    ("Instance deep health check in Cluster c and InstanceGroup g failed", ProviderEventKind.CHECK_FAILED),
    ("Instance creation in Cluster c and InstanceGroup g failed", ProviderEventKind.OTHER),
])
def test_what_an_event_says_happened(description, kind):
    assert hyperpod_signals.classify({"ResourceType": "Instance", "Description": description}) == kind
    assert hyperpod_signals.classify({"ResourceType": "Cluster", "Description": description}) == ProviderEventKind.OTHER


def test_a_lead_starts_a_deep_health_check_the_customer_approves_and_its_progress_is_read_back(world, aws):
    cluster = hyperpod_cluster(world.org_a, name="hp-deep")
    action, _ = services.propose(cluster, kind="check", nodes=[FAULTY], actor=world.lead_a)
    assert action.state == ActionState.PROPOSED and action.fault_rows.count() == 0  # the faults stay proposable
    services.approve(action, world.customer_a)
    action = run(action)
    assert action.state == ActionState.DONE, action.error
    assert [s.name for s in action.steps.all()] == ["locate", "submit", "checked"]
    assert _open(cluster).exists()
    polled = hyperpod_signals.poll(cluster)
    assert {e.kind for e in polled.kept} == {ProviderEventKind.CHECK_STARTED, ProviderEventKind.CHECK_PASSED}
    # A check starts no cool-down: the replacement the lead proposes next is not refused for it.
    replace, _ = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    assert replace.state == ActionState.PROPOSED, replace.refusal


def test_a_failed_deep_health_check_fails_the_action_in_plain_words_and_is_told(world, aws):
    RemediationPolicy.objects.create(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a, name="hp-deep-fail")
    moto_cluster_events.fail_next_health_check(cluster.name, FAULTY)
    action, _ = services.propose(cluster, kind="check", nodes=[FAULTY], actor=world.lead_a)
    action = run(action)
    assert action.state == ActionState.FAILED and action.failure_reason == "check_failed"
    polled = hyperpod_signals.poll(cluster)
    failed = [e for e in polled.kept if e.kind == ProviderEventKind.CHECK_FAILED]
    assert failed and "InstanceStress" in failed[0].failure and failed[0].hostname == FAULTY
    assert TimelineEntry.objects.filter(organization=world.org_a, title__startswith="HyperPod on hp-deep-fail",
                                        severity="high").exists()


def test_the_check_is_refused_to_another_organizations_user_and_to_a_customer(world, client):
    cluster = hyperpod_cluster(world.org_a, name="hp-who", in_endpoint=False)
    url = reverse("remediation:action_propose", args=[cluster.pk])
    client.force_login(world.lead_b)
    assert client.post(url, {"nodes": [FAULTY], "kind": "check"}).status_code == 404
    client.force_login(world.customer_a)
    assert client.post(url, {"nodes": [FAULTY], "kind": "check"}).status_code == 403
    with pytest.raises(PermissionDenied):
        services.propose(cluster, kind="check", nodes=[FAULTY], actor=world.lead_b)
    assert not RemediationAction.objects.exists()


def test_the_check_asks_for_the_second_factor_as_every_proposal_does(world, client, settings):
    settings.SECOND_FACTOR_REQUIRED = True
    cluster = hyperpod_cluster(world.org_a, name="hp-factor", in_endpoint=False)
    client.force_login(world.lead_a)
    response = client.post(reverse("remediation:action_propose", args=[cluster.pk]), {"nodes": [FAULTY],
                                                                                       "kind": "check"})
    assert response.status_code == 302 and "second-factor" in response["Location"]
    assert not RemediationAction.objects.exists()


def test_a_check_is_hyperpods_only(world):
    cluster = hyperpod_cluster(world.org_a, name="pc-check", in_endpoint=False)
    cluster.orchestrator = "parallelcluster"
    cluster.save(update_fields=["orchestrator"])
    action, _ = services.propose(cluster, kind="check", nodes=[FAULTY], actor=world.lead_a)
    assert action.state == ActionState.REFUSED and action.refused_rule == "kind_unsupported"


def test_the_cluster_panel_offers_the_check_to_its_lead_and_says_what_it_does(world, client):
    cluster = hyperpod_cluster(world.org_a, name="hp-panel", in_endpoint=False)
    client.force_login(world.lead_a)
    panel = client.get(reverse("remediation:cluster_panel", args=[cluster.pk])).content.decode()
    assert 'value="check"' in panel and "StartClusterHealthCheck" in panel
    client.force_login(world.customer_a)
    assert 'value="check"' not in client.get(reverse("remediation:cluster_panel", args=[cluster.pk])).content.decode()
