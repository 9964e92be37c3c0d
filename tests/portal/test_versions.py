"""Lost updates: every edit carries the version it was read at, and a save over a newer one is refused.

Two people open the same edit page (real sessions, the forms as the pages render them), both save: the
second is answered 409 with what changed meanwhile and a form to re-apply theirs; re-applying saves, and
history keeps both edits. The API answers ``ETag`` and refuses a stale ``If-Match`` with 412. Saves released
together with the same version on PostgreSQL: exactly one passes.
"""
from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.urls import resolve, reverse
from rest_framework.test import APIClient

from clusters.health.models import ClusterHealthConfig
from portal.core.api.base import PortalUpdateMixin
from portal.core.generic import ObjectEditView
from portal.core.versions import FIELD
from tests.concurrency import race
from tests.factories import MembershipFactory, UserFactory
from tests.html_forms import post_form
from tests.portal.test_routes import LazyObjects, all_routes
from workloads.models import Workload

LEAD, PM = "lead_a", "pm"
_CL = lambda o: {"pk": o["cluster"].pk}  # noqa: E731
_PK = lambda key: (lambda o: {"pk": o[key].pk})  # noqa: E731

# Every edit page: (objects key, the writer, URL kwargs, a text field both editors change, success status).
PAGES = {
    "workloads:workload_edit": ("workload", LEAD, _PK("workload"), "name", 302),
    "workloads:workload_section": ("workload", LEAD, lambda o: {"pk": o["workload"].pk, "section": "model"},
                                   "description", 303),
    "workloads:quota_edit": ("quota", PM, _PK("quota"), "notes", 302),
    "workloads:reservation_edit": ("reservation", PM, _PK("reservation"), "notes", 302),
    "workloads:changerequest_edit": ("change_request", LEAD, _PK("change_request"), "justification", 302),
    "interactions:interaction_edit": ("interaction", LEAD, _PK("interaction"), "summary", 302),
    "enablement:enablement_edit": ("enablement_session", PM, _PK("enablement_session"), "topic", 302),
    "engagement:trainedmodel_edit": ("trained_model", LEAD, _PK("trained_model"), "notes", 302),
    "health:cluster_health_settings": ("cluster", LEAD, _CL, "username", 302),
    "calls:call_edit": ("call", PM, _PK("call"), "description", 302),
    "calls:application_edit": ("application", LEAD, _PK("application"), "data_plan", 302),
    "funder:part_edit": ("funder_part", LEAD, _PK("funder_part"), "narrative", 302),
    "sso:provider_edit": ("identity_provider", PM, _PK("identity_provider"), "name", 302),
}
# Every API update: (objects key, the writer, the first body, the second body).
APIS = {
    "portal-api:organization-detail": ("organization", "staff", {"description": "first"}, {"description": "second"}),
    "workloads-api:workload-detail": ("workload", LEAD, {"name": "Alpha 101B"}, {"name": "Alpha 102B"}),
    "workloads-api:instancequota-detail": ("quota", PM, {"notes": "first"}, {"notes": "second"}),
    "workloads-api:capacityreservation-detail": ("reservation", PM, {"notes": "first"}, {"notes": "second"}),
    "workloads-api:quotachangerequest-detail": ("change_request", LEAD, {"justification": "first"},
                                                {"justification": "second"}),
    "interactions-api:interaction-detail": ("interaction", LEAD, {"summary": "first"}, {"summary": "second"}),
    "health-api:gpufault-detail": ("gpu_fault", LEAD, lambda o: {"interaction": o["interaction"].pk},
                                   {"interaction": None}),
    "engagement-api:milestone-detail": ("milestone", LEAD, {"note": "first"}, {"note": "second"}),
    "engagement-api:trainedmodel-detail": ("trained_model", LEAD, {"notes": "first"}, {"notes": "second"}),
    "calls-api:call-detail": ("call", PM, {"description": "first"}, {"description": "second"}),
    "calls-api:application-detail": ("application", LEAD, {"data_plan": "first"}, {"data_plan": "second"}),
    "funder-api:part-detail": ("funder_part", LEAD, {"narrative": "first"}, {"narrative": "second"}),
}


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _second_lead(world):
    return MembershipFactory(user=UserFactory(username="lead_a2"), organization=world.org_a, role="lead_sa").user


