"""One submission, one row (portal.core.submissions): the same rendered form posted twice, a form corrected after
its errors, N identical requests released together on PostgreSQL, and the API's ``Idempotency-Key``.

The per-route walk over every create form and create API call is in test_submission_routes.py."""
from __future__ import annotations

import re
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from portal.core import submissions
from portal.core.models import Submission
from portal.engagement.models import Escalation
from tests.concurrency import race, signed_in
from tests.engagement.factories_engagement import target
from tests.interactions.factories_interactions import InteractionFactory
from workloads.interactions.models import Interaction, InteractionComment

N = 10
KEY_INPUT = re.compile(r'name="submission_key" value="([^"]+)"')


def _keys(response) -> list[str]:
    return KEY_INPUT.findall(response.content.decode())


def _quick_log(org):
    return reverse("interactions:interaction_quick_log", kwargs={"slug": org.slug})


def _quick_data(key: str, summary: str = "NCCL timeouts on two nodes") -> dict:
    return {"kind": "support_case", "summary": summary, "severity": "normal", "visibility": "shared",
            "body": "", "submission_key": key}


def _full_data(world, key: str, summary: str = "EFA errors after the driver update") -> dict:
    return {"organization": world.org_a.pk, "kind": "support_case", "summary": summary, "body": "",
            "occurred_at": timezone.localtime().strftime("%Y-%m-%dT%H:%M"), "status": "open", "severity": "normal",
            "owner": world.lead_a.pk, "visibility": "shared", "submission_key": key}


# --- the same rendered form, twice in a row ----------------------------------------------------------------------

def test_every_rendered_create_form_carries_a_fresh_key(client, world):
    client.force_login(world.lead_a)
    interaction = InteractionFactory(organization=world.org_a)
    first = _keys(client.get(reverse("interactions:interaction_detail", kwargs={"pk": interaction.pk})))
    again = _keys(client.get(reverse("interactions:interaction_detail", kwargs={"pk": interaction.pk})))
    assert len(first) == 2 and len(set(first)) == 2  # the escalate and the comment forms, one key each
    assert not set(first) & set(again)  # every rendering gets new ones
    assert len(_keys(client.get(reverse("interactions:interaction_add")))) == 1
    assert len(_keys(client.get(_quick_log(world.org_a)))) == 1


def test_the_quick_log_posted_twice_makes_one_interaction_and_the_repeat_lands_where_the_first_did(client, world):
    client.force_login(world.lead_a)
    key = _keys(client.get(_quick_log(world.org_a)))[0]
    first = client.post(_quick_log(world.org_a), _quick_data(key))
    second = client.post(_quick_log(world.org_a), _quick_data(key))
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"] == world.org_a.get_absolute_url()
    assert Interaction.objects.filter(organization=world.org_a).count() == 1
    page = client.get(second["Location"])
    assert str(submissions.REPEATED) in page.content.decode()


def test_the_htmx_quick_log_repeat_answers_the_first_partial_with_a_new_key(client, world):
    client.force_login(world.lead_a)
    key = _keys(client.get(_quick_log(world.org_a)))[0]
    first = client.post(_quick_log(world.org_a), _quick_data(key), HTTP_HX_REQUEST="true")
    second = client.post(_quick_log(world.org_a), _quick_data(key), HTTP_HX_REQUEST="true")
    assert first.status_code == second.status_code == 200
    assert Interaction.objects.filter(organization=world.org_a).count() == 1
    for response in (first, second):
        assert "NCCL timeouts on two nodes" in response.content.decode()
        assert key not in _keys(response)  # the next quick log is a new submission
    third = client.post(_quick_log(world.org_a), _quick_data(_keys(second)[0], "a second problem"),
                        HTTP_HX_REQUEST="true")
    assert third.status_code == 200 and Interaction.objects.filter(organization=world.org_a).count() == 2


