"""Passwords turned off for an organization (on its identity provider's record): its customers cannot sign in
with a password, and the one who gives the right one is told to use the provider; a wrong password learns
nothing more than before. Others, and the organization's lead SA, keep their passwords."""
from __future__ import annotations

import pytest

from portal.core.audit.models import AuditEvent, AuditKind
from portal.core.sso.models import IdentityDomain, IdentityProvider

PASSWORD = "pw-for-tests"


@pytest.fixture
def passwords_off(world):
    provider = IdentityProvider.objects.create(organization=world.org_a, name="Alpha SSO",
                                               issuer="https://sso.alpha.example", client_id="c", client_secret="s",
                                               passwords_allowed=False)
    IdentityDomain.objects.create(provider=provider, domain="alpha.example")
    return provider


def _sign_in(client, username: str, password: str = PASSWORD):
    return client.post("/login/", {"username": username, "password": password})


def test_a_customer_with_the_right_password_is_sent_to_the_provider(world, client, passwords_off):
    answer = _sign_in(client, "customer_a")
    assert answer.status_code == 200 and "_auth_user_id" not in client.session
    text = answer.content.decode()
    assert "Alpha SSO" in text and "Continue with your organization" in text
    assert answer.context["form"].refused_by == passwords_off
    event = AuditEvent.objects.get(kind=AuditKind.SIGN_IN_FAILED)
    assert event.outcome == "passwords turned off" and event.organization == world.org_a


def test_a_wrong_password_is_told_nothing_about_the_provider(world, client, passwords_off):
    answer = _sign_in(client, "customer_a", "not the password")
    assert answer.status_code == 200 and "Alpha SSO" not in answer.content.decode()
    assert "didn&#x27;t match" in answer.content.decode() or "didn't match" in answer.content.decode()
    assert AuditEvent.objects.get(kind=AuditKind.SIGN_IN_FAILED).outcome == "refused"


def test_others_keep_their_passwords(world, client, passwords_off):
    assert _sign_in(client, "customer_b").status_code == 302
    client.logout()
    assert _sign_in(client, "lead_a").status_code == 302  # the lead SA is no customer of the organization
    client.logout()
    passwords_off.passwords_allowed = True
    passwords_off.save()
    assert _sign_in(client, "customer_a").status_code == 302


def test_a_disabled_provider_turns_nothing_off(world, client, passwords_off):
    passwords_off.enabled = False
    passwords_off.save()
    assert _sign_in(client, "customer_a").status_code == 302


def test_an_api_token_is_refused_too(world, client, passwords_off):
    answer = client.post("/api/auth/token/", {"username": "customer_a", "password": PASSWORD},
                         content_type="application/json")
    assert answer.status_code == 400 and "token" not in answer.json()
