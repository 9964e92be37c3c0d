"""Signing in through an organization's own identity provider: a real OpenID Connect provider on loopback, the
authorization code flow with PKCE, the ID token's signature and nonce checked, and the portal's own rules."""
from __future__ import annotations

import urllib.parse as up

import pytest
from django.db import IntegrityError
from knox.models import get_token_model

from portal.core.audit.models import AuditEvent, AuditKind
from portal.core.models import Membership
from portal.core.sso import services
from portal.core.sso.models import ExternalIdentity, IdentityDomain, IdentityProvider
from portal.core.sso.tasks import check_identities
from tests.sso.conftest import CLIENT_ID, CLIENT_SECRET

ALICE = {"alice": {"email": "alice@alpha.example", "name": "Alice"}}


@pytest.fixture
def provider(world, oidc_provider):
    oidc_provider.set_accounts(ALICE)
    row = IdentityProvider.objects.create(organization=world.org_a, name="Alpha SSO", issuer=oidc_provider.issuer,
                                          client_id=CLIENT_ID, client_secret=CLIENT_SECRET)
    IdentityDomain.objects.create(provider=row, domain="alpha.example")
    row.live = oidc_provider
    return row


def _start(client, email: str) -> str:
    answer = client.post("/login/sso/", {"email": email, "next": "/clusters/"})
    assert answer.status_code == 302, answer.content
    return answer["Location"]


def _sign_in(client, provider, login: str = "alice", email: str = "alice@alpha.example"):
    back = provider.live.walk(_start(client, email), login)
    parts = up.urlsplit(back)
    return client.get(f"{parts.path}?{parts.query}"), f"{parts.path}?{parts.query}"


def test_signing_in_creates_a_customer_of_that_organization_and_nothing_more(world, client, provider):
    answer, _ = _sign_in(client, provider)
    assert answer.status_code == 302 and answer["Location"] == "/clusters/"
    identity = ExternalIdentity.objects.get(provider=provider, subject="alice")
    user = identity.user
    assert user.email == "alice@alpha.example" and not user.has_usable_password()
    assert list(Membership.objects.filter(user=user).values_list("organization__slug", "role")) == [
        (world.org_a.slug, "customer")]
    assert not (user.is_staff or user.is_superuser or user.is_program_manager)
    assert identity.refresh_token
    assert client.get("/clusters/").status_code == 200
    event = AuditEvent.objects.get(kind=AuditKind.SIGN_IN, actor=user)
    assert event.method == "oidc:Alpha SSO" and event.organization == world.org_a


def test_a_second_sign_in_links_the_same_account(world, client, provider):
    _sign_in(client, provider)
    client.logout()
    _sign_in(client, provider)
    assert ExternalIdentity.objects.count() == 1 and Membership.objects.filter(user__email="alice@alpha.example").count() == 1


def test_an_address_of_a_domain_the_provider_does_not_own_is_refused(world, client, provider):
    provider.live.set_accounts({"mallory": {"email": "mallory@beta.example", "name": "Mallory"}})
    answer, _ = _sign_in(client, provider, login="mallory", email="someone@alpha.example")
    assert answer.status_code == 302 and answer["Location"] == "/login/"
    assert not ExternalIdentity.objects.exists() and "_auth_user_id" not in client.session
    assert AuditEvent.objects.filter(kind=AuditKind.SIGN_IN_FAILED, method="oidc:Alpha SSO").exists()


def test_an_account_holding_another_role_is_never_signed_in_by_an_organizations_provider(world, client, provider):
    world.lead_a.email = "alice@alpha.example"
    world.lead_a.save()
    answer, _ = _sign_in(client, provider)
    assert answer["Location"] == "/login/" and "_auth_user_id" not in client.session
    assert not Membership.objects.filter(user=world.lead_a, role="customer").exists()


def test_a_domain_claimed_by_two_organizations_is_refused(world, provider):
    other = IdentityProvider.objects.create(organization=world.org_b, name="Beta SSO", issuer=provider.issuer,
                                            client_id="b", client_secret="b")
    with pytest.raises(IntegrityError):
        IdentityDomain.objects.create(provider=other, domain="Alpha.Example")


def test_the_admin_says_why_a_domain_is_refused(world, provider, client):
    staff = world.staff
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    answer = client.post("/admin/sso/identityprovider/add/", {
        "organization": world.org_b.pk, "name": "Beta SSO", "issuer": provider.issuer, "client_id": "b",
        "client_secret": "b", "enabled": "on", "passwords_allowed": "on",
        "domains-TOTAL_FORMS": "1", "domains-INITIAL_FORMS": "0", "domains-0-domain": "alpha.example"})
    assert answer.status_code == 200 and "already owns this domain" in answer.content.decode()
    assert not IdentityProvider.objects.filter(name="Beta SSO").exists()


