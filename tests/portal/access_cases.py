"""Route cases of the portal's core: sign-in, organizations, memberships, the timeline, the API's root and tokens."""
from __future__ import annotations

import functools

from tests.routecases import (
    _SPECIALIST,
    FORBIDDEN,
    LIST,
    LOGIN,
    OBJECTS,
    OUTSIDERS,
    PM,
    ROLES,
    ROUTES,
    STAFF,
    Case,
    _static,
    _writes,
    api_data,
)

ROUTES.update({
    "home": Case(foreign=302, expect={"customer_a": 302, "lead_a": 302, "pm": 302, "staff": 302}),
    # Signed-in users are sent on to the home page.
    "login": Case(public=True, foreign=302, expect={r: 302 for r in ("customer_a", "lead_a", "pm", "staff")}),
    "logout": Case(public=True, foreign=405),
    # 503 only when the database or the broker is down; both run here.
    "healthz": Case(public=True, foreign=200),
    # A redirect to the static file for every method; nothing to write.
    "favicon": Case(public=True, foreign=302, expect={r: 302 for r in ROLES}, payload=lambda o: {},
                    refused={r: 302 for r in ROLES}),
    "portal:organization_list": Case(foreign=LIST),
    "portal:organization_detail": Case(kwargs=lambda o: {"slug": o["organization"].slug}),
    "portal:lead_home": Case(foreign=LIST, shown_to=_SPECIALIST),
    "review:overview": Case(foreign=FORBIDDEN, expect={"customer_a": FORBIDDEN, "lead_a": FORBIDDEN}),
    "api-root": Case(api=True, foreign=LIST),
    "api-schema": Case(api=True, foreign=LIST),
    "api-docs": Case(api=True, foreign=LIST),
    "api-token": Case(api=True, public=True, foreign=405),
    "portal-api:api-root": Case(api=True, foreign=LIST),
    "portal-api:organization-list": Case(api=True, foreign=LIST),
    "portal-api:organization-detail": Case(api=True, kwargs=lambda o: {"pk": o["organization"].pk}),
    "portal-api:membership-list": Case(api=True, foreign=LIST),
    "portal-api:membership-detail": Case(
        api=True, kwargs=lambda o: {"pk": o["organization"].memberships.first().pk}
    ),
    "portal-api:timelineentry-list": Case(api=True, foreign=LIST),
    "portal-api:timelineentry-detail": Case(api=True, kwargs=lambda o: {"pk": o["timeline_entry"].pk}),
    "portal:timeline": Case(kwargs=lambda o: {"slug": o["organization"].slug}),
})


def _timeline_entry(w):
    from portal.core import timeline

    return timeline.record(w.org_a, "note", "ZZ-ORG-A-SECRET kickoff", visibility="shared")


OBJECTS["timeline_entry"] = _timeline_entry
# API token revocation (POST only; the token that makes the request is revoked).
ROUTES["api-token-revoke"] = Case(api=True, foreign=405, expect={r: 405 for r in ("customer_a", "lead_a", "pm", "staff")})

# portal
_writes("portal-api:organization-list", api_data("portal-api:organization-detail", "organization",
                                                 name="Gamma Co", slug="gamma-co", aws_account_id="999900001111"),
        STAFF)
# Organizations are written by staff alone: everyone else is refused before the lookup (403). Deleting
# organization A is refused while its rows exist (409): its memberships, workloads, clusters protect it.
_writes("portal-api:organization-detail", api_data("portal-api:organization-detail", "organization",
                                                   description="changed"), STAFF,
        refused={**{r: 403 for r in OUTSIDERS}, "staff:DELETE": 409})
# Signing in: anonymous with the right password; a signed-in user is sent on without signing in again.
_writes("login", _static({"username": "customer_a", "password": "pw-for-tests"}), {"anonymous"}, success=302,
        refused={**{r: 302 for r in ROLES if r != "anonymous"}, "anonymous:PUT": 200})
_writes("logout", _static({}), ROLES, success=LOGIN, writes_rows=False)
_writes("api-token", _static({"username": "customer_a", "password": "pw-for-tests"}), ROLES, success=200)
# Revokes the token the request is made with: a session has none to revoke (400, nothing written).
_writes("api-token-revoke", _static({}), (), refused={r: 400 for r in ROLES if r != "anonymous"})


# The language switcher: anyone may choose a language (signed in, it is remembered for them); GET is not served.
ROUTES["set_language"] = Case(public=True, foreign=405, expect={r: 405 for r in ROLES})
_writes("set_language", _static({"language": "ja", "next": "/"}), ROLES, success=302, writes_rows=False)

