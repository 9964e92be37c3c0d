"""Escalations: raised from an interaction to a team, accepted, answered and closed through guarded
transitions; specialists see only what is escalated to their team; customers never see any of it."""
from __future__ import annotations

import pytest
from django.urls import reverse

from portal.core import access, timeline
from portal.core.models import TimelineEntry
from portal.engagement import services
from portal.engagement.models import Escalation
from tests.engagement.factories_engagement import EscalationFactory, specialist, target
from tests.interactions.factories_interactions import InteractionFactory
from tests.queries import assert_flat_queries
from workloads.interactions.models import Interaction, InteractionComment

pytestmark = pytest.mark.django_db


@pytest.fixture
def frameworks_specialist(world):
    return specialist("fw_specialist", "frameworks")


@pytest.fixture
def ec2_specialist(world):
    return specialist("ec2_specialist", "ec2")


def _raise(world, org=None, slug="frameworks", question="NCCL all_reduce at 30 GB/s on 4 nodes", **kw):
    interaction = InteractionFactory(organization=org or world.org_a, visibility="shared", **kw)
    return services.raise_escalation(interaction, world.lead_a, target(slug), question)


def test_the_curated_targets_are_loaded_by_the_migration():
    from portal.core.escalation_targets import TARGETS
    from portal.core.models import EscalationTarget

    assert set(EscalationTarget.objects.values_list("slug", flat=True)) >= {t["slug"] for t in TARGETS}


def test_lead_escalates_from_the_interaction_page_to_a_team(client, world):
    interaction = InteractionFactory(organization=world.org_a, visibility="shared")
    client.force_login(world.lead_a)
    response = client.post(reverse("interactions:interaction_escalate", args=[interaction.pk]),
                           {"target": "fsx", "reason": "Lustre at 40% of provisioned throughput"})
    assert response.status_code == 302
    escalation = Escalation.objects.get(interaction=interaction)
    assert (escalation.target.slug, escalation.state, escalation.requested_by) == ("fsx", "requested", world.lead_a)
    interaction.refresh_from_db()
    assert interaction.escalated_at is not None
    entry = interaction.history.get(kind="escalation")
    assert entry.internal and entry.body == "Lustre at 40% of provisioned throughput"
    assert TimelineEntry.objects.get(title__startswith="Escalated to").visibility == "internal"


def test_without_a_target_the_account_manager_triages(client, world):
    interaction = InteractionFactory(organization=world.org_a)
    client.force_login(world.lead_a)
    client.post(reverse("interactions:interaction_escalate", args=[interaction.pk]), {"reason": "who decides credits?"})
    assert Escalation.objects.get(interaction=interaction).target.slug == "account-manager"


def test_full_lifecycle_with_timestamps_and_ageing(client, world, frameworks_specialist):
    escalation = _raise(world)
    client.force_login(frameworks_specialist)
    url = lambda name: reverse("engagement:escalation_transition", args=[escalation.pk, name])  # noqa: E731
    assert client.post(url("accept")).status_code == 302
    escalation.refresh_from_db()
    assert escalation.state == "accepted" and escalation.assignee == frameworks_specialist and escalation.accepted_at
    assert client.post(url("answer"), {"answer": "Set FI_EFA_USE_DEVICE_RDMA=1 and check the SG."}).status_code == 302
    escalation.refresh_from_db()
    assert escalation.state == "answered" and escalation.answered_at and "FI_EFA" in escalation.answer
    assert escalation.time_to_answer is not None
    client.force_login(world.lead_a)
    assert client.post(url("close")).status_code == 302
    escalation.refresh_from_db()
    assert escalation.state == "closed" and escalation.closed_at and not escalation.is_open
    assert escalation.age == escalation.closed_at - escalation.requested_at
    states = list(escalation.interaction.history.filter(kind="escalation").values_list("new_value", flat=True))
    assert [s.split(" · ")[1] for s in states] == ["Requested", "Accepted", "Answered", "Closed"]
    assert not escalation.interaction.history.filter(kind="escalation", internal=False).exists()


