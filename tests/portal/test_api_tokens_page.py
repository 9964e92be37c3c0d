"""API clients of a person whose only second factor is a passkey: the token is made, or confirmed, in the browser
after a passkey assertion (py_webauthn's real checks, a software authenticator), and then counts as a recent
second factor for protected API requests for as long as a confirmed session would. No recovery code is spent.
Another person's token is never reached; every creation, confirmation and revocation is on the audit trail."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from knox.models import get_token_model

from portal.core.audit.models import AuditEvent, AuditKind
from portal.core.factors import devices
from portal.core.factors.models import TokenConfirmation
from tests.portal.software_authenticator import SoftwareAuthenticator
from tests.portal.test_passkeys import _confirm, _forget_confirmation, _register

PAGE = "/account/api-tokens/"
LAUNCH = "/api/clusters/clusters/"  # a protected write (session level): an empty body is refused by the view, 400
DELETE = "/api/clusters/clusters/999999/"  # the most destructive (fresh level): no such cluster, 404


@pytest.fixture
def passkey_only(world, client, settings):
    """lead_a with a passkey as the only second factor (and the recovery codes it came with), signed in."""
    settings.SECOND_FACTOR_REQUIRED = True
    client.force_login(world.lead_a)
    authenticator = SoftwareAuthenticator()
    assert _register(client, authenticator).status_code == 200
    client.get("/account/second-factor/")  # the recovery codes, shown once
    _forget_confirmation(client)
    assert devices.has_passkey(world.lead_a) and not devices.has_authenticator(world.lead_a)
    return authenticator


def _api(_browser, method: str, url: str, token: str):
    """The API client: its own, with the token only (never the browser's session)."""
    send, auth = getattr(Client(), method), {"HTTP_AUTHORIZATION": f"Token {token}"}
    if method == "get":
        return send(url, **auth)
    return send(url, data=json.dumps({}), content_type="application/json", **auth)


def _needs_factor(answer) -> bool:
    return answer.status_code == 403 and answer.json().get("code") == "second_factor_required"


def test_the_api_points_a_passkey_only_person_to_the_browser_and_spends_no_code(world, client, passkey_only):
    answer = client.post("/api/auth/token/", {"username": "lead_a", "password": "pw-for-tests"},
                         content_type="application/json")
    assert _needs_factor(answer) and "/account/api-tokens/" in answer.json()["detail"]
    assert "passkey" in answer.json()["detail"]
    assert not get_token_model().objects.filter(user=world.lead_a).exists()


def test_a_token_made_in_the_browser_after_a_passkey_does_protected_actions(world, client, passkey_only):
    codes_before = devices.remaining_recovery_codes(world.lead_a)
    assert codes_before == devices.RECOVERY_CODES
    # Without a recent factor the page sends the person to confirm one first, and makes nothing.
    answer = client.post(PAGE)
    assert answer.status_code == 302 and answer["Location"].startswith("/account/second-factor/verify/")
    assert not get_token_model().objects.filter(user=world.lead_a).exists()
    # The passkey, in the browser; then the token, shown once.
    assert _confirm(client, passkey_only, next_url=PAGE).status_code == 200
    assert client.post(PAGE).status_code == 302
    page = client.get(PAGE)
    token = page.context["new_token"]["token"]
    assert token in page.content.decode() and client.get(PAGE).context["new_token"] is None
    row = get_token_model().objects.get(user=world.lead_a)
    assert TokenConfirmation.objects.filter(token=row).exists()
    assert not _needs_factor(_api(client, "post", LAUNCH, token))
    assert _api(client, "delete", DELETE, token).status_code == 404
    assert devices.remaining_recovery_codes(world.lead_a) == codes_before
    # A staff reset of the person's factors takes the token's confirmation with them.
    devices.reset(world.lead_a)
    assert _needs_factor(_api(client, "post", LAUNCH, token))
    assert AuditEvent.objects.filter(kind=AuditKind.TOKEN_CREATED, actor=world.lead_a,
                                     target__startswith="browser").exists()
    assert AuditEvent.objects.filter(kind=AuditKind.SECOND_FACTOR, actor=world.lead_a,
                                     method="token confirmation", outcome="verified").exists()


def test_a_confirmation_lasts_as_a_confirmed_session_would(world, client, passkey_only, settings):
    instance, token = get_token_model().objects.create(user=world.lead_a, expiry=timedelta(hours=10))
    assert _needs_factor(_api(client, "post", LAUNCH, token))  # not confirmed: refused
    page = client.get(PAGE)
    assert instance.token_key in page.content.decode()
    confirm = f"/account/api-tokens/{instance.token_key}/confirm/"
    answer = client.post(confirm)
    assert answer["Location"].startswith("/account/second-factor/verify/")
    assert not TokenConfirmation.objects.exists()
    _confirm(client, passkey_only, next_url=PAGE)
    assert client.post(confirm).status_code == 302
    assert not _needs_factor(_api(client, "post", LAUNCH, token))
    # Past the fresh window: the most destructive actions ask again, the others still go through.
    TokenConfirmation.objects.filter(token=instance).update(
        confirmed_at=timezone.now() - timedelta(minutes=settings.SECOND_FACTOR_FRESH_MINUTES + 1))
    assert _needs_factor(_api(client, "delete", DELETE, token))
    assert not _needs_factor(_api(client, "post", LAUNCH, token))
    # Past the session window: everything asks again, and the refusal says where to confirm the token.
    TokenConfirmation.objects.filter(token=instance).update(
        confirmed_at=timezone.now() - timedelta(hours=settings.SECOND_FACTOR_SESSION_HOURS, minutes=1))
    refused = _api(client, "post", LAUNCH, token)
    assert _needs_factor(refused) and "/account/api-tokens/" in refused.json()["detail"]


def test_another_persons_token_is_never_reached_and_ones_own_is_revoked(world, client, passkey_only):
    _theirs, their_token = get_token_model().objects.create(user=world.lead_b, expiry=timedelta(hours=10))
    theirs = get_token_model().objects.get(user=world.lead_b)
    _confirm(client, passkey_only, next_url=PAGE)
    assert theirs.token_key not in client.get(PAGE).content.decode()
    for action in ("confirm", "revoke"):
        assert client.post(f"/account/api-tokens/{theirs.token_key}/{action}/").status_code == 404
    assert not TokenConfirmation.objects.exists() and get_token_model().objects.filter(user=world.lead_b).exists()
    mine, token = get_token_model().objects.create(user=world.lead_a, expiry=timedelta(hours=10))
    assert client.post(f"/account/api-tokens/{mine.token_key}/revoke/").status_code == 302
    assert not get_token_model().objects.filter(user=world.lead_a).exists()
    assert _api(client, "get", "/api/", token).status_code in (401, 403)  # no longer signs anyone in
    assert AuditEvent.objects.filter(kind=AuditKind.TOKEN_REVOKED, actor=world.lead_a).exists()


def test_without_the_requirement_a_person_without_factors_makes_a_token_in_the_browser(world, client, settings):
    settings.SECOND_FACTOR_REQUIRED = False
    client.force_login(world.customer_a)
    assert client.post(PAGE).status_code == 302
    assert client.get(PAGE).context["new_token"]["token"]
    assert not TokenConfirmation.objects.exists()  # nothing was confirmed
