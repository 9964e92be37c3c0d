"""A real OpenID Connect provider (the certified oidc-provider, under Node.js) on loopback for the sign-in tests.

`make install` installs it (npm ci in portal/core/sso/provider, which the demo uses too: portal/core/sso/local_provider.py);
without Node.js or that install the tests skip, saying so. Accounts live in a JSON file the provider reads at each
look-up: a test removes a person by rewriting it."""
from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.parse as up
from pathlib import Path

import pytest
import requests

from portal.core.sso import local_provider

PORTAL = "http://testserver"
CALLBACK = f"{PORTAL}{local_provider.CALLBACK_PATH}"
CLIENT_ID, CLIENT_SECRET = "geniac-portal", "test-client-secret"


class Provider:
    def __init__(self, issuer: str, accounts: Path):
        self.issuer, self.accounts = issuer, accounts

    def set_accounts(self, people: dict) -> None:
        self.accounts.write_text(json.dumps(people))

    def walk(self, authorize_url: str, login: str, callback: str = CALLBACK) -> str:
        """Sign in at the provider as a person would (its login and consent forms); the URL it sends back."""
        session = requests.Session()
        answer = session.get(authorize_url, allow_redirects=False, timeout=10)
        for _ in range(12):
            if answer.status_code in (302, 303):
                location = up.urljoin(answer.url, answer.headers["location"])
                if location.startswith(callback):
                    return location
                answer = session.get(location, allow_redirects=False, timeout=10)
                continue
            form = re.search(r'<form[^>]*action="([^"]+)"[^>]*method="post"', answer.text)
            if form is None:
                raise AssertionError(f"the provider answered {answer.status_code}: {answer.text[:300]}")
            data = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', answer.text))
            if 'name="login"' in answer.text:
                data.update(login=login, password="any password")
            answer = session.post(up.urljoin(answer.url, form.group(1)), data=data, allow_redirects=False,
                                  timeout=10)
        raise AssertionError("the provider never sent the person back")


def start_provider(folder: Path, **config) -> tuple[subprocess.Popen, str]:
    """Start the provider with ``config`` (local_provider.write_config's) and wait for its discovery document."""
    config_path, _accounts = local_provider.write_config(folder, **config)
    port = local_provider.free_port()
    return launch(local_provider.command(port, config_path), local_provider.discovery(port)), \
        local_provider.issuer(port)


def launch(command: list[str], discovery: str) -> subprocess.Popen:
    """Run ``command`` and wait until the provider answers its discovery document."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60  # a bound, not a check: Node starts in about a second on an idle machine
    while True:
        try:
            if requests.get(discovery, timeout=2).status_code == 200:
                return process
        except requests.RequestException:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the OpenID provider did not start: {process.stdout.read().decode()[-2000:]}")
        time.sleep(0.2)


def stop_provider(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory):
    reason = local_provider.missing()
    if reason:
        pytest.skip(f"the OpenID provider cannot run: {reason}")
    folder = tmp_path_factory.mktemp("oidc")
    process, issuer = start_provider(folder, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, portals=[PORTAL])
    yield Provider(issuer, folder / "accounts.json")
    stop_provider(process)


@pytest.fixture(autouse=True)
def loopback_calls(settings):
    """The portal's client for user-given URLs may call http://127.0.0.1 (the loopback provider's issuer, on every
    call sign-in makes to it): an operator names such hosts in OUTBOUND_HTTP_HOSTS and OUTBOUND_ALLOWED_HOSTS. Only
    that address: any other private, loopback or link-local one stays refused here too."""
    settings.OUTBOUND_HTTP_HOSTS = ["127.0.0.1"]
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
