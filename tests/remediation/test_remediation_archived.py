"""Remediation under an archived cycle: no proposal (page, API or automatic) lands on an archived cycle's cluster,
whatever the consent policy, and archiving a cycle closes the actions and validations it keeps that nobody could
close any more, so none holds its nodes or the cluster's slot for good."""
from __future__ import annotations

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from clusters.health.models import ValidationJob
from clusters.remediation import services
from clusters.remediation.choices import ActionState
from clusters.remediation.models import RemediationAction, RemediationNode
from portal.core.models import Cycle, CycleParticipation, TimelineEntry
from portal.engagement import cycles
from tests.remediation.factories_remediation import FAULTY, RemediationPolicyFactory, hyperpod_cluster

pytestmark = pytest.mark.django_db
REASON = "which is archived: its rows are read-only"


@pytest.fixture
def old(world):
    """Cycle 60, active, with organizations A and B (the clusters made in the test belong to it)."""
    Cycle.objects.filter(status="active").update(status="archived")
    cycle = Cycle.objects.create(number=60, name="Cycle 60", status="active",
                                 starts_on=timezone.localdate() - datetime.timedelta(days=60))
    for org in (world.org_a, world.org_b):
        CycleParticipation.objects.create(cycle=cycle, organization=org)
    return cycle


def archive(cycle):
    Cycle.objects.filter(pk=cycle.pk).update(status="archived", ends_on=timezone.localdate())
    Cycle.objects.create(number=cycle.number + 1, name=f"Cycle {cycle.number + 1}", status="active",
                         starts_on=timezone.localdate())


def test_no_proposal_lands_on_an_archived_cycles_cluster_even_under_lead_sa_consent(old, world, client):
    RemediationPolicyFactory(organization=world.org_a, mode="lead_sa")
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    archive(old)
    client.force_login(world.lead_a)
    response = client.post(reverse("remediation-api:remediationaction-list"),
                           {"cluster": cluster.pk, "nodes": [FAULTY], "kind": "reboot"}, content_type="application/json")
    assert response.status_code == 403 and REASON in response.json()["detail"]
    response = client.post(reverse("remediation:action_propose", args=[cluster.pk]),
                           {"nodes": [FAULTY], "kind": "reboot"})
    assert response.status_code == 403 and REASON in response.content.decode()
    panel = client.get(reverse("remediation:cluster_panel", args=[cluster.pk])).content.decode()
    assert 'name="nodes"' not in panel
    assert not RemediationAction.objects.exists()


def test_the_sweep_proposes_nothing_on_an_archived_cycles_cluster(old, world):
    RemediationPolicyFactory(organization=world.org_a, mode="automatic", automatic_kinds=["xid_79"])
    hyperpod_cluster(world.org_a, in_endpoint=False)
    archive(old)
    assert services.propose_automatic() == 0
    assert not RemediationAction.objects.exists()


def test_archiving_closes_the_open_work_a_leaving_organization_leaves_behind(old, world, client):
    waiting = hyperpod_cluster(world.org_a, name="hp-waiting", in_endpoint=False)
    approved = hyperpod_cluster(world.org_a, name="hp-approved", in_endpoint=False)
    running = hyperpod_cluster(world.org_a, name="hp-running", in_endpoint=False)
    proposed, _ = services.propose(waiting, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    to_start, _ = services.propose(approved, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    services.approve(to_start, world.customer_a)
    busy, _ = services.propose(running, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    services.approve(busy, world.customer_a)
    busy.transition(ActionState.RUNNING, started_at=timezone.now())
    job = ValidationJob.objects.create(cluster=waiting, key="open", expected=["all_reduce"],
                                       collectives=["all_reduce"], upload_base="http://portal.invalid",
                                       state="submitted")

    cycles.start_next(world.pm, continuing=[world.org_b.pk])  # organization A leaves: its clusters stay behind

    states = dict(RemediationAction.objects.values_list("pk", "state"))
    assert states == {proposed.pk: "cancelled", to_start.pk: "cancelled", busy.pk: "running"}
    closed = RemediationAction.objects.get(pk=proposed.pk)
    assert closed.refused_rule == "cycle_archived" and "Cycle 60" in closed.refusal
    assert list(RemediationNode.objects.filter(active=True).values_list("action_id", flat=True)) == [busy.pk]
    assert ValidationJob.objects.get(pk=job.pk).state == "cancelled"
    assert TimelineEntry.objects.filter(organization=world.org_a, title__contains="Cycle 60 was archived",
                                        visibility="shared").count() == 2
    client.force_login(world.lead_a)  # and the rows are read-only now: a cancel is refused with the reason
    response = client.post(reverse("remediation-api:remediationaction-cancel", args=[busy.pk]))
    assert response.status_code == 404 or REASON in response.json()["detail"]
    assert RemediationAction.objects.get(pk=busy.pk).state == "running"


def test_a_continuing_organizations_actions_move_on_with_its_cluster(old, world):
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    action, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    cycles.start_next(world.pm, continuing=[world.org_a.pk, world.org_b.pk])
    action.refresh_from_db()
    assert action.state == ActionState.PROPOSED
    services.approve(action, world.customer_a)
    assert action.state == ActionState.APPROVED
