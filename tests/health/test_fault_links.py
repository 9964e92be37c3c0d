"""GPU faults linked to support interactions: the API, the cluster health page, the interaction page."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from clusters.health.models import INTERACTION_OTHER_ORGANIZATION, GpuFault
from portal.core import access
from tests.factories import MembershipFactory, UserFactory
from tests.health.factories_health import ClusterFactory, GpuFaultFactory
from tests.interactions.factories_interactions import InteractionFactory
from tests.queries import assert_flat_queries

INTERNAL = "ZZ-INTERNAL-ONLY suspect a bad HBM stack"
SHARED = "NCCL hangs on node-3"


@pytest.fixture
def fault(cluster):
    return GpuFaultFactory(cluster=cluster, hostname="node-3", gpu="5", xid=79)


@pytest.fixture
def shared(world):
    return InteractionFactory(organization=world.org_a, summary=SHARED, visibility="shared")


@pytest.fixture
def internal(world):
    return InteractionFactory(organization=world.org_a, summary=INTERNAL, visibility="internal")


@pytest.fixture
def foreign(world):
    return InteractionFactory(organization=world.org_b, summary="Beta's own case", visibility="shared")


def _detail(fault):
    return reverse("health-api:gpufault-detail", kwargs={"pk": fault.pk})


def _patch(client, fault, data):
    return client.patch(_detail(fault), data=data, content_type="application/json")


def _link_url(fault):
    return reverse("health:gpufault_link", kwargs={"pk": fault.pk})


def _page(client, cluster):
    return client.get(reverse("health:cluster_health", kwargs={"pk": cluster.pk})).content.decode()


def _both_orgs_lead(world):
    """A lead SA of A and B: sees B's interactions, so only the organization check can refuse them."""
    MembershipFactory(user=world.lead_a, organization=world.org_b, role="lead_sa")
    access.forget(world.lead_a)
    return world.lead_a


