"""Every protected action (portal/core/factors/policy.py) is refused without a second factor, pages and API, and goes
through with one. Payloads and writers are the access matrix's (tests/access_cases.py), valid for organization A."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.urls import reverse
from django.utils import timezone
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from portal.core.factors import policy
from tests.access_cases import ROUTES
from tests.portal.test_access_matrix import _matches, matrix, record_writes  # noqa: F401 - the matrix's world

PREFERRED = ("lead_a", "customer_a", "pm", "staff")
ROOT = Path(__file__).resolve().parents[2]


def _writer(case) -> str:
    return next(role for role in PREFERRED if role in case.writers)


def _method(name: str) -> str:
    return "POST" if "POST" in policy.PROTECTED[name][1] else sorted(policy.PROTECTED[name][1])[0]


def _send(client, name: str, objs, method: str):
    case = ROUTES[name]
    url = reverse(name, kwargs=case.kwargs(objs))
    payload = case.payload(objs)
    send = getattr(client, method.lower())
    if case.api:
        return send(url, data=json.dumps(payload), content_type="application/json")
    return send(url, data=payload)


def _enrol(user) -> TOTPDevice:
    return TOTPDevice.objects.create(user=user, name="authenticator", confirmed=True)


def _session(matrix, role: str, verified_ago: timedelta | None):  # noqa: F811
    store = SessionStore(session_key=matrix.sessions[role])
    if verified_ago is None:
        store.pop(policy.SESSION_KEY, None)
    else:
        store[policy.SESSION_KEY] = (timezone.now() - verified_ago).isoformat()
    store.save()


def _code(device: TOTPDevice, step: int = 0) -> str:
    return f"{totp(device.bin_key, step=device.step, t0=device.t0, digits=device.digits, drift=step):06d}"


def test_every_protected_route_exists_with_its_access_case():
    assert set(policy.PROTECTED) <= set(ROUTES), set(policy.PROTECTED) - set(ROUTES)
    for name, (_level, methods) in policy.PROTECTED.items():
        assert ROUTES[name].payload is not None and ROUTES[name].writers, name
        assert methods <= policy.WRITES


@pytest.mark.parametrize("name", sorted(policy.PROTECTED))
def test_a_protected_action_is_refused_without_a_second_factor(name, matrix, db, client, settings):  # noqa: F811
    settings.SECOND_FACTOR_REQUIRED = True
    case = ROUTES[name]
    role = _writer(case)
    _session(matrix, role, None)
    client.cookies[settings.SESSION_COOKIE_NAME] = matrix.sessions[role]
    with record_writes() as written:
        response = _send(client, name, matrix.objs, _method(name))
    if case.api:
        assert response.status_code == 403 and response.json()["code"] == "second_factor_required", response.content
    else:
        assert response.status_code == 302 and response["Location"].startswith("/account/second-factor/setup/")
    assert not written, f"{role} {name} was refused but wrote {written}"


@pytest.mark.parametrize("name", sorted(policy.PROTECTED))
def test_a_protected_action_goes_through_with_a_fresh_second_factor(name, matrix, db, client, settings):  # noqa: F811
    settings.SECOND_FACTOR_REQUIRED = True
    case = ROUTES[name]
    role = _writer(case)
    _enrol(matrix.users[role])
    _session(matrix, role, timedelta(minutes=1))
    client.cookies[settings.SESSION_COOKIE_NAME] = matrix.sessions[role]
    method = _method(name)
    response = _send(client, name, matrix.objs, method)
    assert _matches(response, case.write_status(role, method)), (
        f"{role} {method} {name}: {response.status_code} {response.get('Location', '')}")


@pytest.mark.parametrize("name", sorted(policy.PROTECTED))
def test_a_factor_confirmed_long_ago_is_enough_only_for_the_less_destructive(name, matrix, db, client,  # noqa: F811
                                                                             settings):
    settings.SECOND_FACTOR_REQUIRED = True
    case = ROUTES[name]
    role = _writer(case)
    _enrol(matrix.users[role])
    _session(matrix, role, timedelta(minutes=settings.SECOND_FACTOR_FRESH_MINUTES + 5))
    client.cookies[settings.SESSION_COOKIE_NAME] = matrix.sessions[role]
    method = _method(name)
    response = _send(client, name, matrix.objs, method)
    if policy.PROTECTED[name][0] == policy.FRESH:
        if case.api:
            assert response.status_code == 403 and response.json()["code"] == "second_factor_required"
        else:
            assert response.status_code == 302 and response["Location"].startswith("/account/second-factor/verify/")
    else:
        assert _matches(response, case.write_status(role, method)), response.status_code


def test_the_requirement_is_off_unless_the_program_sets_it(matrix, db, client, settings):  # noqa: F811
    settings.SECOND_FACTOR_REQUIRED = False
    name = "remediation:action_propose"
    case = ROUTES[name]
    client.cookies[settings.SESSION_COOKIE_NAME] = matrix.sessions["lead_a"]
    assert _matches(_send(client, name, matrix.objs, "POST"), case.write_status("lead_a", "POST"))


def test_production_requires_a_second_factor_by_default():
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "SECOND_FACTOR_REQUIRED")}
    env.update(DJANGO_SETTINGS_MODULE="portal.settings.production", ALLOWED_HOSTS="portal.example.org",
               SECRET_KEY="x" * 20 + "-production-grade-secret-key-with-enough-entropy-0123456789")
    result = subprocess.run([sys.executable, "-c", "import django; django.setup(); from django.conf import settings;"
                             " print(settings.SECOND_FACTOR_REQUIRED)"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "True", result.stderr


def _token(client, username: str, **extra) -> str:
    answer = client.post("/api/auth/token/", {"username": username, "password": "pw-for-tests", **extra},
                         content_type="application/json")
    assert answer.status_code == 200, answer.content
    return answer.json()["token"]


def test_an_api_client_sends_a_current_code_for_a_protected_action_and_a_code_works_once(matrix, db, client,  # noqa: F811
                                                                                      settings):
    name = "remediation-api:remediationaction-list"
    case = ROUTES[name]
    device = _enrol(matrix.users["lead_a"])
    token = _token(client, "lead_a")  # made before the requirement is switched on
    settings.SECOND_FACTOR_REQUIRED = True
    url = reverse(name)
    body = json.dumps(case.payload(matrix.objs))
    headers = {"HTTP_AUTHORIZATION": f"Token {token}"}
    refused = client.post(url, data=body, content_type="application/json", **headers)
    assert refused.status_code == 403 and refused.json()["code"] == "second_factor_required"
    code = _code(device)
    accepted = client.post(url, data=body, content_type="application/json", HTTP_X_SECOND_FACTOR=code, **headers)
    assert accepted.status_code == 201, accepted.content
    replayed = client.post(url, data=body, content_type="application/json", HTTP_X_SECOND_FACTOR=code, **headers)
    assert replayed.status_code == 403


