"""A customer signs in and sees their organization, and nothing of another."""
import pytest

from tests.conftest import MARKER_A
from tests.e2e.conftest import screenshot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_customer_sees_own_organization_only(page, live_server, world):
    sign_in(page, live_server, "customer_b")
    assert page.url.endswith("/organizations/beta-works/")
    assert page.get_by_role("heading", name="Beta Works").is_visible()
    body = page.content()
    assert MARKER_A not in body and "Alpha Labs" not in body
    response = page.goto(f"{live_server.url}/organizations/alpha-labs/")
    assert response.status == 404
    assert page.get_by_role("heading", name="Not found").is_visible()
    page.console_errors.clear()  # the browser logs the 404 it was just shown
    page.goto(f"{live_server.url}/organizations/")
    assert "Alpha Labs" not in page.content()
    screenshot(page, "customer-organization-list")
    assert not page.console_errors, page.console_errors
