"""The demo seed is idempotent and models the case study."""
import pytest
from django.core.management import call_command

from portal.core.models import Membership, Organization, User

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
    from sandbox.management.commands import run_demo

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


def test_the_portals_own_address_is_one_setting_the_demo_sets_to_itself(settings):
    """PORTAL_BASE_URL alone says where clusters and AWS reach the portal: validation uploads, the demo nodes'
    health pushes and the SNS subscription read it, each with its own rule (SNS only under https)."""
    from django.conf import settings as live
    from django.urls import reverse

    from clusters.launches.service import portal_alert_endpoint
    from sandbox.management.commands import run_demo
    from sandbox.remediation import push_url

    assert not hasattr(live, "VALIDATION_PUBLIC_URL") and not hasattr(live, "DEMO_PORTAL_URL")
    from pathlib import Path

    source = Path(run_demo.__file__).read_text()
    assert 'env["PORTAL_BASE_URL"] = demo_base_url(port)' in source
    settings.PORTAL_BASE_URL = run_demo.demo_base_url(8112)
    assert settings.PORTAL_BASE_URL == "http://127.0.0.1:8112"

    class OneCluster:
        pk = 7

    assert push_url(OneCluster) == "http://127.0.0.1:8112" + reverse("health-api:ingest", kwargs={"cluster_id": 7})
    assert portal_alert_endpoint() == ""  # the demo's http address subscribes nothing
    settings.PORTAL_BASE_URL = "https://portal.geniac.example/"
    assert portal_alert_endpoint() == "https://portal.geniac.example" + reverse("health-api:alerts-sns")