# The audit trail: organization A's people read its events; outsiders get the page with none of A's.
ROUTES["audit:event_list"] = Case(foreign=LIST)


def _audit_event(w):
    from portal.core.audit.models import AuditEvent, AuditKind

    return AuditEvent.objects.create(kind=AuditKind.AWS_ACTION, organization=w.org_a, actor_name="worker",
                                     method="ec2:RunInstances", target="ZZ-ORG-A-SECRET instance")


OBJECTS["audit_event"] = _audit_event

# A person's own second factor: every signed-in role reaches its own pages (nothing of another's is there); a
# wrong code answers the form again, a request for new recovery codes without a fresh factor goes to confirm one.
_SIGNED_IN = [r for r in ROLES if r != "anonymous"]
for _name in ("factors:factors", "factors:setup"):
    ROUTES[_name] = Case(foreign=LIST)
_writes("factors:setup", _static({"code": "000000"}), _SIGNED_IN, success=200, writes_rows=False)
_writes("factors:factors", _static({}), _SIGNED_IN, success=302, writes_rows=False)
# Passkeys: options for the signed-in person's own (GET), the browser's answer (POST; without a ceremony started
# in the session, 400). Confirming needs a passkey (nobody here holds one: 404). The passkey below is another
# customer of organization A's: removing it is its owner's alone, so every role here gets 404 (the owner's own
# removal is tested in tests/portal/test_passkeys.py). Confirming with a code needs a factor set up first:
# without one, the page sends the person to set one up.
ROUTES["factors:verify"] = Case(foreign=302, expect={r: 302 for r in _SIGNED_IN})
_writes("factors:verify", _static({"code": "000000"}), _SIGNED_IN, success=200, writes_rows=False)
ROUTES["factors:passkey_register"] = Case(foreign=LIST)
_writes("factors:passkey_register", _static({}), _SIGNED_IN, success=400, writes_rows=False)
ROUTES["factors:passkey_verify"] = Case(foreign=404, expect={r: 404 for r in _SIGNED_IN})
_writes("factors:passkey_verify", _static({}), _SIGNED_IN, success=400, writes_rows=False)
ROUTES["factors:passkey_delete"] = Case(kwargs=lambda o: {"pk": o["passkey"].pk},
                                        expect={r: 405 for r in _SIGNED_IN})
_writes("factors:passkey_delete", _static({}), (), refused={r: 404 for r in _SIGNED_IN})


def _passkey(w):
    from portal.core.factors.models import Passkey
    from tests.factories import MembershipFactory, UserFactory

    owner = MembershipFactory(user=UserFactory(username="passkey_owner_a"), organization=w.org_a).user
    return Passkey.objects.create(user=owner, name="ZZ-ORG-A-SECRET laptop", credential_id="WlotY3JlZC1h",
                                  public_key=b"not a key")


OBJECTS["passkey"] = _passkey

# Single sign-on: reached before signing in. Starting posts an address (an unknown domain goes back to the
# sign-in page, nothing written); the callback without a sign-in started in this session goes back there too.
ROUTES["sso:start"] = Case(public=True, foreign=405, expect={r: 405 for r in ROLES})
_writes("sso:start", _static({"email": "someone@nowhere.example"}), ROLES, success=LOGIN, writes_rows=False)
ROUTES["sso:callback"] = Case(public=True, foreign=LOGIN, expect={r: LOGIN for r in ROLES})
# SAML: the portal's metadata for a provider is public (only the portal's own addresses); the assertion consumer
# takes POSTs only, and one without a sign-in started in this session goes back to the sign-in page; one without
# any session cookie (the IdP's cross-site POST) gets the page that posts it again from the portal's origin (200).
ROUTES["sso:saml_metadata"] = Case(public=True, kwargs=lambda o: {"pk": o["saml_provider"].pk}, foreign=200,
                                   expect={r: 200 for r in ROLES})
ROUTES["sso:saml_acs"] = Case(public=True, kwargs=lambda o: {"pk": o["saml_provider"].pk}, foreign=405,
                              expect={r: 405 for r in ROLES})
_writes("sso:saml_acs", _static({"SAMLResponse": "PHg+"}), ROLES, success=LOGIN, writes_rows=False,
        refused={"anonymous:POST": 200})
# Registering organizations' identity providers: program managers and staff; everyone else is refused (403).
_PM_PAGE = {"customer_a": FORBIDDEN, "lead_a": FORBIDDEN}
ROUTES["sso:provider_list"] = Case(foreign=FORBIDDEN, expect=_PM_PAGE)
ROUTES["sso:provider_add"] = Case(foreign=FORBIDDEN, expect=_PM_PAGE)
ROUTES["sso:provider_edit"] = Case(kwargs=lambda o: {"pk": o["identity_provider"].pk}, foreign=FORBIDDEN,
                                   expect=_PM_PAGE)
