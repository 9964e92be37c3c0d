"""An empty list says why, and where to go instead: the organization list for a specialist (who holds no
organization role), for a user with no organization yet, and for a search that matches nothing."""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.engagement.factories_engagement import specialist
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
URL = reverse("portal:organization_list")


def _page(client, user, **query) -> str:
    client.force_login(user)
    response = client.get(URL, query)
    assert response.status_code == 200
    return response.content.decode()


def test_a_specialist_is_sent_to_the_escalations(world, client):
    page = _page(client, specialist("frameworks"))
    assert "You answer escalations" in page and f'href="{reverse("engagement:escalation_list")}"' in page


def test_a_user_without_an_organization_is_told_whom_to_ask(world, client):
    assert "ask the program manager to add you" in _page(client, UserFactory(username="newcomer"))


def test_a_search_that_matches_nothing_says_so(world, client):
    page = _page(client, world.pm, q="no-such-organization-zz")
    assert "No organization matches your search." in page
    assert world.org_a.name in _page(client, world.pm)  # and the list itself is unchanged
    htmx = client.get(URL, {"q": "zz-none"}, HTTP_HX_REQUEST="true").content.decode()
    assert "No organization matches your search." in htmx