def test_the_full_form_keeps_its_key_after_errors_so_the_corrected_form_saves_once(client, world):
    client.force_login(world.lead_a)
    key = _keys(client.get(reverse("interactions:interaction_add")))[0]
    invalid = client.post(reverse("interactions:interaction_add"), {**_full_data(world, key), "summary": ""})
    assert invalid.status_code == 400 and _keys(invalid) == [key]
    assert not Submission.objects.exists()
    saved = client.post(reverse("interactions:interaction_add"), _full_data(world, key))
    again = client.post(reverse("interactions:interaction_add"), _full_data(world, key))
    assert saved.status_code == again.status_code == 302 and saved["Location"] == again["Location"]
    assert Interaction.objects.filter(organization=world.org_a).count() == 1


def test_a_post_without_a_key_works_as_before(client, world):
    client.force_login(world.lead_a)
    data = _quick_data("")
    del data["submission_key"]
    client.post(_quick_log(world.org_a), data)
    client.post(_quick_log(world.org_a), data)
    assert Interaction.objects.filter(organization=world.org_a).count() == 2  # no key: no way to tell a repeat


def test_a_key_is_the_users_and_the_routes(client, world):
    interaction = InteractionFactory(organization=world.org_a)
    comment = reverse("interactions:interaction_comment", kwargs={"pk": interaction.pk})
    client.force_login(world.lead_a)
    client.post(comment, {"body": "first", "submission_key": "k" * 32})
    client.post(_quick_log(world.org_a), _quick_data("k" * 32))  # another route: another submission
    client.force_login(world.customer_a)
    client.post(comment, {"body": "the customer's", "submission_key": "k" * 32})  # another user: theirs
    assert InteractionComment.objects.filter(interaction=interaction).count() == 2
    assert Interaction.objects.filter(organization=world.org_a).count() == 2


def test_a_key_expires(client, world, settings):
    settings.SUBMISSION_KEY_TTL_HOURS = 24
    client.force_login(world.lead_a)
    client.post(_quick_log(world.org_a), _quick_data("k" * 32))
    Submission.objects.update(created=timezone.now() - timedelta(hours=25))
    client.post(_quick_log(world.org_a), _quick_data("k" * 32))  # honoured no longer: a new submission
    assert Interaction.objects.filter(organization=world.org_a).count() == 2
    Submission.objects.update(created=timezone.now() - timedelta(hours=25))
    from portal.core.tasks import expire_submissions

    assert expire_submissions() == 1 and not Submission.objects.exists()


# --- the API's Idempotency-Key ---------------------------------------------------------------------------------

def _api(world):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(world.lead_a)
    return client


OCCURRED = "2026-11-30T09:00:00+09:00"


def _api_body(world, summary="NCCL hangs at 256 ranks"):
    return {"organization": world.org_a.pk, "kind": "support_case", "summary": summary, "severity": "normal",
            "visibility": "shared", "occurred_at": OCCURRED, "status": "open"}


def test_the_api_replays_the_first_answer_for_the_same_key_and_refuses_another_body(world):
    client, url, body = _api(world), reverse("interactions-api:interaction-list"), _api_body(world)
    first = client.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="retry-1")
    second = client.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="retry-1")
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json() and second["Idempotent-Replayed"] == "true"
    other = client.post(url, _api_body(world, "something else"), format="json", HTTP_IDEMPOTENCY_KEY="retry-1")
    assert other.status_code == 409 and "different body" in other.json()["detail"]
    assert Interaction.objects.filter(organization=world.org_a).count() == 1
    client.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="retry-2")
    client.post(url, body, format="json")  # no key: a new interaction, as before
    assert Interaction.objects.filter(organization=world.org_a).count() == 3


def test_an_api_request_refused_as_invalid_leaves_its_key_free(world):
    client, url = _api(world), reverse("interactions-api:interaction-list")
    bad = client.post(url, {**_api_body(world), "summary": ""}, format="json", HTTP_IDEMPOTENCY_KEY="fix-me")
    assert bad.status_code == 400 and not Submission.objects.exists()
    good = client.post(url, _api_body(world), format="json", HTTP_IDEMPOTENCY_KEY="fix-me")
    assert good.status_code == 201
    too_long = client.post(url, _api_body(world), format="json", HTTP_IDEMPOTENCY_KEY="x" * 129)
    assert too_long.status_code == 400 and "Idempotency-Key" in too_long.json()


