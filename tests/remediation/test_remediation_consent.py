"""Consent is the customer's: a lead SA's change that gives the portal more power over the organization's nodes
waits for a customer engineer of the organization (page, htmx and API), is recorded with both names on the shared
timeline; narrowing takes effect at once; the cool-down has a floor; racing decisions make exactly one change."""
from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.urls import reverse

from clusters.remediation import consent, rules, services
from clusters.remediation.choices import ActionState
from clusters.remediation.models import RemediationPolicy, RemediationPolicyChange
from portal.core.models import Membership, TimelineEntry, User
from tests import concurrency
from tests.remediation.factories_remediation import FAULTY, RemediationPolicyFactory, hyperpod_cluster

pytestmark = pytest.mark.django_db
BASE = {"mode": "approval", "automatic_kinds": [], "max_nodes": 1, "cooldown_hours": 24}


def _page(org) -> str:
    return reverse("remediation:policy_edit", args=[org.pk])


def _policy(org) -> dict:
    return consent.values_of(consent.current(org.pk))


def test_widening_is_what_gives_the_portal_more_power():
    assert consent.widening(BASE, BASE) == []
    assert consent.widening(BASE, {**BASE, "mode": "lead_sa"}) == ["consent approval → lead_sa"]
    assert consent.widening({**BASE, "mode": "lead_sa"}, {**BASE, "mode": "automatic"})
    assert consent.widening(BASE, {**BASE, "automatic_kinds": ["xid_79"]})
    assert consent.widening(BASE, {**BASE, "max_nodes": 2}) and consent.widening(BASE, {**BASE, "cooldown_hours": 12})
    narrower = {"mode": "approval", "automatic_kinds": [], "max_nodes": 1, "cooldown_hours": 48}
    assert consent.widening({"mode": "automatic", "automatic_kinds": ["xid_79"], "max_nodes": 3,
                             "cooldown_hours": 24}, narrower) == []


def test_a_lead_sas_widening_waits_for_a_customer_engineer_who_approves_it_on_the_page(world, client):
    client.force_login(world.lead_a)
    response = client.post(_page(world.org_a), {"mode": "lead_sa", "max_nodes": 1, "cooldown_hours": 24})
    assert response.status_code == 302
    assert _policy(world.org_a) == BASE  # nothing changed yet
    change = RemediationPolicyChange.objects.get(state="pending")
    assert change.proposed_by == world.lead_a and change.widens == ["consent approval → lead_sa"]
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    action, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    assert action.state == ActionState.PROPOSED  # still the customer's approval per action

    client.force_login(world.customer_a)
    panel = client.get(reverse("remediation:cluster_panel", args=[cluster.pk])).content.decode()
    assert "A change that widens the consent waits for a customer engineer" in panel
    page = client.get(_page(world.org_a)).content.decode()
    assert "A change waiting for a customer engineer" in page and "Approve the change" in page
    response = client.post(reverse("remediation:policy_change_approve", args=[change.pk]))
    assert response.status_code == 302
    policy = RemediationPolicy.objects.get(organization=world.org_a)
    assert (policy.mode, policy.agreed_with, policy.updated_by) == ("lead_sa", "customer_a", world.lead_a)
    entry = TimelineEntry.objects.get(organization=world.org_a, title__startswith="Remediation consent changed")
    assert "proposed by lead_a, approved by customer_a" in entry.title and entry.visibility == "shared"
    assert "mode: approval → lead_sa" in entry.body
    timeline = client.get(reverse("portal:timeline", args=[world.org_a.slug])).content.decode()
    assert "approved by customer_a" in timeline


def test_narrowing_takes_effect_at_once_and_replaces_a_waiting_change(world, client):
    RemediationPolicyFactory(organization=world.org_a, mode="automatic", automatic_kinds=["xid_79"], max_nodes=3)
    client.force_login(world.lead_a)
    client.post(_page(world.org_a), {"mode": "automatic", "automatic_kinds": ["xid_79", "xid_48"], "max_nodes": 3,
                                     "cooldown_hours": 24})
    waiting = RemediationPolicyChange.objects.get(state="pending")
    response = client.post(_page(world.org_a), {"mode": "lead_sa", "max_nodes": 2, "cooldown_hours": 48})
    assert response.status_code == 302
    assert _policy(world.org_a) == {"mode": "lead_sa", "automatic_kinds": [], "max_nodes": 2, "cooldown_hours": 48}
    waiting.refresh_from_db()
    assert waiting.state == "withdrawn" and not RemediationPolicyChange.objects.filter(state="pending").exists()
    assert TimelineEntry.objects.filter(title="Remediation consent narrowed by lead_a").count() == 1


def test_the_cool_down_has_a_floor(world, client, settings):
    settings.REMEDIATION_MIN_COOLDOWN_HOURS = 6
    client.force_login(world.lead_a)
    response = client.post(_page(world.org_a), {"mode": "approval", "max_nodes": 1, "cooldown_hours": 0})
    assert response.status_code == 400 and "At least 6 hours" in response.content.decode()
    assert not RemediationPolicyChange.objects.exists() and not RemediationPolicy.objects.exists()
    with pytest.raises(ValueError):
        consent.save(world.org_a, {**BASE, "cooldown_hours": 2}, world.lead_a)
    stored = RemediationPolicy(organization=world.org_a, cooldown_hours=0)  # saved before the floor existed
    cluster = hyperpod_cluster(world.org_a, in_endpoint=False)
    RemediationPolicy.objects.create(organization=world.org_a, mode="lead_sa", cooldown_hours=0)
    first, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    for state in (ActionState.RUNNING, ActionState.VERIFYING, ActionState.DONE):
        first.transition(state)
    again, _ = services.propose(cluster, kind="reboot", nodes=[FAULTY], actor=world.lead_a)
    assert again.refused_rule == "cooldown" and "within 6 h" in again.refusal
    assert rules.refusal(cluster, "reboot", [FAULTY], stored).rule == "cooldown"


