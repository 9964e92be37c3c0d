"""Node remediation: consent modes, guardrails (one action per node under real concurrency), execution on the
embedded endpoint's HyperPod (reboot and replace, throttling, provider refusals), verification by the next health
report, re-opening and the escalation to the EC2 service team."""
from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.urls import reverse
from django.utils import translation

from clusters.health.models import GpuFault
from clusters.remediation import execution, services
from clusters.remediation.choices import ActionState, FaultOutcome
from clusters.remediation.models import RemediationAction, RemediationNode
from portal.core.models import TimelineEntry
from portal.core.timeline_views import with_tag
from portal.engagement.models import Escalation
from sandbox.aws import moto_hyperpod_nodes
from tests import concurrency
from tests.health.factories_health import ClusterFactory
from tests.remediation.factories_remediation import (
    FAULTY,
    RemediationPolicyFactory,
    clean_report,
    faulty_report,
    hyperpod_cluster,
)


def run(action, limit: int = 40) -> RemediationAction:
    """Step the action (in this process) until it stops polling; the action reloaded."""
    for _ in range(limit):
        outcome, _seconds = execution.step(action.pk)
        if outcome == execution.DONE:
            break
    action.refresh_from_db()
    return action


@pytest.mark.django_db
def test_approval_mode_waits_for_the_customer_and_only_the_customer_approves(world):
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    action, created = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    assert created and action.state == ActionState.PROPOSED
    assert action.fault_rows.count() == GpuFault.objects.filter(cluster=cluster, hostname=FAULTY).count() > 0
    with pytest.raises(PermissionDenied):
        services.approve(action, world.lead_a)
    with pytest.raises(PermissionDenied):
        services.approve(action, world.customer_b)
    with pytest.raises(PermissionDenied):
        services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.customer_a)
    services.approve(action, world.customer_a)
    assert (action.state, action.approved_by) == (ActionState.APPROVED, world.customer_a)
    titles = list(with_tag(TimelineEntry.objects.filter(organization=world.org_a), "remediation")
                  .values_list("title", "visibility"))
    assert any("proposed by" in t and v == "shared" for t, v in titles)
    assert any("approved by" in t for t, _v in titles)


@pytest.mark.django_db
def test_lead_sa_mode_approves_at_once_and_a_repeat_lands_on_the_same_action(world):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    first, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a, key="k1")
    again, created = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a, key="k1")
    same, created2 = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.staff)
    assert first.state == ActionState.APPROVED and first.approved_by == world.lead_a
    assert (again.pk, same.pk, created, created2) == (first.pk, first.pk, False, False)
    assert RemediationAction.objects.count() == 1


@pytest.mark.django_db
def test_guardrails_refuse_and_say_which_rule(world):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa", max_nodes=5)
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False, nodes=4)
    faulty_report(cluster, "ip-10-1-0-11")
    drain, _ = services.propose(cluster, kind="drain", nodes=[FAULTY], actor=world.lead_a)  # no agent to reach Slurm
    assert (drain.state, drain.refused_rule) == (ActionState.REFUSED, "agent_absent")
    slurm_only = ClusterFactory(organization=world.org_a, name="pc-no-check", orchestrator="parallelcluster")
    check, _ = services.propose(slurm_only, kind="check", nodes=[FAULTY], actor=world.lead_a)
    assert (check.state, check.refused_rule) == (ActionState.REFUSED, "kind_unsupported")
    unknown, _ = services.propose(cluster, kind="reboot", nodes=["ip-9-9-9-9"], actor=world.lead_a)
    assert unknown.refused_rule == "unknown_node" and "ip-9-9-9-9" in unknown.refusal
    two, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY, "ip-10-1-0-11"], actor=world.lead_a)
    assert two.refused_rule == "max_nodes" and "at most 1 of 4" in two.refusal  # 10 % of 4 nodes, at least one
    one, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    busy, _ = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    assert one.state == ActionState.APPROVED and busy.refused_rule == "node_busy"
    other, _ = services.propose(cluster, kind="reboot", nodes=["ip-10-1-0-11"], actor=world.lead_a)
    assert other.refused_rule == "max_nodes"
    one.transition(ActionState.RUNNING)
    one.transition(ActionState.VERIFYING)
    one.transition(ActionState.DONE)
    cooled, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    assert cooled.refused_rule == "cooldown"
    cluster.state = "deleting"
    cluster.save()
    gone, _ = services.propose(cluster, kind="reboot", nodes=["ip-10-1-0-11"], actor=world.lead_a)
    assert gone.refused_rule == "cluster_deleting" and gone.refusal.startswith("Refused: the cluster is being deleted")


