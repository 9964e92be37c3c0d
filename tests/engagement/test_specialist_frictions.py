"""A specialist's pages offer what they can use: no empty "Organizations" link, only their teams in the team
filter, the organizations of their escalations, and the open/closed filter showing the default it applies."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from portal.engagement import services
from tests.engagement.factories_engagement import specialist, target
from tests.interactions.factories_interactions import InteractionFactory

pytestmark = pytest.mark.django_db

LIST = reverse("engagement:escalation_list")


def _options(html: str, name: str) -> list[str]:
    select = html.split(f'name="{name}"', 1)[1].split("</select>", 1)[0]
    return re.findall(r'<option value="([^"]*)"', select)


def _selected(html: str, name: str) -> str:
    select = html.split(f'name="{name}"', 1)[1].split("</select>", 1)[0]
    return re.search(r'<option value="([^"]*)"[^>]*selected', select).group(1)


@pytest.fixture
def escalations(world):
    fw = specialist("fw_specialist", "frameworks")
    mine = services.raise_escalation(InteractionFactory(organization=world.org_a, summary="NCCL slow"),
                                     world.lead_a, target("frameworks"), "why?")
    theirs = services.raise_escalation(InteractionFactory(organization=world.org_b, summary="EFA gone"),
                                       world.lead_b, target("ec2"), "hardware?")
    return fw, mine, theirs


def test_a_specialist_is_not_offered_an_empty_organizations_page(client, world, escalations):
    fw, _, _ = escalations
    client.force_login(fw)
    html = client.get(LIST).content.decode()
    assert reverse("portal:organization_list") not in html
    client.force_login(world.lead_a)
    assert reverse("portal:organization_list") in client.get(LIST).content.decode()


def test_the_team_and_organization_filters_offer_only_the_specialists_own(client, world, escalations):
    fw, _, _ = escalations
    client.force_login(fw)
    html = client.get(LIST).content.decode()
    assert _options(html, "target") == ["", "frameworks"]
    assert _options(html, "organization") == ["", world.org_a.slug]
    assert "NCCL slow" in html and "EFA gone" not in html
    assert client.get(LIST, {"target": "ec2"}).status_code == 200
    assert "EFA gone" not in client.get(LIST, {"target": "ec2"}).content.decode()
    client.force_login(world.pm)
    assert {"frameworks", "ec2"} <= set(_options(client.get(LIST).content.decode(), "target"))


def test_the_open_filter_shows_the_default_it_applies(client, world, escalations):
    fw, mine, _ = escalations
    services.transition(mine, fw, "accept")
    services.transition(mine, fw, "answer", "set FI_EFA_USE_DEVICE_RDMA=1")
    services.transition(mine, world.lead_a, "close")
    client.force_login(world.pm)
    html = client.get(LIST).content.decode()
    assert _selected(html, "open") == "true" and "NCCL slow" not in html and "EFA gone" in html
    html = client.get(LIST, {"target": "frameworks"}).content.decode()
    assert _selected(html, "open") == "true" and "NCCL slow" not in html
    html = client.get(LIST, {"open": "unknown"}).content.decode()
    assert _selected(html, "open") == "unknown" and "NCCL slow" in html and "EFA gone" in html
    html = client.get(LIST, {"state": "closed"}).content.decode()
    assert "NCCL slow" in html and "EFA gone" not in html


def test_customers_are_still_refused(client, world, escalations):
    client.force_login(world.customer_a)
    assert client.get(LIST).status_code == 403
