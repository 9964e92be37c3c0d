"""Sign-in's calls to an OpenID Connect provider go through the portal's client for user-given URLs: a provider
whose discovery document names a token endpoint or a key set on a private or link-local address is refused at
sign-in in the portal's own words, and logged; what a provider answers (its error text) never reaches a page. The
provider here is a loopback server (the test settings list 127.0.0.1, as an operator would) answering what each
test sets."""
from __future__ import annotations

import json
import logging
import threading
import time
import urllib.parse as up
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from portal.core import outbound
from portal.core.audit.models import AuditEvent, AuditKind
from portal.core.sso import services
from portal.core.sso.models import ExternalIdentity, IdentityDomain, IdentityProvider

SECRET_WORDS = "ZZ-PROVIDER-BODY-NEVER-SHOWN"


class Issuer(BaseHTTPRequestHandler):
    """A provider answering each path with what the test set (status, JSON body)."""

    answers: dict[str, tuple[int, dict]] = {}
    calls: list[str] = []

    def _answer(self):
        path = self.path.split("?")[0]
        self.calls.append(f"{self.command} {path}")
        status, body = self.answers.get(path, (404, {"error": SECRET_WORDS}))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer  # noqa: N815 - http.server's names

    def log_message(self, *args):
        pass


@pytest.fixture
def issuer(world):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Issuer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    provider = IdentityProvider.objects.create(organization=world.org_a, name="Alpha SSO", issuer=base,
                                               client_id="portal", client_secret="s")
    IdentityDomain.objects.create(provider=provider, domain="alpha.example")
    yield base, provider
    Issuer.answers.clear()
    Issuer.calls.clear()
    server.shutdown()
    server.server_close()


def _discovery(base: str, **endpoints) -> None:
    Issuer.answers["/.well-known/openid-configuration"] = (200, {
        "issuer": base, "authorization_endpoint": f"{base}/auth", "token_endpoint": f"{base}/token",
        "jwks_uri": f"{base}/jwks", "response_types_supported": ["code"], **endpoints})


def _callback(client) -> tuple[object, str]:
    """Start a sign-in, then come back as if the provider had sent the person with a code; the login page."""
    start = client.post("/login/sso/", {"email": "alice@alpha.example"})
    assert start.status_code == 302, start.content
    state = up.parse_qs(up.urlsplit(start["Location"]).query)["state"][0]
    back = client.get(f"/login/sso/callback/?code=the-code&state={state}")
    assert back.status_code == 302 and back["Location"] == "/login/"
    assert "_auth_user_id" not in client.session
    page = client.get("/login/").content.decode()
    return back, page


def test_a_token_endpoint_on_a_private_address_is_refused_in_the_portals_words(world, client, issuer, caplog):
    base, provider = issuer
    _discovery(base, token_endpoint="https://10.20.30.40/token")
    with caplog.at_level(logging.WARNING):
        _, page = _callback(client)
    assert "The portal could not call Alpha SSO" in page and outbound.PRIVATE[:40] in page
    assert any("10.20.30.40" in r.getMessage() and "refused" in r.getMessage() for r in caplog.records)
    assert not ExternalIdentity.objects.exists()
    assert AuditEvent.objects.filter(kind=AuditKind.SIGN_IN_FAILED, method="oidc:Alpha SSO").exists()


def test_a_key_set_on_a_link_local_address_is_refused_before_any_id_token_is_trusted(world, client, issuer, caplog):
    base, provider = issuer
    _discovery(base, jwks_uri="https://169.254.169.254/latest/keys")
    key = RSAKey.generate_key(2048)
    now = int(time.time())
    id_token = jwt.encode({"alg": "RS256"}, {"iss": base, "aud": "portal", "sub": "alice", "iat": now,
                                             "exp": now + 300, "email": "alice@alpha.example"}, key)
    Issuer.answers["/token"] = (200, {"access_token": "a", "token_type": "Bearer", "expires_in": 300,
                                      "id_token": id_token})
    with caplog.at_level(logging.WARNING):
        _, page = _callback(client)
    assert "POST /token" in Issuer.calls  # the code was exchanged on loopback; the keys were never fetched
    assert "The portal could not call Alpha SSO" in page and outbound.PRIVATE[:40] in page
    assert any("169.254.169.254" in r.getMessage() for r in caplog.records)
    assert not ExternalIdentity.objects.exists()


def test_a_providers_own_error_text_never_reaches_the_page(world, client, issuer):
    base, _provider = issuer
    _discovery(base)
    Issuer.answers["/token"] = (400, {"error": f"invalid_grant {SECRET_WORDS}",
                                      "error_description": SECRET_WORDS})
    _, page = _callback(client)
    assert "answer was refused" in page and SECRET_WORDS not in page


def test_an_issuer_on_a_private_address_is_refused_at_the_start(world, client, settings):
    provider = IdentityProvider.objects.create(organization=world.org_a, name="Alpha SSO",
                                               issuer="https://169.254.169.254", client_id="p", client_secret="s")
    IdentityDomain.objects.create(provider=provider, domain="alpha.example")
    answer = client.post("/login/sso/", {"email": "alice@alpha.example"}, follow=True)
    page = answer.content.decode()
    assert "The portal could not call Alpha SSO" in page and outbound.PRIVATE[:40] in page


def test_the_check_of_a_person_calls_no_private_token_endpoint_and_decides_nothing(world, issuer, caplog):
    base, provider = issuer
    _discovery(base, token_endpoint="https://192.168.1.5/token")
    identity = ExternalIdentity.objects.create(provider=provider, subject="alice", user=world.customer_a,
                                               refresh_token="r")
    with caplog.at_level(logging.WARNING):
        assert services.check_identity(identity) is True
    identity.refresh_from_db()
    assert identity.removed_at is None and identity.checked_at is None
    assert any("unreachable" in r.getMessage() for r in caplog.records)
    assert "POST /token" not in Issuer.calls


def test_the_check_of_a_person_goes_through_the_outbound_client_and_removes_the_refused(world, issuer):
    base, provider = issuer
    _discovery(base)
    Issuer.answers["/token"] = (400, {"error": "invalid_grant"})
    identity = ExternalIdentity.objects.create(provider=provider, subject="alice", user=world.customer_a,
                                               refresh_token="r")
    assert services.check_identity(identity) is False
    assert "POST /token" in Issuer.calls
    world.customer_a.refresh_from_db()
    assert not world.customer_a.is_active