@pytest.mark.django_db
def test_automatic_mode_remediates_the_named_fault_kinds(world):
    RemediationPolicyFactory(organization=world.org_a, mode="automatic", automatic_kinds=["xid_79"])
    hyperpod_cluster(world.org_a, in_endpoint=False)
    assert services.propose_automatic() == 1
    action = RemediationAction.objects.get()
    assert (action.kind, action.state, action.automatic, action.nodes) == ("reboot", "approved", True, [FAULTY])
    assert services.propose_automatic() == 0  # the fault is answered; the missing GPU is not a named kind


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL: SQLite serializes every writer")
@pytest.mark.django_db(transaction=True)
def test_two_lead_sas_proposing_the_same_node_at_once_make_one_action(world):
    from clusters.remediation.models import RemediationPolicy
    from portal.core.models import Membership

    RemediationPolicy.objects.create(organization=world.org_a, mode="lead_sa")
    second = Membership.objects.create(user=type(world.lead_a).objects.create(username="lead_a2"),
                                       organization=world.org_a, role="lead_sa").user
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    clients = concurrency.signed_in(world.lead_a, 4, api=True) + concurrency.signed_in(second, 4, api=True)
    body = {"cluster": cluster.pk, "nodes": [FAULTY], "kind": "replace"}
    answers = concurrency.race(8, lambda i: clients[i].post("/api/health/remediations/", body, format="json"))
    assert all(not isinstance(a, BaseException) and a.status_code in (200, 201) for a in answers), answers
    assert RemediationAction.objects.count() == 1
    assert RemediationNode.objects.filter(active=True).count() == 1
    assert len({a.json()["id"] for a in answers}) == 1


@pytest.mark.django_db
def test_hyperpod_replacement_gets_a_new_instance_and_the_next_clean_report_closes_the_fault(world, aws):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a)
    before = moto_hyperpod_nodes.node(cluster.name, FAULTY).instance_id
    action, _ = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    action = run(action)
    assert action.state == ActionState.VERIFYING, action.error
    after = moto_hyperpod_nodes.node(cluster.name, FAULTY).instance_id
    assert after != before and action.provider_nodes[FAULTY]["id"] == before
    assert action.progress["new_instances"] == {FAULTY: after}
    assert [s.name for s in action.steps.all()] == ["locate", "submit", "replaced"]
    assert action.fault_rows.filter(outcome=FaultOutcome.REMEDIATING).count() == action.fault_rows.count()
    clean_report(cluster)
    action = run(action)
    assert action.state == ActionState.DONE
    assert not GpuFault.objects.filter(cluster=cluster, hostname=FAULTY, cleared_at__isnull=True).exists()
    assert set(action.fault_rows.values_list("outcome", flat=True)) == {FAULTY and FaultOutcome.CLEARED}
    assert not RemediationNode.objects.filter(active=True).exists()


@pytest.mark.django_db
def test_reboot_is_sent_once_even_when_a_step_is_delivered_again(world, aws):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a)
    action, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    for _ in range(3):  # approved → running, locate, submit
        execution.step(action.pk)
    action.refresh_from_db()
    assert action.progress["submitted"]
    # A worker killed after the provider took the call but before it saved: the answer is lost.
    del action.progress["submitted"]
    RemediationAction.objects.filter(pk=action.pk).update(progress=action.progress)
    action = run(action)
    assert action.state == ActionState.VERIFYING
    assert [s.name for s in action.steps.all()].count("submit") == 1
    assert "adopt" in [s.name for s in action.steps.all()]