# --- API ------------------------------------------------------------------------------------------
def test_lead_sa_links_and_unlinks_through_the_api_only_the_link_is_written(client, world, fault, internal):
    client.force_login(world.lead_a)
    response = _patch(client, fault, {"interaction": internal.pk, "hostname": "elsewhere", "severity": "info"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["interaction"] == internal.pk and body["interaction_summary"] == INTERNAL
    fault.refresh_from_db()
    assert fault.interaction_id == internal.pk
    assert (fault.hostname, fault.severity) == ("node-3", "critical")  # read-only fields untouched
    assert client.get(_detail(fault)).json()["interaction_summary"] == INTERNAL

    response = _patch(client, fault, {"interaction": None})
    assert response.status_code == 200 and response.json()["interaction"] is None
    fault.refresh_from_db()
    assert fault.interaction_id is None


def test_other_organizations_interaction_is_refused_with_a_field_error(client, world, fault, foreign, shared):
    GpuFault.objects.filter(pk=fault.pk).update(interaction=shared)
    client.force_login(_both_orgs_lead(world))
    response = _patch(client, fault, {"interaction": foreign.pk})
    assert response.status_code == 400
    assert response.json() == {"interaction": [INTERACTION_OTHER_ORGANIZATION]}
    fault.refresh_from_db()
    assert fault.interaction_id == shared.pk  # nothing written


def test_an_interaction_the_caller_cannot_see_does_not_exist(client, world, fault, foreign):
    client.force_login(world.lead_a)
    response = _patch(client, fault, {"interaction": foreign.pk})
    assert response.status_code == 400
    assert "does not exist" in response.json()["interaction"][0]
    assert "Beta" not in response.content.decode()
    assert GpuFault.objects.get(pk=fault.pk).interaction_id is None


@pytest.mark.parametrize(("role", "status"), [("customer_a", 403), ("pm", 403), ("customer_b", 404), ("lead_b", 404)])
def test_only_lead_sas_of_the_organization_may_patch(client, world, fault, shared, role, status):
    client.force_login(world.users()[role])
    assert _patch(client, fault, {"interaction": shared.pk}).status_code == status
    assert GpuFault.objects.get(pk=fault.pk).interaction_id is None


def test_put_and_delete_are_not_served(client, world, fault):
    client.force_login(world.staff)
    assert client.put(_detail(fault), data={}, content_type="application/json").status_code == 405
    assert client.delete(_detail(fault)).status_code == 405
    assert GpuFault.objects.filter(pk=fault.pk).exists()


def test_customer_never_sees_an_internal_interaction_through_the_api(client, world, cluster, fault, internal, shared):
    other = GpuFaultFactory(cluster=cluster, hostname="node-4", interaction=shared)
    GpuFault.objects.filter(pk=fault.pk).update(interaction=internal)
    client.force_login(world.customer_a)
    listed = client.get(reverse("health-api:gpufault-list"))
    rows = {row["id"]: row for row in listed.json()["results"]}
    assert rows[fault.pk]["interaction"] is None and rows[fault.pk]["interaction_summary"] is None
    assert rows[other.pk]["interaction"] == shared.pk and rows[other.pk]["interaction_summary"] == SHARED
    detail = client.get(_detail(fault))
    assert detail.json()["interaction"] is None
    assert INTERNAL not in listed.content.decode() and INTERNAL not in detail.content.decode()
    client.force_login(world.pm)  # program managers see internal interactions
    assert client.get(_detail(fault)).json()["interaction_summary"] == INTERNAL


@pytest.mark.parametrize("linked", [False, True])
@pytest.mark.parametrize("role", ["lead_a", "customer_a"])
def test_fault_list_query_count_does_not_grow_with_links(client, world, cluster, linked, role):
    def grow(n):
        for _ in range(n):
            i = GpuFault.objects.count()
            visibility = "internal" if i % 2 else "shared"
            interaction = InteractionFactory(organization=world.org_a, visibility=visibility) if linked else None
            GpuFaultFactory(cluster=cluster, hostname=f"node-{i}", interaction=interaction)

    client.force_login(world.users()[role])
    # session, user, memberships, count, page: the same with or without links, at any size
    assert_flat_queries(client, reverse("health-api:gpufault-list"), grow=grow, sizes=(2, 12), at_most=5)
    rows = client.get(reverse("health-api:gpufault-list")).json()["results"]
    assert len(rows) == 12
    shown = sum(1 for row in rows if row["interaction_summary"])
    expected = 0 if not linked else (12 if role == "lead_a" else 6)  # customers see the shared half only
    assert shown == expected


# --- pages ----------------------------------------------------------------------------------------
def test_lead_sa_links_from_the_health_page_with_htmx(client, world, cluster, fault, shared, internal):
    client.force_login(world.lead_a)
    html = _page(client, cluster)
    assert f'hx-post="{_link_url(fault)}"' in html
    assert SHARED in html and f"{INTERNAL} (internal)" in html  # both open interactions are offered
    assert "summary=XID%2079%20on%20node-3%20GPU%205" in html and "organization=alpha-labs" in html

    response = client.post(_link_url(fault), {"interaction": shared.pk}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    partial = response.content.decode()
    assert partial.startswith(f'<div id="fault-{fault.pk}-interaction">') and "Linked." in partial
    assert reverse("interactions:interaction_detail", kwargs={"pk": shared.pk}) in partial
    assert GpuFault.objects.get(pk=fault.pk).interaction_id == shared.pk


def test_lead_sa_links_without_htmx_and_unlinks(client, world, cluster, fault, shared):
    client.force_login(world.lead_a)
    response = client.post(_link_url(fault), {"interaction": shared.pk})
    assert response.status_code == 302 and response["Location"] == reverse("health:cluster_health",
                                                                           kwargs={"pk": cluster.pk})
    assert GpuFault.objects.get(pk=fault.pk).interaction_id == shared.pk
    assert client.post(_link_url(fault), {"interaction": ""}).status_code == 302
    assert GpuFault.objects.get(pk=fault.pk).interaction_id is None


def test_page_refuses_another_organizations_interaction(client, world, cluster, fault, foreign):
    client.force_login(_both_orgs_lead(world))
    response = client.post(_link_url(fault), {"interaction": foreign.pk})
    assert response.status_code == 400
    assert INTERACTION_OTHER_ORGANIZATION.replace("'", "&#x27;") in response.content.decode()
    response = client.post(_link_url(fault), {"interaction": foreign.pk}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and 'role="alert"' in response.content.decode()
    assert GpuFault.objects.get(pk=fault.pk).interaction_id is None


@pytest.mark.parametrize(("role", "status"), [("customer_a", 403), ("pm", 403), ("customer_b", 404), ("lead_b", 404)])
def test_page_link_refused_for_others(client, world, fault, shared, role, status):
    client.force_login(world.users()[role])
    assert client.post(_link_url(fault), {"interaction": shared.pk}).status_code == status
    assert GpuFault.objects.get(pk=fault.pk).interaction_id is None


def test_health_page_shows_links_by_visibility(client, world, cluster, fault, shared, internal):
    other = GpuFaultFactory(cluster=cluster, hostname="node-4", interaction=shared)
    GpuFault.objects.filter(pk=fault.pk).update(interaction=internal)
    client.force_login(world.customer_a)
    html = _page(client, cluster)
    assert INTERNAL not in html
    assert f'<a href="{reverse("interactions:interaction_detail", kwargs={"pk": shared.pk})}">{SHARED}</a>' in html
    assert "hx-post" not in html and "Open a new interaction" not in html  # customers do not link
    assert other.interaction_id == shared.pk
    client.force_login(world.lead_a)
    assert INTERNAL in _page(client, cluster)


def test_health_page_query_count_with_links(client, world, cluster):
    def grow(n):
        for _ in range(n):
            interaction = InteractionFactory(organization=world.org_a)
            GpuFaultFactory(cluster=cluster, hostname=f"node-{GpuFault.objects.count()}", interaction=interaction)

    client.force_login(world.lead_a)
    # 11, +1 for the pushes not yet in a report, +1 for the organization's Grafana workspace links, +1 for the
    # validations started from the portal
    assert_flat_queries(lambda: _page(client, cluster), grow=grow, sizes=(2, 12), at_most=14)
    assert _page(client, cluster).count("Change link") == 12


def test_interaction_page_lists_linked_faults(client, world, cluster, fault, shared):
    GpuFault.objects.filter(pk=fault.pk).update(interaction=shared)
    GpuFaultFactory(cluster=ClusterFactory(organization=world.org_a, name="other"), hostname="node-9")  # not linked
    url = reverse("interactions:interaction_detail", kwargs={"pk": shared.pk})
    for role in ("customer_a", "lead_a"):
        client.force_login(world.users()[role])
        html = client.get(url).content.decode()
        assert "Linked GPU faults" in html and "node-3" in html and "alpha-train" in html
        assert "node-9" not in html
    client.force_login(world.customer_b)
    assert client.get(url).status_code == 404


def test_interaction_add_form_prefilled_from_a_fault(client, world, fault):
    client.force_login(world.lead_a)
    response = client.get(reverse("interactions:interaction_add"),
                          {"organization": "alpha-labs", "summary": fault.suggested_summary})
    form = response.context["form"]
    assert form.initial["summary"] == "XID 79 on node-3 GPU 5"
    assert form.initial["organization"] == world.org_a.pk


# --- model ----------------------------------------------------------------------------------------
def test_model_clean_refuses_another_organization_and_delete_unlinks(fault, shared, foreign):
    fault.interaction = foreign
    with pytest.raises(ValidationError) as exc:
        fault.full_clean()
    assert exc.value.message_dict == {"interaction": [INTERACTION_OTHER_ORGANIZATION]}
    fault.interaction = shared
    fault.full_clean()
    fault.save()
    shared.delete()
    fault.refresh_from_db()
    assert fault.interaction_id is None


# --- history ------------------------------------------------------------------------------------
def _fault_entries(interaction):
    return list(interaction.history.filter(kind="fault").values_list("old_value", "new_value", "internal",
                                                                     "author__username"))


def test_linking_moving_and_unlinking_write_the_interactions_history(client, world, cluster, fault, shared, internal):
    """Each move of the link is one history entry on each interaction it leaves or reaches, internal where the
    interaction is; the customer reads the shared interaction's entries on its page, never the internal one's."""
    client.force_login(world.lead_a)
    named = f"node-3 GPU 5 on {cluster.name}: {fault.meaning}"
    assert _patch(client, fault, {"interaction": shared.pk}).status_code == 200
    assert _fault_entries(shared) == [("", named, False, "lead_a")]
    assert _patch(client, fault, {"interaction": shared.pk}).status_code == 200  # the same link again: nothing
    assert len(_fault_entries(shared)) == 1

    assert client.post(_link_url(fault), {"interaction": internal.pk}).status_code == 302  # the page moves it
    assert _fault_entries(shared) == [("", named, False, "lead_a"), (named, "", False, "lead_a")]
    assert _fault_entries(internal) == [("", named, True, "lead_a")]
    assert _patch(client, fault, {"interaction": None}).status_code == 200
    assert _fault_entries(internal)[-1] == (named, "", True, "lead_a")

    client.force_login(world.customer_a)
    page = client.get(reverse("interactions:interaction_detail", kwargs={"pk": shared.pk})).content.decode()
    assert page.count("GPU fault") >= 2 and "node-3 GPU 5" in page


def test_a_refused_link_writes_no_history(client, world, fault, shared, foreign):
    client.force_login(world.customer_a)
    assert _patch(client, fault, {"interaction": shared.pk}).status_code == 403
    client.force_login(_both_orgs_lead(world))
    assert _patch(client, fault, {"interaction": foreign.pk}).status_code == 400
    assert not shared.history.filter(kind="fault").exists() and not foreign.history.filter(kind="fault").exists()


@pytest.mark.django_db(transaction=True)
def test_two_leads_relinking_one_fault_at_once_record_each_move(world, cluster, fault, shared, internal):
    """Released together on PostgreSQL: whichever link lands second reads the first one's under the fault's row
    lock, so the history holds a link on one interaction, then an unlink there and a link on the other."""
    from django.db import connection

    from clusters.health.faults import links
    from tests.concurrency import race

    if connection.vendor != "postgresql":
        pytest.skip("SQLite allows one writer at a time")
    other_lead = MembershipFactory(user=UserFactory(username="lead_a2"), organization=world.org_a, role="lead_sa").user
    targets = [(world.lead_a, shared), (other_lead, internal)]

    def relink(i):
        user, interaction = targets[i]
        return links.link(GpuFault.objects.select_related("cluster").get(pk=fault.pk), interaction, user)

    results = race(2, relink)
    assert not [r for r in results if isinstance(r, BaseException)], results
    last = GpuFault.objects.get(pk=fault.pk).interaction_id
    first = shared.pk if last == internal.pk else internal.pk
    moves = {i.pk: list(i.history.filter(kind="fault").values_list("old_value", "new_value"))
             for i in (shared, internal)}
    named = f"node-3 GPU 5 on {cluster.name}: {fault.meaning}"
    assert moves[first] == [("", named), (named, "")] and moves[last] == [("", named)]
