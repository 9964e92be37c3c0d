"""People are named the same way everywhere: tables and detail pages show the full name (the username when
there is none) through one filter; an interaction's page says whether it is internal or shared."""
from __future__ import annotations

import pytest
from django.urls import reverse

from portal.core.templatetags.portal_display import person
from portal.engagement import services
from tests.engagement.factories_engagement import specialist, target
from tests.factories import UserFactory
from tests.interactions.factories_interactions import InteractionFactory

pytestmark = pytest.mark.django_db


def test_the_filter_names_a_person_by_full_name_else_username():
    assert person(UserFactory(username="frameworks", first_name="Takeshi", last_name="Mori")) == "Takeshi Mori"
    assert person(UserFactory(username="ec2")) == "ec2"
    assert person(None) == "" and person("Aiko Sato") == "Aiko Sato"


def test_the_escalation_table_shows_the_assignees_full_name(client, world):
    fw = specialist("fw_specialist", "frameworks")
    fw.first_name, fw.last_name = "Takeshi", "Mori"
    fw.save()
    escalation = services.raise_escalation(InteractionFactory(organization=world.org_a), world.lead_a,
                                           target("frameworks"), "why?")
    services.transition(escalation, fw, "accept")
    client.force_login(world.lead_a)
    page = client.get(reverse("engagement:escalation_list")).content.decode()
    assert "Takeshi Mori" in page and ">fw_specialist<" not in page


def test_the_interaction_lists_show_the_owners_full_name(client, world):
    world.lead_a.first_name, world.lead_a.last_name = "Aiko", "Sato"
    world.lead_a.save()
    InteractionFactory(organization=world.org_a, owner=world.lead_a, summary="EFA down")
    client.force_login(world.lead_a)
    page = client.get(reverse("interactions:interaction_list")).content.decode()
    assert "Aiko Sato" in page


def test_an_interactions_page_says_whether_it_is_internal_or_shared(client, world):
    internal = InteractionFactory(organization=world.org_a, visibility="internal")
    shared = InteractionFactory(organization=world.org_a, visibility="shared")
    client.force_login(world.lead_a)
    page = client.get(internal.get_absolute_url()).content.decode()
    assert "<dt>Visibility</dt>" in page and "AWS only" in page
    page = client.get(shared.get_absolute_url()).content.decode()
    assert f"Shared with {world.org_a.name}" in page
    client.force_login(world.customer_a)
    assert f"Shared with {world.org_a.name}" in client.get(shared.get_absolute_url()).content.decode()
    assert client.get(internal.get_absolute_url()).status_code == 404
    client.force_login(world.customer_b)
    assert client.get(shared.get_absolute_url()).status_code == 404


def test_the_demo_fills_in_names_of_users_an_earlier_step_created_bare():
    from sandbox.program import _user

    UserFactory(username="frameworks")
    assert person(_user("frameworks", first="Takeshi", last="Mori")) == "Takeshi Mori"


def test_interactions_clusters_and_blueprints_are_in_the_admin_index(client, world):
    from django.contrib.auth import get_user_model

    admin_user = get_user_model().objects.create_superuser("root", "root@example.com", "x")
    client.force_login(admin_user)
    html = client.get("/admin/").content.decode()
    for path in ("/admin/interactions/interaction/", "/admin/clusters/cluster/", "/admin/clusters/blueprint/"):
        assert f'href="{path}"' in html
        assert client.get(path).status_code == 200


def test_the_readme_lists_every_demo_login_and_how_to_change_the_port():
    from pathlib import Path

    from django.conf import settings

    from sandbox.engagement import SPECIALISTS
    from sandbox.program import LOGINS

    readme = (Path(settings.BASE_DIR) / "README.md").read_text()
    table = readme.split("Demo logins", 1)[1].split("\n\n", 2)[1]
    for username in {u for u, _ in LOGINS} | {s[0] for s in SPECIALISTS}:
        assert f"| `{username}` |" in table
    assert "run_demo --port" in readme and "make demo PORT=" in readme
    assert "@echo" in (Path(settings.BASE_DIR) / "Makefile").read_text().split("$(STAMP):", 1)[1].split("\n\n", 1)[0]
