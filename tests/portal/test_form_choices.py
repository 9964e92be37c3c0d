"""Choices are scoped: no form or filter offers (or accepts) another organization's rows."""
from __future__ import annotations

import re

from django.urls import reverse

from portal.core.choices import MembershipRole
from tests.factories import MembershipFactory, OrganizationFactory, UserFactory
from tests.workloads.factories_workloads import InstanceQuotaFactory, QuotaChangeRequestFactory, WorkloadFactory


def _options(html: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, flags=re.S)
    assert select, f"no <select name={name}>"
    return re.findall(r'<option value="([^"]*)"', select.group(1))


def test_customer_quota_request_filter_lists_own_quotas_only(client, world):
    mine = InstanceQuotaFactory(organization=world.org_a, count=11)
    theirs = InstanceQuotaFactory(organization=world.org_b, count=22)
    QuotaChangeRequestFactory(quota=mine)
    client.force_login(world.customer_a)
    html = client.get(reverse("workloads:changerequest_list")).content.decode()
    assert _options(html, "quota") == ["", str(mine.pk)]
    # Asking the API for the other organization's quota by id answers as for an id that does not exist: nothing.
    api = client.get(reverse("workloads-api:quotachangerequest-list"), {"quota": theirs.pk})
    assert api.status_code == 200 and api.json()["count"] == 0
    assert str(theirs.pk) not in _options(client.get(reverse("workloads:quota_list")).content.decode(), "organization")


def test_interaction_form_offers_the_chosen_organizations_workloads_and_people(client, world):
    org_c = OrganizationFactory(name="Gamma Compute", slug="gamma-compute")
    MembershipFactory(user=world.lead_a, organization=org_c, role=MembershipRole.LEAD_SA)
    gamma_engineer = UserFactory(username="gamma_eng", first_name="Gen", last_name="Gamma")
    MembershipFactory(user=gamma_engineer, organization=org_c)
    wa = WorkloadFactory(organization=world.org_a, name="alpha-llm")
    wc = WorkloadFactory(organization=org_c, name="gamma-llm")
    WorkloadFactory(organization=world.org_b, name="beta-llm")
    client.force_login(world.lead_a)
    html = client.get(reverse("interactions:interaction_add"), {"organization": world.org_a.slug}).content.decode()
    assert _options(html, "workload") == ["", str(wa.pk)]
    watchers = _options(html, "watchers")
    assert str(world.customer_a.pk) in watchers and str(gamma_engineer.pk) not in watchers
    assert str(world.customer_b.pk) not in watchers
    # Choosing another organization reloads the form with that organization's choices, keeping the summary.
    html = client.get(reverse("interactions:interaction_add"), {"organization": org_c.pk, "summary": "kept"},
                      headers={"HX-Request": "true"}).content.decode()
    assert _options(html, "workload") == ["", str(wc.pk)] and 'value="kept"' in html
    # A posted mix is refused: the workload of one organization on an interaction of another.
    response = client.post(reverse("interactions:interaction_add"), {
        "organization": world.org_a.pk, "workload": wc.pk, "kind": "chat", "summary": "mixed",
        "occurred_at": "2026-11-30T10:00", "status": "open", "severity": "normal", "visibility": "shared",
        "watchers": [gamma_engineer.pk]})
    assert response.status_code == 400
    assert not world.org_a.interactions.filter(summary="mixed").exists()
