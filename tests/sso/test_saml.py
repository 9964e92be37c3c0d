"""Signing in through an organization's SAML 2.0 identity provider. The identity provider's side is real here: it
reads the portal's AuthnRequest (deflated, from the redirect) and answers with a response signed through xmlsec
(python3-saml's ``add_sign``) by a key and certificate made with ``cryptography`` for the test run. Valid answers
sign a customer of the provider's organization in; unsigned, foreign-signed, tampered, misaddressed, expired,
unrequested and replayed answers are refused, as are addresses of a domain the provider does not own."""
from __future__ import annotations

import base64
import re
import uuid
import zlib
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from lxml import etree
from onelogin.saml2.utils import OneLogin_Saml2_Utils

from portal.core.audit.models import AuditEvent, AuditKind
from portal.core.models import Membership
from portal.core.sso import saml
from portal.core.sso.models import ExternalIdentity, IdentityDomain, IdentityProvider, Protocol, SeenAssertion

IDP = "https://idp.alpha.example/saml"
SSO_URL = "https://idp.alpha.example/saml/sso"
PROTOCOL_NS = "urn:oasis:names:tc:SAML:2.0:protocol"
# What the assertion consumer costs for a first sign-in, as measured (the signature check is no query; the
# account, membership, identity, seen assertion, session and audit rows are).
QUERIES = 34


def make_signer(name: str = "Alpha IdP") -> tuple[str, str]:
    """A fresh RSA key and its self-signed certificate, as PEM (made for this run, never committed)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=30)).sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption()).decode()
    return key_pem, cert.public_bytes(serialization.Encoding.PEM).decode()


@pytest.fixture(scope="module")
def signer():
    return make_signer()


@pytest.fixture
def provider(world, signer):
    row = IdentityProvider.objects.create(organization=world.org_a, name="Alpha SAML", protocol=Protocol.SAML,
                                          saml_entity_id=IDP, saml_sso_url=SSO_URL, saml_certificate=signer[1])
    IdentityDomain.objects.create(provider=row, domain="alpha.example")
    return row


def _time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class IdentityProviderSide:
    """What the IdP does: read the AuthnRequest the portal sent and answer it with a signed response."""

    def __init__(self, key: str, cert: str, entity_id: str = IDP):
        self.key, self.cert, self.entity_id = key, cert, entity_id

    @staticmethod
    def read_request(location: str) -> etree._Element:
        parts = urlsplit(location)
        assert f"{parts.scheme}://{parts.netloc}{parts.path}" == SSO_URL
        encoded = parse_qs(parts.query)["SAMLRequest"][0]
        return etree.fromstring(zlib.decompress(base64.b64decode(encoded), -15))

    def response(self, request: etree._Element | None, *, email: str = "alice@alpha.example",
                 nameid: str | None = None, audience: str | None = None, destination: str | None = None,
                 in_response_to: str | None = None, lifetime: timedelta = timedelta(minutes=5),
                 assertion_id: str | None = None, sign: str = "assertion", key: str | None = None,
                 cert: str | None = None) -> str:
        """The response XML; ``sign`` is "assertion", "response" or "" (none)."""
        now = datetime.now(UTC)
        acs = destination or request.get("AssertionConsumerServiceURL")
        sp = audience or request.find("{urn:oasis:names:tc:SAML:2.0:assertion}Issuer").text
        irt = in_response_to or request.get("ID")
        start, end = now - timedelta(minutes=1) if lifetime > timedelta(0) else now + lifetime - timedelta(hours=1), \
            now + lifetime
        assertion = f"""<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" \
ID="{assertion_id or '_a' + uuid.uuid4().hex}" Version="2.0" IssueInstant="{_time(start)}">
<saml:Issuer>{self.entity_id}</saml:Issuer>
<saml:Subject>
<saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">{nameid or email}</saml:NameID>
<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">
<saml:SubjectConfirmationData NotOnOrAfter="{_time(end)}" Recipient="{acs}" InResponseTo="{irt}"/>
</saml:SubjectConfirmation>
</saml:Subject>
<saml:Conditions NotBefore="{_time(start)}" NotOnOrAfter="{_time(end)}">
<saml:AudienceRestriction><saml:Audience>{sp}</saml:Audience></saml:AudienceRestriction>
</saml:Conditions>
<saml:AuthnStatement AuthnInstant="{_time(start)}" SessionIndex="_s{uuid.uuid4().hex}">
<saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport\
</saml:AuthnContextClassRef></saml:AuthnContext>
</saml:AuthnStatement>
<saml:AttributeStatement>
<saml:Attribute Name="email"><saml:AttributeValue>{email}</saml:AttributeValue></saml:Attribute>
</saml:AttributeStatement>
</saml:Assertion>"""
        key, cert = key or self.key, cert or self.cert
        if sign == "assertion":
            assertion = _text(OneLogin_Saml2_Utils.add_sign(assertion, key, cert))
        document = f"""<samlp:Response xmlns:samlp="{PROTOCOL_NS}" \
xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r{uuid.uuid4().hex}" Version="2.0" \
IssueInstant="{_time(start)}" Destination="{acs}" InResponseTo="{irt}">
<saml:Issuer>{self.entity_id}</saml:Issuer>
<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>
{assertion}
</samlp:Response>"""
        if sign == "response":
            document = _text(OneLogin_Saml2_Utils.add_sign(document, key, cert))
        return document


def _text(value) -> str:
    text = value.decode() if isinstance(value, bytes) else value
    return text.split("?>", 1)[1].strip() if text.startswith("<?xml") else text


@pytest.fixture
def idp(signer):
    return IdentityProviderSide(*signer)


def _start(client, email: str = "alice@alpha.example") -> etree._Element:
    answer = client.post("/login/sso/", {"email": email, "next": "/clusters/"})
    assert answer.status_code == 302, answer.content
    request = IdentityProviderSide.read_request(answer["Location"])
    assert client.session[saml.REQUEST_KEY] == request.get("ID")
    return request


def _post(client, provider, document: str):
    return client.post(f"/login/sso/saml/{provider.pk}/acs/",
                       {"SAMLResponse": base64.b64encode(document.encode()).decode()})


def _refused(client, answer) -> str:
    assert answer.status_code == 302 and answer["Location"] == "/login/"
    assert "_auth_user_id" not in client.session
    return " ".join(str(m) for m in answer.wsgi_request._messages)


def test_a_signed_assertion_signs_in_a_customer_of_that_organization_and_nothing_more(world, client, provider, idp):
    request = _start(client)
    assert request.get("AssertionConsumerServiceURL") == f"http://testserver/login/sso/saml/{provider.pk}/acs/"
    answer = _post(client, provider, idp.response(request))
    assert answer.status_code == 302 and answer["Location"] == "/clusters/"
    identity = ExternalIdentity.objects.get(provider=provider, subject="alice@alpha.example")
    user = identity.user
    assert client.session["_auth_user_id"] == str(user.pk)
    assert user.email == "alice@alpha.example" and not user.has_usable_password()
    assert list(Membership.objects.filter(user=user).values_list("organization__slug", "role")) == [
        (world.org_a.slug, "customer")]
    assert not (user.is_staff or user.is_superuser or user.is_program_manager)
    assert SeenAssertion.objects.filter(provider=provider).count() == 1
    assert saml.REQUEST_KEY not in client.session
    event = AuditEvent.objects.get(kind=AuditKind.SIGN_IN, actor=user)
    assert event.method == "saml:Alpha SAML" and event.organization == world.org_a


def test_a_signed_response_is_accepted_as_well(world, client, provider, idp):
    answer = _post(client, provider, idp.response(_start(client), sign="response"))
    assert answer["Location"] == "/clusters/" and "_auth_user_id" in client.session


def test_an_unsigned_response_is_refused(world, client, provider, idp):
    message = _refused(client, _post(client, provider, idp.response(_start(client), sign="")))
    assert "not a valid, signed SAML response" in message
    assert not ExternalIdentity.objects.exists() and not SeenAssertion.objects.exists()
    assert AuditEvent.objects.filter(kind=AuditKind.SIGN_IN_FAILED, method="saml:Alpha SAML").exists()


@pytest.mark.parametrize("sign", ["assertion", "response"])
def test_a_response_signed_by_another_key_is_refused(world, client, provider, idp, sign):
    key, cert = make_signer("Mallory")
    _refused(client, _post(client, provider, idp.response(_start(client), sign=sign, key=key, cert=cert)))
    assert not ExternalIdentity.objects.exists()


@pytest.mark.parametrize("sign", ["assertion", "response"])
def test_a_response_tampered_with_after_signing_is_refused(world, client, provider, idp, sign):
    signed = idp.response(_start(client), email="alice@alpha.example", sign=sign)
    tampered = signed.replace("alice@alpha.example", "boss@alpha.example")
    assert tampered != signed
    _refused(client, _post(client, provider, tampered))
    assert not ExternalIdentity.objects.exists()


def test_a_response_for_another_audience_is_refused(world, client, provider, idp):
    _refused(client, _post(client, provider, idp.response(_start(client), audience="https://other-sp.example/")))


def test_a_response_addressed_to_another_consumer_is_refused(world, client, provider, idp):
    _refused(client, _post(client, provider, idp.response(_start(client),
                                                          destination="https://other-sp.example/acs")))


def test_an_expired_assertion_is_refused(world, client, provider, idp):
    _refused(client, _post(client, provider, idp.response(_start(client), lifetime=timedelta(minutes=-30))))
    assert not ExternalIdentity.objects.exists()


def test_an_answer_to_another_request_is_refused(world, client, provider, idp):
    _refused(client, _post(client, provider, idp.response(_start(client), in_response_to="_not-our-request")))


def _continuation(answer) -> dict:
    """The fields of the page that posts a cookie-less answer again from the portal's own origin."""
    assert answer.status_code == 200 and answer.templates[0].name == "sso/saml_continue.html"
    page = answer.content.decode()
    assert 'id="saml-continue"' in page and "js/saml-continue.js" in page
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page))


