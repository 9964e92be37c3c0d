"""A lead SA registers a passkey in Chromium (its virtual authenticator, through the DevTools protocol) and then
passes a protected action with it: the page's script, the browser's WebAuthn and the portal's verification, all
real."""
import pytest

from clusters.remediation.models import RemediationPolicy
from portal.core.audit.models import AuditEvent, AuditKind
from portal.core.factors.models import Passkey
from tests.e2e.conftest import screenshot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _virtual_authenticator(page) -> None:
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True}})


def _save_policy(page, live_server, world, cooldown: int) -> None:
    page.goto(f"{live_server.url}/organizations/{world.org_a.pk}/remediation-policy/")
    page.locator("#id_cooldown_hours").fill(str(cooldown))
    page.locator("main form:has(#id_cooldown_hours) button[type=submit]").click()
    page.wait_for_load_state("networkidle")


def test_a_passkey_registered_in_the_browser_passes_a_protected_action(page, live_server, world, settings):
    settings.SECOND_FACTOR_REQUIRED = True
    _virtual_authenticator(page)
    sign_in(page, live_server, "lead_a")

    # Without a factor, saving the consent policy sends the lead SA to set one up: a passkey.
    _save_policy(page, live_server, world, 48)
    assert "/account/second-factor/setup/" in page.url
    page.locator("#passkey-name").fill("virtual key")
    page.get_by_role("button", name="Add a passkey").click()
    page.wait_for_url("**/account/second-factor/")
    assert page.locator("ul.recovery-codes li").count() == 10  # the first factor's recovery codes, shown once
    key = Passkey.objects.get(user=world.lead_a)
    assert key.name == "virtual key" and key.transports == ["internal"]
    screenshot(page, "passkey-registered")

    # A new session has no confirmed factor: the protected action asks for one, and the passkey gives it.
    page.context.clear_cookies()
    sign_in(page, live_server, "lead_a")
    _save_policy(page, live_server, world, 48)
    assert "/account/second-factor/verify/" in page.url
    assert not RemediationPolicy.objects.filter(organization=world.org_a, cooldown_hours=48).exists()
    page.get_by_role("button", name="Use a passkey").click()
    page.wait_for_url("**/remediation-policy/")
    _save_policy(page, live_server, world, 48)
    assert "/account/second-factor/" not in page.url
    assert RemediationPolicy.objects.get(organization=world.org_a).cooldown_hours == 48
    key.refresh_from_db()
    assert key.last_used_at is not None
    outcomes = set(AuditEvent.objects.filter(kind=AuditKind.SECOND_FACTOR, method="passkey")
                   .values_list("outcome", flat=True))
    assert outcomes == {"enrolled", "verified"}
    screenshot(page, "passkey-protected-action")
    assert not page.console_errors, page.console_errors