def test_transitions_are_guarded_by_state(client, world, frameworks_specialist):
    escalation = _raise(world)
    client.force_login(frameworks_specialist)
    response = client.post(reverse("engagement:escalation_transition", args=[escalation.pk, "answer"]),
                           {"answer": "too early"}, follow=True)
    assert "cannot answer" in response.content.decode()
    escalation.refresh_from_db()
    assert escalation.state == "requested" and escalation.answer == ""
    services.transition(escalation, frameworks_specialist, "accept")
    with pytest.raises(services.TransitionError, match="cannot be empty"):
        services.transition(escalation, frameworks_specialist, "answer", "   ")
    with pytest.raises(services.TransitionError, match="Unknown"):
        services.transition(escalation, frameworks_specialist, "teleport")


def test_two_accepts_of_the_same_escalation_one_wins(world, frameworks_specialist):
    escalation = _raise(world)
    other = specialist("fw_other", "frameworks")
    stale = Escalation.objects.get(pk=escalation.pk)
    services.transition(escalation, frameworks_specialist, "accept")
    with pytest.raises(services.TransitionError, match="accepted"):
        services.transition(stale, other, "accept")
    escalation.refresh_from_db()
    assert escalation.assignee == frameworks_specialist


def test_roles_are_guarded_per_transition(client, world, frameworks_specialist):
    escalation = _raise(world)
    client.force_login(world.lead_a)  # leads do not accept for the team
    assert client.post(reverse("engagement:escalation_transition", args=[escalation.pk, "accept"])).status_code == 403
    services.transition(escalation, frameworks_specialist, "accept")
    client.force_login(frameworks_specialist)  # the team does not close for the lead
    assert client.post(reverse("engagement:escalation_transition", args=[escalation.pk, "close"])).status_code == 403
    client.force_login(world.pm)  # program managers read
    assert client.post(reverse("engagement:escalation_transition", args=[escalation.pk, "close"])).status_code == 403
    client.force_login(world.lead_b)
    assert client.post(reverse("engagement:escalation_transition", args=[escalation.pk, "close"])).status_code == 404
    escalation.refresh_from_db()
    assert escalation.state == "accepted"


def test_release_hands_back_unanswered_and_follow_up_reopens(world, frameworks_specialist):
    escalation = _raise(world)
    services.transition(escalation, frameworks_specialist, "accept")
    services.transition(escalation, frameworks_specialist, "release")
    assert (escalation.state, escalation.assignee) == ("requested", None)
    services.transition(escalation, frameworks_specialist, "accept")
    services.transition(escalation, frameworks_specialist, "answer", "use PERSISTENT_2")
    services.transition(escalation, world.lead_a, "follow_up")
    assert escalation.state == "accepted"


# Specialists ------------------------------------------------------------------------------------------
def test_specialist_sees_their_teams_escalations_across_organizations_only(world, frameworks_specialist,
                                                                          ec2_specialist):
    a = _raise(world, world.org_a, "frameworks")
    b = _raise(world, world.org_b, "frameworks")
    c = _raise(world, world.org_a, "ec2")
    untouched = InteractionFactory(organization=world.org_a, summary="never escalated")
    assert set(Escalation.objects.visible_to(frameworks_specialist)) == {a, b}
    assert set(Escalation.objects.visible_to(ec2_specialist)) == {c}
    assert set(Interaction.objects.visible_to(frameworks_specialist)) == {a.interaction, b.interaction}
    assert untouched not in Interaction.objects.visible_to(ec2_specialist)
    # Nothing else of the organizations' data.
    from portal.core.models import Organization

    timeline.record(world.org_a, "note", "shared note")
    for model in (Organization, TimelineEntry, InteractionComment):
        assert not model.objects.visible_to(frameworks_specialist).exists(), model
    assert not access.can(frameworks_specialist, access.CHANGE, a.interaction)