def test_every_edit_route_is_in_the_tables():
    """A new edit page or API update must be added here, so its version check is tested."""
    pages, apis = set(), set()
    for route_id, route in all_routes().items():
        view = getattr(route.callback, "view_class", None)
        viewset = getattr(route.callback, "cls", None)
        if view is not None and issubclass(view, ObjectEditView) and "<int:pk>" in str(route.pattern):
            pages.add(route_id)
        actions = getattr(route.callback, "actions", None) or {}
        if viewset is not None and issubclass(viewset, PortalUpdateMixin) and "patch" in actions \
                and "patch" in viewset.http_method_names:
            apis.add(route_id)
    assert pages <= set(PAGES), pages - set(PAGES)
    assert apis == set(APIS)


# --- pages ---------------------------------------------------------------------------------------------------

def test_two_leads_editing_one_workload_the_second_sees_the_first_change_and_reapplies(world):
    workload = LazyObjects(world)["workload"]
    url = reverse("workloads:workload_edit", kwargs={"pk": workload.pk})
    first, second = _client(world.lead_a), _client(_second_lead(world))
    form_1 = post_form(first.get(url).content, FIELD)
    form_2 = post_form(second.get(url).content, FIELD)
    old_name = workload.name
    assert form_1[FIELD] and form_1[FIELD] == form_2[FIELD]

    assert first.post(url, {**form_1, "name": "Alpha 101B"}).status_code == 302
    refused = second.post(url, {**form_2, "model_family": "Mixtral"})

    assert refused.status_code == 409
    page = refused.content.decode()
    assert "changed by someone else" in page
    row = refused.context["version_conflict"]
    assert [(c.name, c.read, c.current, c.yours) for c in row] == [("name", old_name, "Alpha 101B", old_name)]
    workload.refresh_from_db()
    assert (workload.name, workload.model_family) == ("Alpha 101B", "Llama 3.1")  # nothing of the second saved
    # The form comes back with the second lead's values on the stored version: saving re-applies them.
    again = post_form(page, FIELD)
    assert again["model_family"] == "Mixtral" and again[FIELD] != form_2[FIELD]
    again["name"] = "Alpha 101B"  # the lead takes the first one's name, as the page showed it
    assert second.post(url, again).status_code == 302
    workload.refresh_from_db()
    assert (workload.name, workload.model_family) == ("Alpha 101B", "Mixtral")
    edits = list(Workload.history.filter(id=workload.pk, history_type="~").order_by("history_date"))
    assert [(h.history_user.username, h.name, h.model_family) for h in edits] == [
        ("lead_a", "Alpha 101B", "Llama 3.1"), ("lead_a2", "Alpha 101B", "Mixtral")]


@pytest.mark.parametrize("route", sorted(PAGES))
def test_every_edit_page_refuses_a_stale_save_and_reapplies(world, route):
    key, writer, kwargs, field, success = PAGES[route]
    objs = LazyObjects(world)
    obj = objs[key]
    url = reverse(route, kwargs=kwargs(objs))
    first, second = _client(getattr(world, writer)), _client(getattr(world, writer))
    opened = [post_form(c.get(url, {"edit": 1} if "section" in route else {}).content, FIELD)
              for c in (first, second)]
    assert first.post(url, {**opened[0], field: "first edit"}).status_code == success

    refused = second.post(url, {**opened[1], field: "second edit"})
    assert refused.status_code == 409, refused.content.decode()[:2000]
    changes = refused.context["version_conflict"]
    # The first save may also round a stored value to what its form shows (a time to the minute).
    assert (field, "first edit", "second edit") in [(c.name, c.current, c.yours) for c in changes]
    stored = ClusterHealthConfig.objects.get(cluster=obj) if key == "cluster" else type(obj)._base_manager.get(pk=obj.pk)
    assert getattr(stored, field) == "first edit"

    assert second.post(url, post_form(refused.content, FIELD)).status_code == success
    stored.refresh_from_db()
    assert getattr(stored, field) == "second edit"


def test_a_form_without_a_version_saves_as_before(world):
    """Forms rendered before versions existed, and scripts posting fields alone, are accepted."""
    workload = LazyObjects(world)["workload"]
    url = reverse("workloads:workload_edit", kwargs={"pk": workload.pk})
    client = _client(world.lead_a)
    form = post_form(client.get(url).content, FIELD)
    del form[FIELD]
    client.post(url, {**form, "name": "Alpha 101B"})
    assert client.post(url, {**form, "model_family": "Mixtral"}).status_code == 302
    workload.refresh_from_db()
    assert workload.model_family == "Mixtral"