def test_only_a_customer_engineer_other_than_the_proposer_decides_in_the_api(world, client):
    _policy_row, change = consent.save(world.org_a, {**BASE, "max_nodes": 4}, world.lead_a)
    url = reverse("remediation-api:remediationpolicychange-approve", args=[change.pk])
    for user in (world.lead_a, world.staff, world.pm):
        client.force_login(user)
        assert client.post(url).status_code == 403
    client.force_login(world.customer_b)
    assert client.post(url).status_code == 404
    both = User.objects.create(username="lead_and_customer")
    Membership.objects.create(user=both, organization=world.org_a, role="customer")
    mine = RemediationPolicyChange.objects.filter(pk=change.pk)
    mine.update(proposed_by=both)
    with pytest.raises(PermissionDenied):
        consent.approve(mine.get(), both)
    mine.update(proposed_by=world.lead_a)
    assert _policy(world.org_a) == BASE
    client.force_login(world.customer_a)
    response = client.post(url)
    assert response.status_code == 200 and response.json()["state"] == "approved"
    assert _policy(world.org_a)["max_nodes"] == 4
    again = client.post(url)
    assert again.status_code == 409 and "approved" in again.json()["detail"]
    listed = client.get(reverse("remediation-api:remediationpolicychange-list")).json()
    assert [row["id"] for row in listed["results"]] == [change.pk]


def test_the_customer_declines_through_the_htmx_partial(world, client):
    _policy_row, change = consent.save(world.org_a, {**BASE, "mode": "automatic", "automatic_kinds": ["xid_79"]},
                                       world.lead_a)
    client.force_login(world.customer_a)
    partial = client.get(_page(world.org_a), HTTP_HX_REQUEST="true").content.decode()
    assert partial.startswith('<section id="policy-change"') and "Decline the change" in partial
    response = client.post(reverse("remediation:policy_change_decline", args=[change.pk]), {"why": "not yet"},
                           HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "Decline the change" not in response.content.decode()
    assert "not yet" in response.content.decode()
    change.refresh_from_db()
    assert (change.state, change.decided_by, change.why) == ("declined", world.customer_a, "not yet")
    assert _policy(world.org_a) == BASE
    assert TimelineEntry.objects.filter(title__contains="declined by customer_a", visibility="shared").exists()


needs_postgres = pytest.mark.skipif(connection.vendor != "postgresql",
                                    reason="needs PostgreSQL: SQLite serializes every writer")


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_two_customer_engineers_approving_at_once_make_one_change(world):
    second = User.objects.create(username="customer_a2")
    Membership.objects.create(user=second, organization=world.org_a, role="customer")
    _policy_row, change = consent.save(world.org_a, {**BASE, "max_nodes": 3}, world.lead_a)
    clients = concurrency.signed_in(world.customer_a, 3, api=True) + concurrency.signed_in(second, 3, api=True)
    url = reverse("remediation-api:remediationpolicychange-approve", args=[change.pk])
    answers = concurrency.race(6, lambda i: clients[i].post(url))
    codes = sorted(a.status_code for a in answers if not isinstance(a, BaseException))
    assert codes == [200, 409, 409, 409, 409, 409], answers
    assert TimelineEntry.objects.filter(title__startswith="Remediation consent changed").count() == 1
    assert RemediationPolicy.objects.get(organization=world.org_a).max_nodes == 3


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_a_proposal_racing_an_approval_makes_one_change(world):
    from django.test import Client

    _policy_row, change = consent.save(world.org_a, {**BASE, "mode": "lead_sa"}, world.lead_a)
    customer = concurrency.signed_in(world.customer_a, 1, api=True)[0]
    lead = Client()
    lead.force_login(world.lead_a)
    approve = reverse("remediation-api:remediationpolicychange-approve", args=[change.pk])
    proposal = {"mode": "approval", "max_nodes": 5, "cooldown_hours": 24}
    answers = concurrency.race(2, lambda i: customer.post(approve) if i == 0 else lead.post(_page(world.org_a),
                                                                                           proposal))
    assert not any(isinstance(a, BaseException) for a in answers), answers
    approved, proposed = answers
    assert proposed.status_code == 302
    newest = RemediationPolicyChange.objects.get(state="pending")  # the lead's proposal, exactly one waiting
    if approved.status_code == 200:  # the approval came first: the proposal was made against its result
        assert newest.before["mode"] == "lead_sa" and _policy(world.org_a)["mode"] == "lead_sa"
    else:  # the proposal came first and replaced the change the customer was approving
        assert approved.status_code == 409
        assert RemediationPolicyChange.objects.get(pk=change.pk).state == "withdrawn"
        assert _policy(world.org_a) == BASE
    assert TimelineEntry.objects.filter(title__startswith="Remediation consent changed").count() == (
        1 if approved.status_code == 200 else 0)
