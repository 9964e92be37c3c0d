"""An organization registers its own identity provider: program managers and staff designate one of its customers
as its administrator, who registers, changes and disables the organization's provider (and no other's). Each save
reads the issuer's discovery document for real (the loopback oidc-provider; a closed port; a loopback server
answering wrong documents), refuses a domain another organization owns, needs a fresh second factor, and is
recorded in the provider's history and the audit trail."""
from __future__ import annotations

import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice

from portal.core.audit.models import AuditEvent, AuditKind
from portal.core.choices import MembershipRole
from portal.core.factors import policy
from portal.core.models import Membership
from portal.core.sso import services
from portal.core.sso.models import IdentityDomain, IdentityProvider, IdentityProviderChange
from portal.core.sso.provider_views import administers_sign_in
from portal.core.sso.registration import designate
from tests.sso.conftest import CLIENT_ID, CLIENT_SECRET

ADD = "/sso/providers/new/"
ADMINS = "/sso/administrators/"


@pytest.fixture
def issuer(oidc_provider, loopback_calls) -> str:
    return oidc_provider.issuer


def _data(org, issuer: str, **changes) -> dict:
    return {"organization": org.pk, "name": "Alpha SSO", "issuer": issuer, "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET, "domains": "alpha.example", "enabled": "on", **changes}


def _edit_data(page, **data) -> dict:
    """The edit form's hidden fields (its version) with ``data``."""
    version = page.context["form"].fields.get("_version")
    return {**data, **({"_version": version.initial} if version is not None else {})}


def _make_admin(person, org):
    return Membership.objects.create(user=person, organization=org, role=MembershipRole.ORG_ADMIN)


class Documents(BaseHTTPRequestHandler):
    """A loopback server answering each path with the body set for it (a wrong discovery document)."""

    bodies: dict[str, tuple[int, bytes]] = {}

    def do_GET(self):  # noqa: N802 - http.server's name
        status, body = self.bodies.get(self.path, (404, b"not here"))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def documents(loopback_calls):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Documents)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    yield base, Documents.bodies
    Documents.bodies.clear()
    server.shutdown()
    server.server_close()


def test_program_managers_designate_a_customer_who_then_registers_the_organizations_provider(world, client, issuer):
    client.force_login(world.pm)
    answer = client.post(ADMINS, {"organization": world.org_a.pk, "person": world.customer_a.username})
    assert answer.status_code == 302
    assert Membership.objects.filter(user=world.customer_a, organization=world.org_a,
                                     role=MembershipRole.ORG_ADMIN).exists()
    assert AuditEvent.objects.filter(kind=AuditKind.ORG_ADMIN, organization=world.org_a, method="designated",
                                     target=world.customer_a.username).exists()
    assert world.customer_a.username in client.get(ADMINS).content.decode()

    client.force_login(world.customer_a)
    page = client.get(ADD)
    assert page.status_code == 200
    assert list(page.context["form"].fields["organization"].queryset) == [world.org_a]
    answer = client.post(ADD, _data(world.org_a, issuer))
    assert answer.status_code == 302, answer.context["form"].errors if answer.context else answer
    provider = IdentityProvider.objects.get(organization=world.org_a)
    assert list(provider.domains.values_list("domain", flat=True)) == ["alpha.example"]
    first = IdentityProviderChange.objects.get(provider=provider)
    assert first.action == "registered" and first.actor == world.customer_a
    assert first.changes["issuer"] == [None, issuer] and first.changes["domains"] == [None, ["alpha.example"]]
    assert CLIENT_SECRET not in json.dumps(first.changes)

    # A change: a new secret and a second domain; then disabled.
    edit = f"/sso/providers/{provider.pk}/edit/"
    page = client.get(edit)
    assert page.status_code == 200 and "Registered" in page.content.decode()
    assert client.post(edit, _edit_data(page, **_data(world.org_a, issuer, client_secret="new-secret",
                                                       domains="alpha.example\nalpha.co.jp"))).status_code == 302
    page = client.get(edit)
    assert client.post(edit, _edit_data(page, **{k: v for k, v in _data(world.org_a, issuer, client_secret="",
                                                 domains="alpha.co.jp alpha.example").items() if k != "enabled"})).status_code == 302
    provider.refresh_from_db()
    assert not provider.enabled and provider.client_secret == "new-secret"
    changed, disabled = IdentityProviderChange.objects.filter(provider=provider).order_by("id")[1:]
    assert changed.action == "changed" and changed.changes["client_secret"] == ["", "changed"]
    assert changed.changes["domains"] == [["alpha.example"], ["alpha.co.jp", "alpha.example"]]
    assert "new-secret" not in json.dumps(changed.changes)
    assert disabled.action == "disabled" and disabled.changes == {"enabled": [True, False]}
    events = AuditEvent.objects.filter(kind=AuditKind.IDENTITY_PROVIDER, organization=world.org_a)
    assert sorted(events.values_list("outcome", flat=True)) == ["changed", "disabled", "registered"]
    assert all(e.actor == world.customer_a for e in events)
    # The history is on the page; the program manager reads it too.
    client.force_login(world.pm)
    history = client.get(edit).content.decode()
    assert all(word in history for word in ("Registered", "Changed", "Disabled", world.customer_a.username))