def test_an_invalid_form_keeps_the_version_it_was_read_at(world):
    workload = LazyObjects(world)["workload"]
    url = reverse("workloads:workload_edit", kwargs={"pk": workload.pk})
    first, second = _client(world.lead_a), _client(world.lead_a)
    form = post_form(second.get(url).content, FIELD)
    first.post(url, {**post_form(first.get(url).content, FIELD), "name": "Alpha 101B"})
    shown = second.post(url, {**form, "name": ""})  # refused by validation: shown again, same version
    assert shown.status_code == 200 and post_form(shown.content, FIELD)[FIELD] == form[FIELD]
    assert second.post(url, {**post_form(shown.content, FIELD), "name": "Alpha 9B"}).status_code == 409


def test_the_htmx_section_answers_the_conflict_in_place(world):
    workload = LazyObjects(world)["workload"]
    url = reverse("workloads:workload_section", kwargs={"pk": workload.pk, "section": "model"})
    first, second = _client(world.lead_a), _client(world.lead_a)
    forms = [post_form(c.get(url, {"edit": 1}).content, FIELD) for c in (first, second)]
    assert first.post(url, {**forms[0], "name": "Alpha 101B"}, HTTP_HX_REQUEST="true").status_code == 200
    answer = second.post(url, {**forms[1], "description": "Changed"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and "changed by someone else" in answer.content.decode()
    workload.refresh_from_db()
    assert workload.description != "Changed"


def test_a_password_never_reaches_the_page_in_the_version(world):
    from django.core import signing

    from portal.core.versions import _SALT

    cluster = LazyObjects(world)["cluster"]
    client = _client(world.lead_a)
    url = reverse("health:cluster_health_settings", kwargs={"pk": cluster.pk})
    client.get(url)
    config = ClusterHealthConfig.objects.get(cluster=cluster)
    config.secret = "ZZ-SECRET-PASSWORD"
    config.save()
    form = post_form(client.get(url).content, FIELD)
    assert "secret" not in signing.Signer(salt=_SALT).unsign_object(form[FIELD])["v"]


# --- the API ---------------------------------------------------------------------------------------------------

def _body(body, objs):
    return body(objs) if callable(body) else body


@pytest.mark.parametrize("route", sorted(APIS))
def test_every_api_update_answers_412_on_a_stale_if_match(world, route):
    key, writer, body_1, body_2 = APIS[route]
    objs = LazyObjects(world)
    obj = objs[key]
    url = reverse(route, kwargs={"pk": obj.pk})
    first, second = _api(getattr(world, writer)), _api(getattr(world, writer))
    etag = first.get(url).headers["ETag"]
    assert etag == second.get(url).headers["ETag"] and etag.startswith('"')

    saved = first.patch(url, _body(body_1, objs), format="json", HTTP_IF_MATCH=etag)
    assert saved.status_code == 200, saved.content
    assert saved.headers["ETag"] != etag and saved.headers["ETag"] == first.get(url).headers["ETag"]
    stale = second.patch(url, _body(body_2, objs), format="json", HTTP_IF_MATCH=etag)
    assert stale.status_code == 412
    assert stale.json()["code"] == "version_mismatch" and stale.json()["etag"] == saved.headers["ETag"]
    if "put" in resolve(url).func.cls.http_method_names:
        assert second.put(url, {**second.get(url).json(), **_body(body_2, objs)}, format="json",
                          HTTP_IF_MATCH=etag).status_code == 412
    # Read again, re-apply: saved.
    fresh = second.get(url).headers["ETag"]
    assert second.patch(url, _body(body_2, objs), format="json", HTTP_IF_MATCH=fresh).status_code == 200


def test_api_two_leads_the_second_is_refused_then_reapplies_and_history_keeps_both(world):
    workload = LazyObjects(world)["workload"]
    url = reverse("workloads-api:workload-detail", kwargs={"pk": workload.pk})
    first, second = _api(world.lead_a), _api(_second_lead(world))
    etag = first.get(url).headers["ETag"]
    assert second.get(url).headers["ETag"] == etag
    assert first.patch(url, {"name": "Alpha 101B"}, format="json", HTTP_IF_MATCH=etag).status_code == 200
    refused = second.patch(url, {"model_family": "Mixtral"}, format="json", HTTP_IF_MATCH=etag)
    assert refused.status_code == 412 and "changed since" in refused.json()["detail"]
    workload.refresh_from_db()
    assert workload.model_family == "Llama 3.1"
    current = second.get(url)
    assert second.patch(url, {"model_family": "Mixtral"}, format="json",
                        HTTP_IF_MATCH=current.headers["ETag"]).status_code == 200
    edits = Workload.history.filter(id=workload.pk, history_type="~").order_by("history_date")
    assert [(h.history_user.username, h.name, h.model_family) for h in edits] == [
        ("lead_a", "Alpha 101B", "Llama 3.1"), ("lead_a2", "Alpha 101B", "Mixtral")]


def test_api_without_if_match_updates_as_before_and_star_matches(world):
    workload = LazyObjects(world)["workload"]
    url = reverse("workloads-api:workload-detail", kwargs={"pk": workload.pk})
    client = _api(world.lead_a)
    assert client.patch(url, {"name": "Alpha 101B"}, format="json").status_code == 200
    assert client.patch(url, {"name": "Alpha 102B"}, format="json", HTTP_IF_MATCH="*").status_code == 200
    weak = "W/" + client.get(url).headers["ETag"]
    assert client.patch(url, {"name": "Alpha 103B"}, format="json", HTTP_IF_MATCH=weak).status_code == 412


def test_a_change_the_endpoint_does_not_write_keeps_its_etag(world):
    """The version covers what the endpoint writes: a row touched elsewhere (a comment bumping the activity
    time) does not refuse an update that would not overwrite it."""
    from workloads.interactions.models import Interaction

    interaction = LazyObjects(world)["interaction"]
    url = reverse("interactions-api:interaction-detail", kwargs={"pk": interaction.pk})
    client = _api(world.lead_a)
    etag = client.get(url).headers["ETag"]
    Interaction.objects.filter(pk=interaction.pk).update(last_activity_at=interaction.occurred_at)
    assert client.get(url).headers["ETag"] == etag


# --- released together -----------------------------------------------------------------------------------------

def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite allows one writer at a time")


@pytest.mark.django_db(transaction=True)
def test_saves_of_one_version_released_together_one_passes(world):
    _postgres_only()
    workload = LazyObjects(world)["workload"]
    url = reverse("workloads:workload_edit", kwargs={"pk": workload.pk})
    clients = [_client(world.lead_a), _client(_second_lead(world))] * 2
    form = post_form(clients[0].get(url).content, FIELD)
    changes = [{"name": "Alpha 101B"}, {"model_family": "Mixtral"}, {"name": "Alpha 102B"}, {"model_family": "Qwen"}]

    results = race(4, lambda i: clients[i].post(url, {**form, **changes[i]}).status_code)

    assert sorted(results) == [302, 409, 409, 409], results
    workload.refresh_from_db()
    kept = changes[results.index(302)]
    assert {k: getattr(workload, k) for k in kept} == kept
    assert Workload.history.filter(id=workload.pk, history_type="~").count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_api_updates_of_one_etag_released_together_one_passes(world):
    _postgres_only()
    workload = LazyObjects(world)["workload"]
    url = reverse("workloads-api:workload-detail", kwargs={"pk": workload.pk})
    clients = [_api(world.lead_a), _api(_second_lead(world))]
    etag = clients[0].get(url).headers["ETag"]
    bodies = [{"name": "Alpha 101B"}, {"model_family": "Mixtral"}]

    results = race(2, lambda i: clients[i].patch(url, bodies[i], format="json", HTTP_IF_MATCH=etag).status_code)

    assert sorted(results) == [200, 412], results
    assert Workload.history.filter(id=workload.pk, history_type="~").count() == 1


def test_two_leads_saving_milestones_the_second_sees_the_first_date(world):
    """An organization's milestones are saved as a set (under the organization's lock): the set's version."""
    from portal.engagement.models import Milestone

    url = reverse("engagement:outcomes", kwargs={"slug": world.org_a.slug})
    first, second = _client(world.lead_a), _client(_second_lead(world))
    forms = [post_form(c.get(url).content, FIELD) for c in (first, second)]
    assert first.post(url, {**forms[0], "onboarded": "2026-06-02"}).status_code == 302

    refused = second.post(url, {**forms[1], "cluster_validated": "2026-06-03"})
    assert refused.status_code == 409
    assert [(c.name, c.current, c.yours) for c in refused.context["version_conflict"]] == [
        ("onboarded", "2026-06-02", "—")]
    assert not Milestone.objects.filter(organization=world.org_a, kind="cluster_validated").exists()
    again = post_form(refused.content, FIELD)
    assert again["cluster_validated"] == "2026-06-03"
    again["onboarded"] = "2026-06-02"
    assert second.post(url, again).status_code == 302
    assert set(Milestone.objects.filter(organization=world.org_a).values_list("kind", flat=True)) == {
        "onboarded", "cluster_validated"}
