"""Setting up a second factor, recovery codes, API tokens that need a code, staff resets, and the audit trail."""
from __future__ import annotations

from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from portal.core.audit.models import AuditEvent, AuditKind
from portal.core.factors import devices, policy


def _enrol(user) -> TOTPDevice:
    return TOTPDevice.objects.create(user=user, name="authenticator", confirmed=True)


def _code(device: TOTPDevice, step: int = 0) -> str:
    return f"{totp(device.bin_key, step=device.step, t0=device.t0, digits=device.digits, drift=step):06d}"


def _token(client, username: str, **extra) -> str:
    answer = client.post("/api/auth/token/", {"username": username, "password": "pw-for-tests", **extra},
                         content_type="application/json")
    assert answer.status_code == 200, answer.content
    return answer.json()["token"]


def test_an_api_token_needs_a_code_to_be_created(world, client, settings):
    settings.SECOND_FACTOR_REQUIRED = True
    settings.OTP_TOTP_THROTTLE_FACTOR = 0  # the throttle after a wrong code has its own test
    refused = client.post("/api/auth/token/", {"username": "lead_a", "password": "pw-for-tests"},
                          content_type="application/json")
    assert refused.status_code == 403 and refused.json()["code"] == "second_factor_required"
    device = _enrol(world.lead_a)
    wrong = client.post("/api/auth/token/", {"username": "lead_a", "password": "pw-for-tests", "otp": "000000"},
                        content_type="application/json")
    assert wrong.status_code == 403 or _code(device) == "000000"
    assert _token(client, "lead_a", otp=_code(device))
    outcomes = list(AuditEvent.objects.filter(kind=AuditKind.SECOND_FACTOR).values_list("outcome", flat=True))
    assert outcomes.count("verified") == 1 and outcomes.count("refused") >= 1


def test_setting_up_an_authenticator_and_recovery_codes(world, client, settings):
    settings.OTP_TOTP_THROTTLE_FACTOR = 0  # the throttle after a wrong code has its own test
    client.force_login(world.customer_a)
    page = client.get("/account/second-factor/setup/")
    assert page.status_code == 200 and b"<svg" in page.content
    device = TOTPDevice.objects.get(user=world.customer_a, confirmed=False)
    assert device.key in page.content.decode()
    wrong = client.post("/account/second-factor/setup/", {"code": "12345x"})
    assert wrong.status_code == 200 and not devices.has_factor(world.customer_a)
    done = client.post("/account/second-factor/setup/", {"code": _code(device), "next": "/clusters/"})
    assert done.status_code == 200 and devices.has_factor(world.customer_a)
    codes = done.context["codes"]
    assert len(codes) == devices.RECOVERY_CODES and devices.remaining_recovery_codes(world.customer_a) == 10
    assert policy.session_satisfies(client.session, policy.FRESH)
    event = AuditEvent.objects.get(kind=AuditKind.SECOND_FACTOR, outcome="enrolled")
    assert event.actor == world.customer_a and event.organization == world.org_a


def test_a_recovery_code_confirms_once(world, client):
    _enrol(world.customer_a)
    codes = devices.new_recovery_codes(world.customer_a)
    client.force_login(world.customer_a)
    ok = client.post("/account/second-factor/verify/", {"code": codes[0], "next": "/clusters/"})
    assert ok.status_code == 302 and ok["Location"] == "/clusters/"
    assert devices.remaining_recovery_codes(world.customer_a) == 9
    again = client.post("/account/second-factor/verify/", {"code": codes[0], "next": "/clusters/"})
    assert again.status_code == 200


def test_verify_sends_only_to_this_site(world, client):
    device = _enrol(world.customer_a)
    client.force_login(world.customer_a)
    response = client.post("/account/second-factor/verify/", {"code": _code(device), "next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == "/"


def test_staff_resetting_a_factor_is_recorded(world, client):
    device = _enrol(world.customer_a)
    admin = world.staff
    admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    response = client.post(f"/admin/otp_totp/totpdevice/{device.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and not devices.has_factor(world.customer_a)
    event = AuditEvent.objects.get(kind=AuditKind.SECOND_FACTOR, outcome="removed")
    assert event.actor == admin and event.organization == world.org_a and "customer_a" in event.target


def test_a_right_code_straight_after_a_wrong_one_waits_out_the_throttle(world, client):
    device = _enrol(world.customer_a)
    client.force_login(world.customer_a)
    wrong = "000000" if _code(device) != "000000" else "111111"
    assert client.post("/account/second-factor/verify/", {"code": wrong}).status_code == 200
    assert client.post("/account/second-factor/verify/", {"code": _code(device)}).status_code == 200
    assert not policy.session_satisfies(client.session, policy.SESSION)


def test_adding_another_authenticator_needs_a_fresh_factor_first(world, client):
    device = _enrol(world.customer_a)
    client.force_login(world.customer_a)
    for answer in (client.get("/account/second-factor/setup/"),
                   client.post("/account/second-factor/setup/", {"code": "000000"})):
        assert answer.status_code == 302 and answer["Location"].startswith("/account/second-factor/verify/")
    assert client.post("/account/second-factor/verify/", {"code": _code(device)}).status_code == 302
    assert client.get("/account/second-factor/setup/").status_code == 200