def test_a_person_removed_at_the_provider_is_signed_out_and_their_tokens_die(world, client, provider):
    _sign_in(client, provider)
    user = ExternalIdentity.objects.get().user
    get_token_model().objects.create(user=user)
    assert check_identities() == 0 and user.external_identities.get().checked_at is not None
    provider.live.set_accounts({})
    assert check_identities() == 1
    user.refresh_from_db()
    assert not user.is_active and not get_token_model().objects.filter(user=user).exists()
    assert client.get("/clusters/").status_code == 302  # the session is gone
    with pytest.raises(AssertionError, match="the provider answered"):
        _sign_in(client, provider)


def test_a_replayed_code_is_refused(world, client, provider):
    first, callback = _sign_in(client, provider)
    assert first.status_code == 302 and first["Location"] == "/clusters/"
    client.logout()
    again = client.get(callback)
    assert again["Location"] == "/login/" and "_auth_user_id" not in client.session


def test_a_code_exchanged_twice_is_refused_by_the_provider_even_with_the_state_kept(world, client, provider):
    back = provider.live.walk(_start(client, "alice@alpha.example"), "alice")
    kept = {k: v for k, v in client.session.items() if k.startswith("_state_")}
    parts = up.urlsplit(back)
    assert client.get(f"{parts.path}?{parts.query}")["Location"] == "/clusters/"
    client.logout()
    session = client.session
    session.update({**kept, "sso_provider": provider.pk})
    session.save()
    again = client.get(f"{parts.path}?{parts.query}")
    assert again["Location"] == "/login/" and "_auth_user_id" not in client.session


def test_a_wrong_nonce_is_refused(world, client, provider):
    back = provider.live.walk(_start(client, "alice@alpha.example"), "alice")
    session = client.session
    for key, value in list(session.items()):
        if key.startswith("_state_"):
            value["data"]["nonce"] = "not-the-nonce-that-was-sent"
            session[key] = value
    session.save()
    parts = up.urlsplit(back)
    answer = client.get(f"{parts.path}?{parts.query}")
    assert answer["Location"] == "/login/" and "_auth_user_id" not in client.session


def test_a_forged_id_token_is_refused(world, provider):
    from joserfc import jwt
    from joserfc.errors import BadSignatureError
    from joserfc.jwk import RSAKey

    app = services.client(provider)
    metadata = app.load_server_metadata()
    key = RSAKey.generate_key(2048)
    kid = app.fetch_jwk_set()["keys"][0].get("kid")
    claims = {"iss": metadata["issuer"], "aud": CLIENT_ID, "sub": "alice", "email": "alice@alpha.example",
              "nonce": "n", "iat": 2_000_000_000 - 10, "exp": 2_000_000_000}
    forged = jwt.encode({"alg": "RS256", "kid": kid}, claims, key)
    with pytest.raises(BadSignatureError):
        app.parse_id_token({"id_token": forged, "access_token": "x"}, nonce="n")


def test_passwords_can_be_turned_off_for_an_organization(world, client, provider):
    assert client.post("/login/", {"username": "customer_a", "password": "pw-for-tests"}).status_code == 302
    client.logout()
    provider.passwords_allowed = False
    provider.save()
    assert client.post("/login/", {"username": "customer_a", "password": "pw-for-tests"}).status_code == 200
    assert client.post("/login/", {"username": "customer_b", "password": "pw-for-tests"}).status_code == 302


def test_the_programs_provider_signs_in_only_accounts_the_portal_holds(world, client, oidc_provider):
    oidc_provider.set_accounts({"sam": {"email": "sam@aws.example", "name": "Sam"},
                                "stranger": {"email": "stranger@aws.example", "name": "Stranger"}})
    program = IdentityProvider.objects.create(name="AWS", issuer=oidc_provider.issuer, client_id=CLIENT_ID,
                                              client_secret=CLIENT_SECRET)
    program.live = oidc_provider
    IdentityDomain.objects.create(provider=program, domain="aws.example")
    world.lead_a.email = "sam@aws.example"
    world.lead_a.save()
    answer, _ = _sign_in(client, program, login="sam", email="sam@aws.example")
    assert answer["Location"] == "/clusters/" and client.session["_auth_user_id"] == str(world.lead_a.pk)
    assert list(Membership.objects.filter(user=world.lead_a).values_list("role", flat=True)) == ["lead_sa"]
    client.logout()
    answer, _ = _sign_in(client, program, login="stranger", email="stranger@aws.example")
    assert answer["Location"] == "/login/" and not ExternalIdentity.objects.filter(subject="stranger").exists()


def test_an_unknown_domain_is_told_to_use_a_password(world, client):
    answer = client.post("/login/sso/", {"email": "someone@nowhere.example"})
    assert answer.status_code == 302 and answer["Location"] == "/login/"