def test_the_idps_cross_site_post_without_the_session_cookie_is_posted_again_from_the_portal(
        world, client, provider, idp):
    from django.test import Client

    document = idp.response(_start(client))
    cross_site = Client()  # the browser's POST from the IdP's page: SameSite=Lax keeps the session cookie back
    fields = _continuation(cross_site.post(f"/login/sso/saml/{provider.pk}/acs/",
                                           {"SAMLResponse": base64.b64encode(document.encode()).decode()}))
    assert fields["continued"] == "1" and not ExternalIdentity.objects.exists()
    answer = client.post(f"/login/sso/saml/{provider.pk}/acs/", fields)  # the same browser, now same-site
    assert answer["Location"] == "/clusters/" and ExternalIdentity.objects.count() == 1


def test_an_answer_without_a_sign_in_started_in_this_session_is_refused(world, client, provider, idp):
    request = _start(client)
    document = idp.response(request)
    client.cookies.clear()  # another browser: no request kept in its session
    fields = _continuation(_post(client, provider, document))
    _refused(client, client.post(f"/login/sso/saml/{provider.pk}/acs/", fields))
    assert not ExternalIdentity.objects.exists()


def test_a_replayed_assertion_is_refused(world, client, provider, idp):
    request = _start(client)
    document = idp.response(request)
    assert _post(client, provider, document)["Location"] == "/clusters/"
    client.logout()
    _start(client)
    session = client.session  # even with the first request's id put back into the session
    session[saml.REQUEST_KEY] = request.get("ID")
    session.save()
    message = _refused(client, _post(client, provider, document))
    assert "already used" in message
    assert SeenAssertion.objects.count() == 1 and ExternalIdentity.objects.count() == 1


def test_an_address_of_a_domain_another_organization_claims_is_refused(world, client, provider, idp):
    beta = IdentityProvider.objects.create(organization=world.org_b, name="Beta SSO", protocol=Protocol.SAML,
                                           saml_entity_id="https://idp.beta.example", saml_sso_url=SSO_URL,
                                           saml_certificate=idp.cert)
    IdentityDomain.objects.create(provider=beta, domain="beta.example")
    message = _refused(client, _post(client, provider, idp.response(_start(client), email="bob@beta.example")))
    assert "does not sign in addresses of beta.example" in message
    assert not Membership.objects.filter(user__email="bob@beta.example").exists()


def test_a_person_of_another_domain_is_refused(world, client, provider, idp):
    _refused(client, _post(client, provider, idp.response(_start(client), email="eve@elsewhere.example")))
    assert not ExternalIdentity.objects.exists()


def test_an_account_holding_another_role_is_never_signed_in(world, client, provider, idp):
    world.lead_a.email = "alice@alpha.example"
    world.lead_a.save()
    _refused(client, _post(client, provider, idp.response(_start(client))))
    assert not Membership.objects.filter(user=world.lead_a, role="customer").exists()