def test_specialist_pages(client, world, frameworks_specialist):
    a = _raise(world, world.org_a, "frameworks", question="Neuron compile cache misses")
    other = _raise(world, world.org_b, "ec2", question="capacity block in apne1-az4")
    client.force_login(frameworks_specialist)
    assert client.get("/").url == reverse("engagement:escalation_list")
    listing = client.get(reverse("engagement:escalation_list")).content.decode()
    assert a.interaction.summary in listing and other.interaction.summary not in listing
    detail = client.get(a.get_absolute_url()).content.decode()
    assert "Neuron compile cache misses" in detail and "Accept" in detail
    assert client.get(other.get_absolute_url()).status_code == 404
    assert client.get(world.org_a.get_absolute_url()).status_code == 404
    assert client.get(reverse("portal:timeline", args=[world.org_a.slug])).status_code == 404
    page = client.get(a.interaction.get_absolute_url())
    assert page.status_code == 200 and "Add comment" not in page.content.decode()


# Customers ---------------------------------------------------------------------------------------------
def test_customers_never_see_escalations(client, world):
    escalation = _raise(world, question="CUSTOMER-MUST-NOT-READ this question")
    services.transition(escalation, world.staff, "accept")
    services.transition(escalation, world.staff, "answer", "INTERNAL-ANSWER text")
    client.force_login(world.customer_a)
    assert client.get(reverse("engagement:escalation_list")).status_code == 403
    assert client.get(escalation.get_absolute_url()).status_code == 404
    page = client.get(escalation.interaction.get_absolute_url()).content.decode()
    for secret in ("CUSTOMER-MUST-NOT-READ", "INTERNAL-ANSWER", "escalated", "Escalations"):
        assert secret not in page, secret
    timeline_page = client.get(reverse("portal:timeline", args=[world.org_a.slug])).content.decode()
    assert "Escalat" not in timeline_page
    api = client.get(reverse("engagement-api:escalation-list")).json()
    assert api["count"] == 0 if isinstance(api, dict) else api == []
    detail = client.get(reverse("interactions-api:interaction-detail", args=[escalation.interaction_id])).json()
    assert detail["escalated_at"] is None
    history = client.get(reverse("interactions-api:interaction-history", args=[escalation.interaction_id])).json()
    assert "INTERNAL-ANSWER" not in str(history) and "CUSTOMER-MUST-NOT-READ" not in str(history)


# Weekly review and lead home ---------------------------------------------------------------------------
def test_weekly_review_shows_open_escalations_by_target_and_age(client, world):
    _raise(world, world.org_a, "frameworks", summary="fw question one")
    _raise(world, world.org_b, "hyperpod", summary="hyperpod node recovery")
    closed = _raise(world, world.org_a, "frameworks", summary="already closed")
    services.transition(closed, world.lead_a, "close")
    client.force_login(world.pm)
    page = client.get(reverse("review:overview")).content.decode()
    section = page[page.index("Open escalations by team"):]
    assert "WWSO Frameworks specialists · 1 open" in section and "SageMaker HyperPod service team · 1 open" in section
    assert "fw question one" in section and "already closed" not in section


def test_lead_home_shows_their_open_escalations(client, world):
    mine = _raise(world, world.org_a, summary="mine escalated")
    _raise(world, world.org_b, summary="beta escalated")
    client.force_login(world.lead_a)
    page = client.get(reverse("portal:lead_home")).content.decode()
    assert "Open escalations, oldest first" in page and mine.interaction.summary in page
    assert "beta escalated" not in page


def test_escalation_list_query_count_is_constant_for_a_specialist(client, world, frameworks_specialist):
    def grow(n):
        for _ in range(n):
            i = Escalation.objects.count()
            _raise(world, world.org_a if i % 2 else world.org_b, summary=f"row {i}")

    client.force_login(frameworks_specialist)
    assert_flat_queries(client, reverse("engagement:escalation_list"), grow=grow, sizes=(2, 22))