def test_an_administrator_reaches_only_their_own_organizations_provider(world, client, issuer):
    alpha = IdentityProvider.objects.create(organization=world.org_a, name="Alpha ZZ-ORG-A-SECRET", issuer=issuer,
                                            client_id=CLIENT_ID, client_secret=CLIENT_SECRET)
    IdentityDomain.objects.create(provider=alpha, domain="alpha.example")
    IdentityProviderChange.objects.create(provider=alpha, action="registered", changes={"name": [None, "x"]})
    _make_admin(world.customer_b, world.org_b)
    client.force_login(world.customer_b)
    listing = client.get("/sso/providers/")
    assert listing.status_code == 200 and "ZZ-ORG-A-SECRET" not in listing.content.decode()
    edit = f"/sso/providers/{alpha.pk}/edit/"
    assert client.get(edit).status_code == 404
    assert client.post(edit, _data(world.org_b, issuer, name="hijacked")).status_code == 404
    # Registering one for organization A: A is not among the choices, nothing is written.
    answer = client.post(ADD, _data(world.org_a, issuer, domains="beta-owned.example"))
    assert answer.status_code == 200 and "organization" in answer.context["form"].errors
    assert IdentityProvider.objects.count() == 1 and alpha.changes.count() == 1
    alpha.refresh_from_db()
    assert alpha.name == "Alpha ZZ-ORG-A-SECRET"
    # The designation is no more than that: the administrator may not designate others, and an org's customer who
    # is not its administrator, and lead SAs, are refused the pages.
    assert client.get(ADMINS).status_code == 403
    assert client.post(ADMINS, {"organization": world.org_b.pk, "person": "customer_b"}).status_code == 403
    for name in ("customer_a", "lead_a", "lead_b"):
        client.force_login(getattr(world, name))
        assert client.get("/sso/providers/").status_code == 403, name
        assert client.get(edit).status_code == 403, name
    # An administrator role for A without being A's customer counts for nothing.
    Membership.objects.create(user=world.customer_b, organization=world.org_a, role=MembershipRole.ORG_ADMIN)
    client.force_login(world.customer_b)
    assert client.get(edit).status_code == 404


def test_a_domain_another_organization_owns_is_refused(world, client, issuer):
    beta = IdentityProvider.objects.create(organization=world.org_b, name="Beta", issuer="https://b.example",
                                           client_id="c", client_secret="s", enabled=False)
    IdentityDomain.objects.create(provider=beta, domain="beta.example")
    _make_admin(world.customer_a, world.org_a)
    client.force_login(world.customer_a)
    answer = client.post(ADD, _data(world.org_a, issuer, domains="alpha.example\nbeta.example"))
    assert answer.status_code == 200 and "beta.example" in str(answer.context["form"].errors["domains"])
    assert not IdentityProvider.objects.filter(organization=world.org_a).exists()
    assert list(IdentityDomain.objects.values_list("domain", flat=True)) == ["beta.example"]