def test_the_metadata_names_the_portal_and_its_consumer(world, client, provider):
    answer = client.get(f"/login/sso/saml/{provider.pk}/metadata/")
    assert answer.status_code == 200 and answer["Content-Type"] == "application/samlmetadata+xml"
    document = etree.fromstring(answer.content)
    assert document.get("entityID") == f"http://testserver/login/sso/saml/{provider.pk}/metadata/"
    acs = document.find(".//{urn:oasis:names:tc:SAML:2.0:metadata}AssertionConsumerService")
    assert acs.get("Location") == f"http://testserver/login/sso/saml/{provider.pk}/acs/"


def test_metadata_and_consumer_answer_only_for_enabled_saml_providers(world, client, provider, idp):
    oidc = IdentityProvider.objects.create(organization=world.org_b, name="Beta OIDC", issuer="https://b.example",
                                           client_id="b", client_secret="b")
    assert client.get(f"/login/sso/saml/{oidc.pk}/metadata/").status_code == 404
    provider.enabled = False
    provider.save()
    assert client.get(f"/login/sso/saml/{provider.pk}/metadata/").status_code == 404
    _refused(client, _post(client, provider, "<x/>"))


@pytest.mark.parametrize("attribute", ["InResponseTo", "Destination"])
def test_a_response_that_leaves_out_what_python3_saml_lets_pass_is_refused(world, client, provider, idp, attribute):
    """python3-saml accepts a response without InResponseTo (an IdP-initiated one) or without Destination; the
    portal does not (the assertion is signed, the response's own attributes are not: the signature still holds)."""
    document = idp.response(_start(client))
    head, rest = document.split("<saml:Issuer", 1)
    head = re.sub(rf' {attribute}="[^"]*"', "", head)
    assert attribute not in head
    _refused(client, _post(client, provider, f"{head}<saml:Issuer{rest}"))
    assert not ExternalIdentity.objects.exists() and not SeenAssertion.objects.exists()


# --- registering a SAML provider through the pages ----------------------------------------------------------

def idp_metadata(cert_pem: str, entity_id: str = IDP, sso_url: str = SSO_URL) -> str:
    body = "".join(line for line in cert_pem.strip().splitlines() if "CERTIFICATE" not in line)
    return f"""<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="{entity_id}">
<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
<md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data>\
<ds:X509Certificate>{body}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="{sso_url}"/>
</md:IDPSSODescriptor>
</md:EntityDescriptor>"""


def _saml_data(org, **changes) -> dict:
    return {"organization": org.pk, "name": "Alpha SAML", "protocol": "saml", "domains": "alpha.example",
            "enabled": "on", **changes}


def _administrator(world):
    from portal.core.choices import MembershipRole

    Membership.objects.create(user=world.customer_a, organization=world.org_a, role=MembershipRole.ORG_ADMIN)
    return world.customer_a


def test_an_organizations_administrator_registers_a_saml_provider_from_its_metadata_and_people_sign_in(
        world, client, idp):
    from portal.core.sso.models import IdentityProviderChange

    client.force_login(_administrator(world))
    answer = client.post("/sso/providers/new/", _saml_data(world.org_a, saml_metadata_xml=idp_metadata(idp.cert)))
    assert answer.status_code == 302, answer.context["form"].errors if answer.context else answer
    provider = IdentityProvider.objects.get(organization=world.org_a)
    assert (provider.protocol, provider.saml_entity_id, provider.saml_sso_url) == ("saml", IDP, SSO_URL)
    assert saml.certificate_body(provider.saml_certificate) == saml.certificate_body(idp.cert)
    change = IdentityProviderChange.objects.get(provider=provider)
    assert change.action == "registered" and change.changes["protocol"] == [None, "saml"]
    assert change.changes["saml_certificate"] == [None, saml.fingerprint(idp.cert)]
    event = AuditEvent.objects.get(kind=AuditKind.IDENTITY_PROVIDER, organization=world.org_a)
    assert event.method == "saml:Alpha SAML" and event.outcome == "registered" and IDP in event.target
    page = client.get(f"/sso/providers/{provider.pk}/edit/").content.decode()
    assert f"http://testserver/login/sso/saml/{provider.pk}/metadata/" in page
    assert f"http://testserver/login/sso/saml/{provider.pk}/acs/" in page
    client.logout()
    answer = _post(client, provider, idp.response(_start(client, "carol@alpha.example"),
                                                  email="carol@alpha.example"))
    assert answer["Location"] == "/clusters/"
    assert list(Membership.objects.filter(user__email="carol@alpha.example").values_list(
        "organization", "role")) == [(world.org_a.pk, "customer")]


