"""Sign-in, the home page that routes each role, organization pages, /healthz."""
import pytest
from django.urls import reverse

from tests.queries import assert_flat_queries


def test_login_page_is_public(client, db):
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert b'for="id_username"' in response.content


def test_sign_in_and_out(client, world):
    response = client.post(reverse("login"), {"username": "customer_a", "password": "pw-for-tests"})
    assert response.status_code == 302
    assert client.get(reverse("home")).status_code == 302
    client.post(reverse("logout"))
    assert client.get(reverse("home"))["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(
    ("user", "target"),
    [
        ("customer_a", "/organizations/alpha-labs/"),
        ("lead_a", "/lead/"),
        ("pm", "/overview/"),
        ("staff", "/overview/"),
    ],
)
def test_home_routes_each_role(client, world, user, target):
    client.force_login(getattr(world, user))
    response = client.get(reverse("home"))
    assert response.status_code == 302 and response["Location"] == target
    assert client.get(target).status_code == 200


def test_user_without_role_is_told(client, db):
    from tests.factories import UserFactory

    client.force_login(UserFactory(username="nobody"))
    response = client.get(reverse("home"))
    assert response.status_code == 403
    assert b"No role yet" in response.content


def test_organization_list_search_and_htmx_partial(client, world):
    client.force_login(world.pm)
    full = client.get(reverse("portal:organization_list"), {"q": "beta"})
    assert b"Beta Works" in full.content and b"Alpha Labs" not in full.content and b"<html" in full.content
    partial = client.get(reverse("portal:organization_list"), {"q": "alpha"}, headers={"HX-Request": "true"})
    assert b"<html" not in partial.content and b"Alpha Labs" in partial.content


def test_organization_csv_export_is_scoped(client, world):
    client.force_login(world.customer_b)
    response = client.get(reverse("portal:organization_list"), {"export": "csv"})
    body = b"".join(response.streaming_content).decode()
    assert body.splitlines() == ["Name,Slug,Home region", "Beta Works,beta-works,ap-northeast-1"]


def test_lead_home_lists_only_assigned(client, world):
    client.force_login(world.lead_a)
    content = client.get(reverse("portal:lead_home")).content.decode()
    assert "Alpha Labs" in content and "Beta Works" not in content


def test_overview_is_for_program_managers(client, world):
    client.force_login(world.lead_a)
    assert client.get(reverse("review:overview")).status_code == 403


def test_organization_list_query_count_is_constant(client, world):
    from tests.factories import OrganizationFactory

    client.force_login(world.pm)
    assert_flat_queries(client, reverse("portal:organization_list"), grow=OrganizationFactory.create_batch,
                        sizes=(1, 41), at_most=8)


def test_healthz_reports_parts_to_staff_only(client, world, settings):
    response = client.get("/healthz")
    assert response.status_code == 200 and set(response.json()) == {"status"}
    client.force_login(world.lead_a)
    assert set(client.get("/healthz").json()) == {"status"}
    client.force_login(world.staff)
    body = client.get("/healthz").json()
    assert body["database"]["ok"] is True
    assert set(body) == {"status", "database", "broker", "workers"}


def test_healthz_never_tells_anonymous_callers_an_error_text(client, db, settings):
    """A broker that cannot be reached: the status says degraded, the connection error stays for staff."""
    from portal.celery import app

    previous = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:9/0"
    app._pool = None
    try:
        body = client.get("/healthz").json()
    finally:
        app.conf.broker_url = previous
        app._pool = None
    assert body == {"status": "degraded"}


def test_static_assets_are_local(client, world):
    client.force_login(world.pm)
    html = client.get(reverse("review:overview")).content.decode()
    assert "https://" not in html.split("<body")[0]
    assert "/static/django_htmx/htmx-2.min.js" in html or "htmx" in html


def test_oversized_body_is_refused(client, world, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    client.force_login(world.pm)
    response = client.post(reverse("portal:organization_list"), {"x": "y" * 5000})
    assert response.status_code in (400, 405, 413)