@pytest.mark.django_db
def test_throttling_is_retried_with_backoff_then_fails_in_the_portals_words(world, aws, settings):
    settings.AWS_MAX_ATTEMPTS = 0  # botocore's own retries off (it counts retries): the portal's backoff is under test
    settings.JOB_MAX_AWS_ERRORS = 3
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a)
    action, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    execution.step(action.pk)
    execution.step(action.pk)
    moto_hyperpod_nodes.throttle("BatchRebootClusterNodes", 1)
    outcome, seconds = execution.step(action.pk)
    assert outcome == execution.POLL and seconds == 2 * settings.REMEDIATION_POLL_SECONDS
    action = run(action)
    assert action.state == ActionState.VERIFYING, action.error
    moto_hyperpod_nodes.throttle("BatchReplaceClusterNodes", 10)
    clean_report(cluster)
    run(action)
    other, _ = services.propose(cluster, kind="replace", nodes=["ip-10-1-0-11"], actor=world.lead_a)
    assert other.refused_rule == "unknown_node"
    faulty_report(cluster, "ip-10-1-0-11")
    other, _ = services.propose(cluster, kind="replace", nodes=["ip-10-1-0-11"], actor=world.lead_a)
    other = run(other)
    assert (other.state, other.failure_reason) == (ActionState.FAILED, "throttling")
    assert "ThrottlingException" in other.error
    assert other.steps.filter(name="retry").count() == 2
    assert other.steps.last().summary.startswith("AWS slowed down the portal's requests and the action stopped")


@pytest.mark.django_db
def test_a_node_the_provider_does_not_know_fails_with_the_reason(world, aws):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a, nodes=1)
    faulty_report(cluster, "ip-10-1-0-99")
    action, _ = services.propose(cluster, kind="reboot", nodes=["ip-10-1-0-99"], actor=world.lead_a)
    action = run(action)
    assert (action.state, action.failure_reason) == (ActionState.FAILED, "node_not_found")
    assert "ip-10-1-0-99" in action.error


@pytest.mark.django_db
def test_a_fault_that_comes_back_is_reopened_and_a_second_failed_replacement_is_escalated(world, aws, settings):
    settings.REMEDIATION_XID_SPREAD_NODES = 99  # the repeated replacement alone escalates here
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa", cooldown_hours=0)
    cluster = hyperpod_cluster(world.org_a)
    for attempt in (1, 2):
        action, _ = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
        action = run(action)
        assert action.state == ActionState.VERIFYING, action.error
        faulty_report(cluster)  # the node reports the same XID again
        action = run(action)
        assert (action.state, action.failure_reason) == (ActionState.FAILED, "fault_returned")
        assert action.fault_rows.filter(outcome=FaultOutcome.RETURNED).exists()
        assert GpuFault.objects.filter(cluster=cluster, hostname=FAULTY, xid=79, cleared_at__isnull=True).exists()
        assert (action.escalation_id is not None) == (attempt == 2)
    escalation = Escalation.objects.get()
    assert escalation.target.slug == "ec2"
    assert "failed 2 replacements" in escalation.question and "XID 79" in escalation.question
    assert "Actions taken:" in escalation.question
    assert GpuFault.objects.filter(cluster=cluster, hostname=FAULTY, xid=79).first().interaction_id is not None


@pytest.mark.django_db
def test_a_repeated_xid_across_nodes_is_escalated(world, aws, settings):
    settings.REMEDIATION_XID_SPREAD_NODES = 3
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a)
    for host in ("ip-10-1-0-11", "ip-10-1-0-12"):
        faulty_report(cluster, host)
    action, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    action = run(action)
    faulty_report(cluster)
    action = run(action)
    assert action.failure_reason == "fault_returned" and action.escalation_id is not None
    assert "XID 79 on 3 nodes" in action.escalation.question