def test_a_repeated_api_action_answers_the_first_escalation(world):
    interaction = InteractionFactory(organization=world.org_a, status="open")
    url = reverse("interactions-api:interaction-escalate", kwargs={"pk": interaction.pk})
    body = {"reason": "NCCL all_reduce stalls", "target": target().slug}
    client = _api(world)
    first = client.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="esc-1")
    second = client.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="esc-1")
    assert first.status_code == second.status_code == 200 and first.json() == second.json()
    assert Escalation.objects.filter(interaction=interaction).count() == 1


# --- N identical requests released together (PostgreSQL) -------------------------------------------------------

@pytest.fixture
def postgres_only(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite admits one writer at a time, so requests cannot race")


@pytest.mark.django_db(transaction=True)
def test_racing_quick_logs_make_one_interaction(world, postgres_only):
    clients = signed_in(world.lead_a, N)
    responses = race(N, lambda i: clients[i].post(_quick_log(world.org_a), _quick_data("q" * 32)))
    assert Counter(r.status_code for r in responses) == {302: N}, responses
    assert {r["Location"] for r in responses} == {world.org_a.get_absolute_url()}
    assert Interaction.objects.filter(organization=world.org_a).count() == 1


@pytest.mark.django_db(transaction=True)
def test_racing_full_forms_make_one_interaction_and_all_land_on_it(world, postgres_only):
    clients = signed_in(world.lead_a, N)
    url = reverse("interactions:interaction_add")
    responses = race(N, lambda i: clients[i].post(url, _full_data(world, "f" * 32)))
    assert Counter(r.status_code for r in responses) == {302: N}, responses
    made = Interaction.objects.get(organization=world.org_a)
    assert {r["Location"] for r in responses} == {made.get_absolute_url()}


@pytest.mark.django_db(transaction=True)
def test_racing_escalations_make_one_escalation(world, postgres_only):
    interaction = InteractionFactory(organization=world.org_a, status="open")
    url = reverse("interactions:interaction_escalate", kwargs={"pk": interaction.pk})
    clients = signed_in(world.lead_a, N)
    data = {"target": target().slug, "reason": "all_reduce stalls at 64 nodes", "submission_key": "e" * 32}
    responses = race(N, lambda i: clients[i].post(url, data))
    assert Counter(r.status_code for r in responses) == {302: N}, responses
    assert Escalation.objects.filter(interaction=interaction).count() == 1


@pytest.mark.django_db(transaction=True)
def test_racing_comments_make_one_comment(world, postgres_only):
    interaction = InteractionFactory(organization=world.org_a)
    url = reverse("interactions:interaction_comment", kwargs={"pk": interaction.pk})
    clients = signed_in(world.lead_a, N)
    responses = race(N, lambda i: clients[i].post(url, {"body": "Tried NCCL 2.21", "submission_key": "c" * 32}))
    assert Counter(r.status_code for r in responses) == {302: N}, responses
    assert InteractionComment.objects.filter(interaction=interaction, body="Tried NCCL 2.21").count() == 1


@pytest.mark.django_db(transaction=True)
def test_racing_api_creates_with_one_idempotency_key_make_one_row_and_one_answer(world, postgres_only):
    clients = signed_in(world.lead_a, N, api=True)
    url, body = reverse("interactions-api:interaction-list"), _api_body(world)
    responses = race(N, lambda i: clients[i].post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="race-1"))
    assert Counter(r.status_code for r in responses) == {201: N}, responses
    assert len({r.json()["id"] for r in responses}) == 1
    assert Interaction.objects.filter(organization=world.org_a).count() == 1
    assert sum(r.get("Idempotent-Replayed") == "true" for r in responses) == N - 1


def test_the_schema_documents_the_header_on_creates(db):
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    create = schema["paths"]["/api/interactions/interactions/"]["post"]
    header = next(p for p in create["parameters"] if p["name"] == submissions.HEADER)
    assert header["in"] == "header" and header["schema"]["maxLength"] == 128 and "409" in create["responses"]
    update = schema["paths"]["/api/interactions/interactions/{id}/"]["put"]
    assert all(p["name"] != submissions.HEADER for p in update.get("parameters", []))
