"""The demo's identity provider: run_demo's plan starts the same real provider the tests use for Mirai Code, the
seed registers it as that organization's, and a person of its domain signs in through it; without Node.js or the
installed package the demo says so in one line and the record stays disabled."""
from __future__ import annotations

import urllib.parse as up

import pytest

from portal.core.models import Membership
from portal.core.sso import local_provider
from portal.core.sso.models import ExternalIdentity, IdentityProvider
from sandbox import sso as sso_demo
from tests.sso.conftest import Provider, launch, stop_provider

PORTAL_PORT = 8000  # the demo portal's port: its callback and the Host the test client sends
HOST = f"127.0.0.1:{PORTAL_PORT}"


def _context(world, issuer: str) -> dict:
    return {"organizations": {sso_demo.ORGANIZATION: world.org_a}, "sso_issuer": issuer}


def test_the_demo_provider_signs_a_person_of_its_domain_in_as_a_customer(world, client, tmp_path):
    reason = local_provider.missing()
    if reason:
        pytest.skip(f"the OpenID provider cannot run: {reason}")
    planned = sso_demo.plan(tmp_path, PORTAL_PORT)
    command, issuer, discovery = planned
    process = launch(command, discovery)
    try:
        sso_demo.seed(_context(world, issuer))
        sso_demo.seed(_context(world, issuer))  # seeding twice is safe
        provider = IdentityProvider.objects.get(organization=world.org_a)
        assert provider.enabled and provider.issuer == issuer and provider.passwords_allowed
        person = next(iter(sso_demo.PEOPLE))
        start = client.post("/login/sso/", {"email": person}, HTTP_HOST=HOST)
        assert start.status_code == 302 and start["Location"].startswith(issuer)
        back = Provider(issuer, tmp_path / "accounts.json").walk(
            start["Location"], person, callback=f"http://{HOST}{local_provider.CALLBACK_PATH}")
        parts = up.urlsplit(back)
        done = client.get(f"{parts.path}?{parts.query}", HTTP_HOST=HOST)
        assert done.status_code == 302 and done["Location"] == "/"
        user = ExternalIdentity.objects.get(provider=provider, subject=person).user
        assert list(Membership.objects.filter(user=user).values_list("organization", "role")) == [
            (world.org_a.pk, "customer")]
    finally:
        stop_provider(process)


def test_without_node_the_demo_says_so_and_its_provider_stays_off(world, client, tmp_path, monkeypatch):
    monkeypatch.setattr(local_provider.shutil, "which", lambda name: None)
    line = sso_demo.plan(tmp_path, PORTAL_PORT)
    assert isinstance(line, str) and "no Node.js" in line and "\n" not in line
    sso_demo.seed(_context(world, ""))
    assert not IdentityProvider.objects.get(organization=world.org_a).enabled
    answer = client.post("/login/sso/", {"email": next(iter(sso_demo.PEOPLE))})
    assert answer["Location"] == "/login/"


def test_run_demo_starts_the_provider_among_its_processes_or_says_in_one_line_why_not(tmp_path, monkeypatch):
    import io
    import subprocess

    import requests

    from sandbox.management.commands.run_demo import Command

    started: list[tuple[str, subprocess.Popen]] = []

    def start(name, command):  # run_demo's own start(): the process joins those Ctrl-C stops
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append((name, process))
        return process

    if not local_provider.missing():
        out = io.StringIO()
        issuer = Command(stdout=out).start_identity_provider(start, tmp_path, PORTAL_PORT)
        try:
            assert [name for name, _ in started] == ["sso"] and issuer in out.getvalue()
            assert requests.get(f"{issuer}/.well-known/openid-configuration", timeout=5).json()["issuer"] == issuer
        finally:
            for _, process in started:
                stop_provider(process)
    started.clear()
    monkeypatch.setattr(local_provider.shutil, "which", lambda name: None)
    out = io.StringIO()
    assert Command(stdout=out).start_identity_provider(start, tmp_path, PORTAL_PORT) == ""
    assert not started and len(out.getvalue().strip().splitlines()) == 1