@pytest.mark.django_db
def test_the_remediate_command_proposes_through_the_service(world):
    from io import StringIO

    from django.core.management import call_command

    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    out = StringIO()
    call_command("remediate", f"{world.org_a.slug}/{cluster.name}", "--node", FAULTY, "--action", "replace",
                 "--as-user", "lead_a", "--key", "cli-1", stdout=out)
    call_command("remediate", str(cluster.pk), "--node", FAULTY, "--action", "replace", "--key", "cli-1", stdout=out)
    call_command("remediate", str(cluster.pk), "--node", FAULTY, "--action", "drain", stdout=out)
    text = out.getvalue()
    assert "Proposed: remediation" in text and "Already proposed" in text
    assert "Waiting for a customer engineer's approval" in text
    assert "Refused: the portal's agent on the cluster's controller has not contacted the portal lately" in text
    assert RemediationAction.objects.filter(state="proposed").count() == 1


@pytest.mark.django_db
def test_the_weekly_review_counts_actions_and_the_time_from_fault_to_healthy_node(world):
    from datetime import timedelta

    from django.utils import timezone

    from portal.review import figures

    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    action, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    RemediationAction.objects.filter(pk=action.pk).update(state="done", finished_at=timezone.now(),
                                                          fault_seen_at=timezone.now() - timedelta(hours=3))
    found = figures.overview(world.pm)
    assert (found["week"]["remediations"], found["week"]["remediations_healed"]) == (1, 1)
    assert found["totals"]["remediation_fault_to_healthy_hours"] == 3.0


@pytest.mark.django_db
def test_the_api_list_and_the_panel_read_in_a_constant_number_of_queries(world, client):
    from django.urls import reverse
    from django.utils import timezone

    from clusters.remediation.models import RemediationFault, RemediationStep
    from tests.queries import assert_flat_queries

    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    fault = GpuFault.objects.filter(cluster=cluster).first()

    def grow(n: int) -> None:
        for _ in range(n):
            action = RemediationAction.objects.create(organization=world.org_a, cluster=cluster, kind="reboot",
                                                      nodes=[FAULTY], key=f"k{RemediationAction.objects.count()}",
                                                      state="failed", failure_reason="node_failed",
                                                      finished_at=timezone.now(), proposed_by=world.lead_a)
            RemediationStep.objects.create(action=action, name="submit", summary="sent")
            RemediationFault.objects.create(action=action, fault=fault, outcome="returned")

    client.force_login(world.customer_a)
    assert_flat_queries(client, reverse("remediation-api:remediationaction-list"), grow=grow)
    assert_flat_queries(client, reverse("remediation:cluster_panel", kwargs={"pk": cluster.pk}), grow=grow)


@pytest.mark.django_db
def test_steps_and_journal_are_stored_as_codes_and_read_in_each_language(world, aws, client):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a)
    action, _ = services.propose(cluster, kind="replace", nodes=[FAULTY], actor=world.lead_a)
    action = run(action)
    steps = list(action.steps.all())
    assert [s.code for s in steps] == ["remediation.step.located_hyperpod", "remediation.step.submitted_hyperpod",
                                       "remediation.step.replaced"]
    assert steps[1].summary == f"HyperPod accepted the replace of {FAULTY}."  # the English stays beside the code
    with translation.override("ja"):
        assert steps[1].shown_summary == f"HyperPod が {FAULTY} の交換を受け付けました。"
        assert steps[2].shown_summary.startswith("ノードが新しいインスタンスで再び稼働しています:")
    entries = TimelineEntry.objects.filter(organization=world.org_a, title_code="remediation.entry").order_by("id")
    assert entries[0].title == f"Remediation {action.pk} on {cluster.name}: replace of {FAULTY} proposed by lead_a"
    with translation.override("ja"):
        assert entries[0].shown_title == f"{cluster.name} の修復 {action.pk}: {FAULTY} の交換を lead_a が提案しました"
    client.force_login(world.lead_a)
    page = client.get(action.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert f"HyperPod が {FAULTY} の交換を受け付けました。" in page and "HyperPod accepted" not in page
    timeline_page = client.get(reverse("portal:timeline", args=[world.org_a.slug]),
                               HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert f"{FAULTY} の交換を lead_a が提案しました" in timeline_page and "proposed by" not in timeline_page
