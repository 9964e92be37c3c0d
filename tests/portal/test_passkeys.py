"""Passkeys as a second factor: registered and confirmed through the portal's own routes with a software
authenticator whose attestation and assertions py_webauthn verifies for real; the sign counter; another person's
passkey; removal and staff resets on the audit trail; a passkey satisfying the protected actions as TOTP does."""
from __future__ import annotations

import json

import pytest
from django.test import RequestFactory
from django_otp.plugins.otp_totp.models import TOTPDevice

from portal.core.audit.models import AuditEvent, AuditKind
from portal.core.factors import devices, passkeys, policy
from portal.core.factors.models import Passkey
from tests.portal.software_authenticator import SoftwareAuthenticator

REGISTER = "/account/second-factor/passkeys/register/"
VERIFY = "/account/second-factor/passkeys/verify/"
# The middleware judges the route before the view looks the blueprint up.
LAUNCH = "/clusters/blueprints/any-blueprint/launch/"


def _post(client, url: str, body: dict):
    return client.post(url, json.dumps(body), content_type="application/json")


def _register(client, authenticator: SoftwareAuthenticator, name: str = "laptop", **kwargs):
    options = client.get(REGISTER)
    assert options.status_code == 200, options.content
    return _post(client, REGISTER, {"name": name, "credential": authenticator.create(options.json(), **kwargs)})


def _confirm(client, authenticator: SoftwareAuthenticator, next_url: str = "/clusters/", **kwargs):
    options = client.get(VERIFY)
    assert options.status_code == 200, options.content
    return _post(client, VERIFY, {"next": next_url, "credential": authenticator.get(options.json(), **kwargs)})


def _forget_confirmation(client) -> None:
    session = client.session
    session.pop(policy.SESSION_KEY, None)
    session.save()


def test_registering_a_first_passkey_verifies_its_attestation_and_makes_recovery_codes(world, client):
    client.force_login(world.customer_a)
    authenticator = SoftwareAuthenticator()
    options = client.get(REGISTER).json()
    assert options["rp"]["id"] == "testserver" and options["challenge"]
    assert options["user"]["name"] == "customer_a" and "customer_a" not in options["user"]["id"]
    done = _post(client, REGISTER, {"name": "laptop", "credential": authenticator.create(options)})
    assert done.status_code == 200 and done.json() == {"redirect": "/account/second-factor/"}
    key = Passkey.objects.get(user=world.customer_a)
    assert key.name == "laptop" and key.transports == ["internal"] and devices.has_factor(world.customer_a)
    assert policy.session_satisfies(client.session, policy.FRESH)
    # The first factor comes with recovery codes, shown once on the factors page.
    shown = client.get("/account/second-factor/")
    assert len(shown.context["codes"]) == devices.RECOVERY_CODES
    assert "codes" not in client.get("/account/second-factor/").context
    event = AuditEvent.objects.get(kind=AuditKind.SECOND_FACTOR, outcome="enrolled")
    assert event.method == "passkey" and event.actor == world.customer_a and event.organization == world.org_a


@pytest.mark.parametrize("wrong", ["origin", "rp_id", "challenge", "replay"])
def test_an_attestation_for_another_site_or_challenge_is_refused(world, client, wrong):
    client.force_login(world.customer_a)
    authenticator = SoftwareAuthenticator()
    options = client.get(REGISTER).json()
    if wrong == "challenge":
        options = {**options, "challenge": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}
    credential = authenticator.create(options, **({"origin": "https://evil.example"} if wrong == "origin" else {}),
                                      **({"rp_id": "evil.example"} if wrong == "rp_id" else {}))
    if wrong == "replay":
        assert _post(client, REGISTER, {"name": "x", "credential": credential}).status_code == 200
        Passkey.objects.all().delete()
    refused = _post(client, REGISTER, {"name": "x", "credential": credential})
    assert refused.status_code == 400 and not Passkey.objects.exists()
    assert AuditEvent.objects.filter(kind=AuditKind.SECOND_FACTOR, method="passkey", outcome="refused").exists()


def test_confirming_with_a_passkey_checks_the_signature_and_the_counter(world, client):
    client.force_login(world.customer_a)
    authenticator = SoftwareAuthenticator()
    assert _register(client, authenticator).status_code == 200
    _forget_confirmation(client)
    done = _confirm(client, authenticator)
    assert done.status_code == 200 and done.json() == {"redirect": "/clusters/"}
    assert policy.session_satisfies(client.session, policy.FRESH)
    assert Passkey.objects.get().sign_count == 1 and Passkey.objects.get().last_used_at is not None
    _forget_confirmation(client)
    # A counter that does not move forward (a cloned authenticator, a replayed assertion) is refused.
    assert _confirm(client, authenticator, count=1).status_code == 400
    # A signature by another key is refused.
    from cryptography.hazmat.primitives.asymmetric import ec

    assert _confirm(client, authenticator, key=ec.generate_private_key(ec.SECP256R1())).status_code == 400
    # Another origin is refused.
    assert _confirm(client, authenticator, origin="https://evil.example").status_code == 400
    assert not policy.session_satisfies(client.session, policy.SESSION)
    assert _confirm(client, authenticator, next_url="https://evil.example/").json() == {"redirect": "/"}
    outcomes = list(AuditEvent.objects.filter(kind=AuditKind.SECOND_FACTOR, method="passkey")
                    .values_list("outcome", flat=True))
    assert outcomes.count("verified") == 2 and outcomes.count("refused") == 3


