"""The demo seed is idempotent and models the case study."""
import pytest
from django.core.management import call_command

from portal.models import Membership, Organization, User

# The seed counts every organization and user: it needs a database without the world the other tests use.
pytestmark = pytest.mark.world_per_test


def test_seed_demo_twice_changes_nothing(db):
    call_command("seed_demo")
    counts = (Organization.objects.count(), User.objects.count(), Membership.objects.count())
    call_command("seed_demo")
    assert (Organization.objects.count(), User.objects.count(), Membership.objects.count()) == counts
    assert counts[0] == 12
    assert User.objects.get(username="pm").is_program_manager
    kotoba = User.objects.get(username="kotoba")
    assert list(Organization.objects.visible_to(kotoba).values_list("slug", flat=True)) == ["kotoba-labs"]


def test_demo_runs_with_debug_off_and_its_own_redis_database(monkeypatch):
    from portal.management.commands import run_demo

    assert run_demo.demo_web_environment() == {"DEBUG": "false"}
    assert run_demo.demo_web_environment(debug=True) == {"DEBUG": "true"}
    monkeypatch.delenv("DEMO_REDIS_DB", raising=False)
    dbs = {run_demo.demo_redis_db(port) for port in (8000, 8017, 8001)}
    assert len(dbs) == 3 and not dbs & {0, 15}  # two demos never share a database, nor the tests'
    monkeypatch.setenv("DEMO_REDIS_DB", "4")
    assert run_demo.demo_redis_db(8000) == 4


def test_error_pages_are_the_portals_own_with_debug_off(client, world, settings):
    """A mistyped address shows the portal's page (no URL list); 403 and 500 pages too."""
    from django.test import RequestFactory
    from django.views import defaults

    settings.DEBUG = False
    client.force_login(world.customer_a)
    response = client.get("/no-such-page/")
    body = response.content.decode()
    assert response.status_code == 404 and "<h1>Not found</h1>" in body and "URLconf" not in body
    assert "site-header" in body or "<nav" in body  # the portal's frame, not a bare page
    assert client.get("/overview/").status_code == 403
    assert "<h1>Not allowed</h1>" in client.get("/overview/").content.decode()
    error = defaults.server_error(RequestFactory().get("/"))
    assert error.status_code == 500 and b"Something went wrong" in error.content and b"pico.min.css" in error.content