# Saved disabled: an enabled provider's save reads its issuer's discovery document, which this made-up issuer has
# not (tests/sso/test_org_admin_providers.py saves enabled providers against a real one on loopback).
_PROVIDER = {"organization": lambda o: o["organization"].pk, "name": "Alpha SSO ZZ-ORG-A-SECRET",
             "issuer": "https://sso.alpha-idp.example", "client_id": "portal", "client_secret": "s",
             "domains": "alpha-idp.example"}
_writes("sso:provider_add", _static({**_PROVIDER, "domains": "alpha-new.example"}), PM, success=302)
_writes("sso:provider_edit", _static({**_PROVIDER, "client_secret": ""}), PM, success=302)


def _identity_provider(w):
    from portal.core.sso.models import IdentityDomain, IdentityProvider

    provider = IdentityProvider.objects.create(organization=w.org_a, name="Alpha SSO ZZ-ORG-A-SECRET",
                                               issuer="https://sso.alpha-idp.example", client_id="portal",
                                               client_secret="s", enabled=False)
    IdentityDomain.objects.create(provider=provider, domain="alpha-idp.example")
    return provider


OBJECTS["identity_provider"] = _identity_provider


@functools.cache
def _saml_certificate() -> str:
    """One IdP certificate made for the run (never committed)."""
    from tests.sso.test_saml import make_signer

    return make_signer()[1]


def _saml_provider(w):
    from portal.core.sso.models import IdentityDomain, IdentityProvider

    provider = IdentityProvider.objects.create(organization=w.org_a, name="Alpha SAML ZZ-ORG-A-SECRET",
                                               protocol="saml", saml_entity_id="https://idp.alpha-saml.example",
                                               saml_sso_url="https://idp.alpha-saml.example/sso",
                                               saml_certificate=_saml_certificate())
    IdentityDomain.objects.create(provider=provider, domain="alpha-saml.example")
    return provider


OBJECTS["saml_provider"] = _saml_provider

# Organization administrators: program managers and staff designate (a customer of the organization) and remove
# them; everyone else is refused (403) before anything is looked up.
ROUTES["sso:administrator_list"] = Case(foreign=FORBIDDEN, expect=_PM_PAGE)
_writes("sso:administrator_list", _static({"organization": lambda o: o["organization"].pk, "person": "customer_a"}),
        PM, success=302)
ROUTES["sso:administrator_remove"] = Case(kwargs=lambda o: {"pk": o["org_admin"].pk}, foreign=FORBIDDEN,
                                          expect={**_PM_PAGE, "pm": 405, "staff": 405})
_writes("sso:administrator_remove", _static({}), PM, success=302)


def _org_admin(w):
    from portal.core.choices import MembershipRole
    from tests.factories import MembershipFactory, UserFactory

    person = MembershipFactory(user=UserFactory(username="org_admin_a"), organization=w.org_a).user
    return MembershipFactory(user=person, organization=w.org_a, role=MembershipRole.ORG_ADMIN)


OBJECTS["org_admin"] = _org_admin

# A person's own API tokens in the browser: every signed-in role has the page (none of another's tokens on it) and
# may create one (no second factor is required in these tests). The token below is another customer of
# organization A's: confirming or revoking it is its owner's alone, so every role here gets 404 (the owner's own
# are tested in tests/portal/test_api_tokens_page.py).
ROUTES["factors:api_tokens"] = Case(foreign=LIST)
_writes("factors:api_tokens", _static({}), _SIGNED_IN, success=302)
for _name in ("factors:api_token_confirm", "factors:api_token_revoke"):
    ROUTES[_name] = Case(kwargs=lambda o: {"key": o["api_token"].token_key}, expect={r: 405 for r in _SIGNED_IN})
    _writes(_name, _static({}), (), refused={r: 404 for r in _SIGNED_IN})


def _api_token(w):
    from knox.models import get_token_model

    from tests.factories import MembershipFactory, UserFactory

    owner = MembershipFactory(user=UserFactory(username="token_owner_a"), organization=w.org_a).user
    return get_token_model().objects.create(user=owner, expiry=None)[0]


OBJECTS["api_token"] = _api_token
ROUTES.update({
    # Off unless METRICS_TOKEN or METRICS_ALLOWED_NETWORKS is set (tests/portal/test_metrics.py covers both).
    "metrics": Case(public=True, foreign=404, expect={r: 404 for r in ROLES}),
})