# API ---------------------------------------------------------------------------------------------------
def test_api_raise_and_transition(client, world, frameworks_specialist):
    interaction = InteractionFactory(organization=world.org_a, visibility="shared")  # the customer sees it
    client.force_login(world.customer_a)
    data = {"interaction": interaction.pk, "target": "frameworks", "question": "why?"}
    # Related fields offer only what the policy shows the caller: a customer can name no team, and nothing is written.
    response = client.post(reverse("engagement-api:escalation-list"), data, content_type="application/json")
    assert response.status_code == 400 and not Escalation.objects.exists()
    client.force_login(world.lead_b)
    response = client.post(reverse("engagement-api:escalation-list"), data, content_type="application/json")
    assert response.status_code == 400 and "interaction" in response.json()
    client.force_login(world.lead_a)
    response = client.post(reverse("engagement-api:escalation-list"), data, content_type="application/json")
    assert response.status_code == 201, response.content
    pk = response.json()["id"]
    url = reverse("engagement-api:escalation-transition", args=[pk])
    assert client.post(url, {"transition": "accept"}, content_type="application/json").status_code == 403
    client.force_login(frameworks_specialist)
    assert client.post(url, {"transition": "answer", "answer": "x"}, content_type="application/json").status_code == 409
    assert client.post(url, {"transition": "accept"}, content_type="application/json").status_code == 200
    assert client.post(url, {"transition": "answer", "answer": ""}, content_type="application/json").status_code == 400
    response = client.post(url, {"transition": "answer", "answer": "use NCCL 2.21"}, content_type="application/json")
    assert response.status_code == 200 and response.json()["state"] == "answered"
    assert client.get(reverse("engagement-api:escalation-detail", args=[pk])).json()["answer"] == "use NCCL 2.21"


def test_api_schema_lists_the_escalation_endpoints(client, world):
    client.force_login(world.lead_a)
    schema = client.get(reverse("api-schema"), HTTP_ACCEPT="application/json").content.decode()
    assert "/api/engagement/escalations/{id}/transition/" in schema and "TransitionRequest" in schema


# Specialist access matrix ------------------------------------------------------------------------------
def _routes():
    from tests.access_cases import ROUTES

    return sorted(ROUTES)


@pytest.mark.parametrize("name", _routes())
def test_specialist_of_another_team_never_sees_organization_a(name, world, client):
    """Every route, as a specialist whose team has nothing of A's: nothing of organization A shows."""
    from tests.access_cases import ROUTES
    from tests.conftest import MARKER_A
    from tests.portal.test_routes import LazyObjects

    case = ROUTES[name]
    objs = LazyObjects(world)
    objs["escalation"] = EscalationFactory(interaction=objs["interaction"], target=target("frameworks"),
                                           question=f"{MARKER_A} question")
    url = reverse(name, kwargs=case.kwargs(objs))
    client.force_login(specialist("ec2_only", "ec2"))
    response = client.get(url)
    assert response.status_code < 500
    if response.status_code == 200 and not getattr(response, "streaming", False):
        assert MARKER_A not in response.content.decode(errors="replace"), f"{name} shows organization A's data"


@pytest.mark.parametrize("name", [n for n in _routes() if n.startswith("engagement") or "interaction" in n])
def test_specialist_of_the_team_sees_only_the_escalated(name, world, client):
    """The frameworks specialist reaches A's escalation and its interaction, and writes nothing else."""
    from tests.access_cases import ROUTES
    from tests.portal.test_routes import LazyObjects

    case = ROUTES[name]
    objs = LazyObjects(world)
    objs["escalation"] = EscalationFactory(interaction=objs["interaction"], target=target("frameworks"))
    url = reverse(name, kwargs=case.kwargs(objs))
    client.force_login(specialist("fw_only", "frameworks"))
    response = client.get(url)
    assert response.status_code < 500
    if name in ("engagement:escalation_detail", "engagement-api:escalation-detail",
                "interactions:interaction_detail", "interactions-api:interaction-detail"):
        assert response.status_code == 200
    if name in ("interactions:interaction_edit", "interactions:interaction_quick_log",
                "interactions:interaction_add"):
        assert response.status_code in (403, 404)
    if name == "interactions-api:interaction-history":
        assert response.status_code == 200 and response.json()["count"] == 0