def test_an_assertion_answers_one_challenge_once(world, client):
    client.force_login(world.customer_a)
    authenticator = SoftwareAuthenticator()
    _register(client, authenticator)
    options = client.get(VERIFY).json()
    assertion = authenticator.get(options)
    assert _post(client, VERIFY, {"credential": assertion}).status_code == 200
    assert _post(client, VERIFY, {"credential": assertion}).status_code == 400


def test_another_persons_passkey_confirms_nothing_and_cannot_be_removed(world, client):
    client.force_login(world.customer_a)
    authenticator = SoftwareAuthenticator()
    _register(client, authenticator)
    key = Passkey.objects.get()
    client.force_login(world.customer_b)
    assert client.get(VERIFY).status_code == 404  # customer_b has none
    TOTPDevice.objects.create(user=world.customer_b, name="authenticator", confirmed=True)
    # customer_b's session asks for a confirmation, then answers with customer_a's passkey: not theirs.
    session = client.session
    session[passkeys.VERIFY_KEY] = "AAAA"
    session.save()
    assert _post(client, VERIFY, {"credential": authenticator.get({"challenge": "AAAA"})}).status_code == 400
    policy.mark_verified(session)
    session.save()
    assert client.post(f"/account/second-factor/passkeys/{key.pk}/delete/").status_code == 404
    assert Passkey.objects.filter(pk=key.pk).exists()


def test_a_second_passkey_or_a_removal_needs_a_fresh_factor(world, client):
    client.force_login(world.customer_a)
    first = SoftwareAuthenticator()
    _register(client, first)
    _forget_confirmation(client)
    refused = client.get(REGISTER)
    assert refused.status_code == 403 and "verify" in refused.json()["redirect"]
    key = Passkey.objects.get()
    delete = f"/account/second-factor/passkeys/{key.pk}/delete/"
    assert client.post(delete)["Location"].startswith("/account/second-factor/verify/")
    assert _confirm(client, first).status_code == 200
    assert _register(client, SoftwareAuthenticator(), name="security key").status_code == 200
    assert Passkey.objects.filter(user=world.customer_a).count() == 2
    # A second passkey makes no new recovery codes (the first ones stay good).
    assert devices.remaining_recovery_codes(world.customer_a) == devices.RECOVERY_CODES
    assert client.post(delete).status_code == 302 and not Passkey.objects.filter(pk=key.pk).exists()
    event = AuditEvent.objects.get(kind=AuditKind.SECOND_FACTOR, method="passkey", outcome="removed")
    assert event.actor == world.customer_a and "laptop" in event.target


def test_recovery_codes_still_confirm_for_a_person_with_only_a_passkey(world, client):
    client.force_login(world.customer_a)
    _register(client, SoftwareAuthenticator())
    codes = client.get("/account/second-factor/").context["codes"]
    _forget_confirmation(client)
    page = client.get("/account/second-factor/verify/?next=/clusters/")
    assert page.status_code == 200 and page.context["passkey"] and not page.context["authenticator"]
    ok = client.post("/account/second-factor/verify/", {"code": codes[0], "next": "/clusters/"})
    assert ok.status_code == 302 and ok["Location"] == "/clusters/"


def test_staff_reset_clears_passkeys_authenticators_and_codes_on_the_audit_trail(world, client):
    client.force_login(world.customer_a)
    _register(client, SoftwareAuthenticator())
    TOTPDevice.objects.create(user=world.customer_a, name="authenticator", confirmed=True)
    admin = world.staff
    admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    answer = client.post("/admin/portal/user/", {"action": "reset_second_factors",
                                                  "_selected_action": [world.customer_a.pk]})
    assert answer.status_code == 302
    assert not devices.has_factor(world.customer_a) and devices.remaining_recovery_codes(world.customer_a) == 0
    events = AuditEvent.objects.filter(kind=AuditKind.SECOND_FACTOR, outcome__in=["removed", "reset"])
    assert {(e.method, e.outcome) for e in events} == {("passkey", "removed"), ("totp", "removed"),
                                                        ("reset", "reset")}
    assert all(e.actor == admin and e.organization == world.org_a for e in events)


def test_staff_delete_a_passkey_in_the_admin(world, client):
    client.force_login(world.customer_a)
    _register(client, SoftwareAuthenticator())
    key = Passkey.objects.get()
    admin = world.staff
    admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    assert client.post(f"/admin/factors/passkey/{key.pk}/delete/", {"post": "yes"}).status_code == 302
    event = AuditEvent.objects.get(kind=AuditKind.SECOND_FACTOR, method="passkey", outcome="removed")
    assert event.actor == admin and "customer_a" in event.target


def test_a_passkey_satisfies_a_protected_action_as_a_code_does(world, client, settings):
    settings.SECOND_FACTOR_REQUIRED = True
    client.force_login(world.lead_a)
    refused = client.post(LAUNCH, {})
    assert refused.status_code == 302 and refused["Location"].startswith("/account/second-factor/setup/")
    authenticator = SoftwareAuthenticator()
    _register(client, authenticator)
    _forget_confirmation(client)
    assert client.post(LAUNCH, {})["Location"].startswith("/account/second-factor/verify/")
    assert _confirm(client, authenticator).status_code == 200
    assert not client.post(LAUNCH, {}).get("Location", "").startswith("/account/second-factor/")


def test_the_service_refuses_an_answer_without_a_challenge(world):
    request = RequestFactory().post("/", HTTP_HOST="testserver")
    request.user, request.session = world.customer_a, {}
    with pytest.raises(passkeys.PasskeyRefused):
        passkeys.register(request, SoftwareAuthenticator().create({"challenge": "AAAA"}), "x")
    with pytest.raises(passkeys.PasskeyRefused):
        passkeys.verify(request, SoftwareAuthenticator().get({"challenge": "AAAA"}))