def test_a_saml_registration_needs_a_readable_certificate_and_the_idps_addresses(world, client, idp):
    client.force_login(_administrator(world))
    answer = client.post("/sso/providers/new/", _saml_data(world.org_a, saml_entity_id=IDP, saml_sso_url=SSO_URL,
                                                           saml_certificate="not a certificate"))
    assert answer.status_code == 200
    errors = answer.context["form"].errors
    assert "saml_certificate" in errors and "issuer" not in errors and "client_secret" not in errors
    answer = client.post("/sso/providers/new/", _saml_data(world.org_a, saml_metadata_xml="<not-metadata/>"))
    assert answer.status_code == 200 and "saml_metadata_xml" in answer.context["form"].errors
    assert not IdentityProvider.objects.exists()


def test_another_organizations_administrator_cannot_register_for_alpha_or_reach_its_provider(world, client, idp,
                                                                                            provider):
    from portal.core.choices import MembershipRole

    Membership.objects.create(user=world.customer_b, organization=world.org_b, role=MembershipRole.ORG_ADMIN)
    client.force_login(world.customer_b)
    answer = client.post("/sso/providers/new/", _saml_data(world.org_a, saml_metadata_xml=idp_metadata(idp.cert),
                                                           domains="alpha-two.example"))
    assert answer.status_code == 200 and "organization" in answer.context["form"].errors
    assert client.get(f"/sso/providers/{provider.pk}/edit/").status_code == 404
    assert IdentityProvider.objects.count() == 1


def test_metadata_read_from_the_idps_url_goes_through_the_outbound_client(world, client, idp, settings):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    document = idp_metadata(idp.cert).encode()

    class Metadata(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "application/samlmetadata+xml")
            self.send_header("Content-Length", str(len(document)))
            self.end_headers()
            self.wfile.write(document)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Metadata)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client.force_login(_administrator(world))
        refused = client.post("/sso/providers/new/", _saml_data(
            world.org_a, saml_metadata_url="https://169.254.169.254/metadata"))
        assert refused.status_code == 200
        assert "private, local or reserved" in str(refused.context["form"].errors["saml_metadata_url"])
        url = f"http://127.0.0.1:{server.server_address[1]}/metadata"
        answer = client.post("/sso/providers/new/", _saml_data(world.org_a, saml_metadata_url=url))
        assert answer.status_code == 302, answer.context["form"].errors if answer.context else answer
        assert IdentityProvider.objects.get().saml_entity_id == IDP
    finally:
        server.shutdown()
        server.server_close()


def test_the_admin_asks_for_the_fields_of_the_providers_protocol(world, client, idp):
    world.staff.is_superuser = True
    world.staff.save()
    client.force_login(world.staff)
    base = {"organization": world.org_b.pk, "name": "Beta", "enabled": "on", "passwords_allowed": "on",
            "domains-TOTAL_FORMS": "1", "domains-INITIAL_FORMS": "0", "domains-0-domain": "beta-saml.example"}
    answer = client.post("/admin/sso/identityprovider/add/", {**base, "protocol": "saml", "saml_entity_id": IDP})
    assert answer.status_code == 200 and set(answer.context["adminform"].form.errors) == {
        "saml_sso_url", "saml_certificate"}
    answer = client.post("/admin/sso/identityprovider/add/", {**base, "protocol": "oidc"})
    assert answer.status_code == 200 and set(answer.context["adminform"].form.errors) == {
        "issuer", "client_id", "client_secret"}
    answer = client.post("/admin/sso/identityprovider/add/", {**base, "protocol": "saml", "saml_entity_id": IDP,
                                                              "saml_sso_url": SSO_URL, "saml_certificate": idp.cert})
    assert answer.status_code == 302
    assert IdentityProvider.objects.get(name="Beta").protocol == "saml"


def test_a_saml_sign_in_costs_a_bounded_number_of_queries(world, client, provider, idp, django_assert_max_num_queries):
    document = idp.response(_start(client))
    with django_assert_max_num_queries(QUERIES) as captured:
        assert _post(client, provider, document)["Location"] == "/clusters/"
    assert len(captured) == QUERIES