def test_discovery_is_checked_on_save_with_a_clear_error(world, client, documents, settings):
    base, bodies = documents
    _make_admin(world.customer_a, world.org_a)
    client.force_login(world.customer_a)

    def refused(issuer: str) -> str:
        answer = client.post(ADD, _data(world.org_a, issuer))
        assert answer.status_code == 200, answer
        assert not IdentityProvider.objects.exists() and not IdentityProviderChange.objects.exists()
        return " ".join(answer.context["form"].errors["issuer"])

    # Nothing answers at all (a port just closed).
    closed = documents[0].rsplit(":", 1)[0] + ":1"
    assert "could not read" in refused(closed) and "could not be reached" in refused(closed)
    # Something answers, but no discovery document at that path.
    assert "Nothing answers at that path (HTTP 404)" in refused(f"{base}/nothing")
    bodies["/plain/.well-known/openid-configuration"] = (200, b"<html>hello</html>")
    assert "did not answer with JSON" in refused(f"{base}/plain")
    good = {"authorization_endpoint": f"{base}/auth", "token_endpoint": f"{base}/token", "jwks_uri": f"{base}/jwks",
            "response_types_supported": ["code"]}
    bodies["/other/.well-known/openid-configuration"] = (200, json.dumps({**good, "issuer": "https://evil.example"})
                                                         .encode())
    assert "names another issuer (https://evil.example)" in refused(f"{base}/other")
    bodies["/thin/.well-known/openid-configuration"] = (200, json.dumps({"issuer": f"{base}/thin"}).encode())
    assert "lacks authorization_endpoint, token_endpoint, jwks_uri" in refused(f"{base}/thin")
    bodies["/implicit/.well-known/openid-configuration"] = (200, json.dumps(
        {**good, "issuer": f"{base}/implicit", "response_types_supported": ["id_token"]}).encode())
    assert "authorization code flow" in refused(f"{base}/implicit")
    # A private address the operator has not listed is not called at all.
    settings.OUTBOUND_ALLOWED_HOSTS = []
    assert "private" in refused(f"{base}/implicit")
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    # A well-formed document for this issuer is accepted; a disabled provider is saved without the check.
    bodies["/good/.well-known/openid-configuration"] = (200, json.dumps({**good, "issuer": f"{base}/good"}).encode())
    assert client.post(ADD, _data(world.org_a, f"{base}/good")).status_code == 302
    assert client.post(ADD, {k: v for k, v in _data(world.org_a, closed, domains="alpha.co.jp").items()
                             if k != "enabled"}).status_code == 302
    assert IdentityProvider.objects.filter(organization=world.org_a).count() == 2


def test_an_administrator_needs_a_fresh_second_factor(world, client, issuer, settings):
    settings.SECOND_FACTOR_REQUIRED = True
    _make_admin(world.customer_a, world.org_a)
    TOTPDevice.objects.create(user=world.customer_a, name="authenticator", confirmed=True)
    client.force_login(world.customer_a)
    answer = client.post(ADD, _data(world.org_a, issuer))
    assert answer.status_code == 302 and answer["Location"].startswith("/account/second-factor/verify/")
    assert not IdentityProvider.objects.exists()
    session = client.session
    session[policy.SESSION_KEY] = (timezone.now() - timedelta(minutes=settings.SECOND_FACTOR_FRESH_MINUTES + 1)
                                   ).isoformat()
    session.save()
    assert client.post(ADD, _data(world.org_a, issuer))["Location"].startswith("/account/second-factor/verify/")
    policy.mark_verified(session)
    session.save()
    assert client.post(ADD, _data(world.org_a, issuer))["Location"] == "/sso/providers/"
    assert IdentityProvider.objects.filter(organization=world.org_a).count() == 1


def test_only_a_customer_of_the_organization_is_designated_and_removal_ends_it(world, client, issuer):
    client.force_login(world.staff)
    for person in ("lead_a", "customer_b", "nobody-here"):
        answer = client.post(ADMINS, {"organization": world.org_a.pk, "person": person})
        assert answer.status_code == 400, person
    assert not Membership.objects.filter(role=MembershipRole.ORG_ADMIN).exists()
    row = _make_admin(world.customer_a, world.org_a)
    assert administers_sign_in(world.customer_a)
    assert client.post(f"/sso/administrators/{row.pk}/remove/").status_code == 302
    assert not Membership.objects.filter(pk=row.pk).exists()
    assert AuditEvent.objects.filter(kind=AuditKind.ORG_ADMIN, method="removed", organization=world.org_a).exists()
    client.force_login(world.customer_a)
    assert client.get("/sso/providers/").status_code == 403


def test_the_organizations_provider_still_signs_its_administrator_in(world, issuer):
    provider = IdentityProvider.objects.create(organization=world.org_a, name="Alpha", issuer=issuer,
                                               client_id=CLIENT_ID, client_secret=CLIENT_SECRET)
    IdentityDomain.objects.create(provider=provider, domain="alpha.example")
    world.customer_a.email = "admin@alpha.example"
    world.customer_a.save()
    designate(world.org_a, world.customer_a, None)
    user = services.sign_in(provider, {"sub": "adm", "email": "admin@alpha.example", "email_verified": True})
    assert user == world.customer_a
    # Designation is the program's: a sign-in never makes anyone an administrator.
    other = services.sign_in(provider, {"sub": "new", "email": "new@alpha.example", "email_verified": True})
    assert list(Membership.objects.filter(user=other).values_list("role", flat=True)) == ["customer"]
