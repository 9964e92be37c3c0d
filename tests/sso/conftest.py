"""A real OpenID Connect provider (the certified oidc-provider, under Node.js) on loopback for the sign-in tests.

`make install` installs it (npm ci in tests/sso/provider); without Node.js or that install the tests skip, saying
so. Accounts live in a JSON file the provider reads at each look-up: a test removes a person by rewriting it."""
from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import urllib.parse as up
from pathlib import Path

import pytest
import requests

PROVIDER_DIR = Path(__file__).resolve().parent / "provider"
CALLBACK = "http://testserver/login/sso/callback/"
CLIENT_ID, CLIENT_SECRET = "geniac-portal", "test-client-secret"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Provider:
    def __init__(self, issuer: str, accounts: Path):
        self.issuer, self.accounts = issuer, accounts

    def set_accounts(self, people: dict) -> None:
        self.accounts.write_text(json.dumps(people))

    def walk(self, authorize_url: str, login: str) -> str:
        """Sign in at the provider as a person would (its login and consent forms); the URL it sends back."""
        session = requests.Session()
        answer = session.get(authorize_url, allow_redirects=False, timeout=10)
        for _ in range(12):
            if answer.status_code in (302, 303):
                location = up.urljoin(answer.url, answer.headers["location"])
                if location.startswith(CALLBACK):
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


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory):
    node = shutil.which("node")
    if node is None or not (PROVIDER_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.skip("no Node.js or no oidc-provider in tests/sso/provider/node_modules (make install runs npm ci)")
    folder = tmp_path_factory.mktemp("oidc")
    accounts = folder / "accounts.json"
    accounts.write_text("{}")
    config = folder / "config.json"
    config.write_text(json.dumps({"accountsPath": str(accounts), "clients": [{
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "token_endpoint_auth_method": "client_secret_basic"}]}))
    port = _free_port()
    process = subprocess.Popen([node, str(PROVIDER_DIR / "server.mjs"), str(port), str(config)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    issuer = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60  # a bound, not a check: Node starts in about a second on an idle machine
    while True:
        try:
            if requests.get(f"{issuer}/.well-known/openid-configuration", timeout=2).status_code == 200:
                break
        except requests.RequestException:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the OpenID provider did not start: {process.stdout.read().decode()[-2000:]}")
        time.sleep(0.2)
    yield Provider(issuer, accounts)
    process.terminate()
    process.wait(timeout=10)
