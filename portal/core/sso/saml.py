"""Signing in through an organization's SAML 2.0 identity provider, with python3-saml (OneLogin) over xmlsec.

The portal is the service provider: its metadata (entity id, assertion consumer URL) is published per provider;
sign-in sends an AuthnRequest over the HTTP-Redirect binding and keeps its id in the session; the answer is posted
back to the assertion consumer route, where python3-saml checks, in strict mode, the XML signature (the response's
or the assertion's, against the certificate registered for the provider; an unsigned response is refused), the
issuer, the audience, the time conditions and the subject confirmation. The portal checks the rest itself, because
python3-saml lets each of them pass when it is absent: the response must name this route as its Destination,
answer the request kept in the session (``InResponseTo``) and restrict its audience to the portal. An assertion id
is accepted once (``SeenAssertion``, kept until the assertion expires). The NameID and the e-mail attribute then
go through the same rules as OpenID Connect (``services.sign_in``).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import logging
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from onelogin.saml2.auth import OneLogin_Saml2_Auth
from onelogin.saml2.constants import OneLogin_Saml2_Constants
from onelogin.saml2.errors import OneLogin_Saml2_Error, OneLogin_Saml2_ValidationError
from onelogin.saml2.idp_metadata_parser import OneLogin_Saml2_IdPMetadataParser
from onelogin.saml2.settings import OneLogin_Saml2_Settings
from onelogin.saml2.utils import OneLogin_Saml2_Utils
from onelogin.saml2.xml_utils import OneLogin_Saml2_XML

from portal.core import outbound
from portal.core.sso.models import IdentityProvider, SeenAssertion

logger = logging.getLogger(__name__)
REQUEST_KEY = "sso_saml_request"
# Where an IdP may put the person's address when the NameID is not one.
EMAIL_ATTRIBUTES = ("email", "mail", "emailAddress", "urn:oid:0.9.2342.19200300.100.1.3",
                    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress")
# An assertion without an expiry is remembered this long (longer than any clock drift it could be replayed in).
DEFAULT_MEMORY = timedelta(hours=24)
METADATA_MAX_BYTES = 1024 * 1024


class SamlRefused(Exception):
    """The response was refused; the message is the portal's own words (the library's reason goes to the log)."""


class MetadataRefused(Exception):
    """The IdP metadata (pasted or read from its URL) could not be used; the portal's own words."""


def metadata_path(provider: IdentityProvider) -> str:
    return reverse("sso:saml_metadata", kwargs={"pk": provider.pk})


def acs_path(provider: IdentityProvider) -> str:
    return reverse("sso:saml_acs", kwargs={"pk": provider.pk})


def certificate_body(pem: str) -> str:
    """The certificate as python3-saml takes it (base64 of the DER, no header), or ValueError."""
    text = (pem or "").strip()
    if "BEGIN CERTIFICATE" not in text:
        text = f"-----BEGIN CERTIFICATE-----\n{text}\n-----END CERTIFICATE-----"
    certificate = x509.load_pem_x509_certificate(OneLogin_Saml2_Utils.format_cert(text).encode())
    return base64.b64encode(certificate.public_bytes(Encoding.DER)).decode()


def fingerprint(pem: str) -> str:
    """The certificate's SHA-256 fingerprint (what the history shows), or "" when there is none."""
    try:
        return hashlib.sha256(base64.b64decode(certificate_body(pem))).hexdigest() if pem else ""
    except (ValueError, binascii.Error):
        return "unreadable"


def settings_for(provider: IdentityProvider, request) -> OneLogin_Saml2_Settings:
    data = {
        "strict": True,
        "debug": False,
        "sp": {
            "entityId": request.build_absolute_uri(metadata_path(provider)),
            "assertionConsumerService": {"url": request.build_absolute_uri(acs_path(provider)),
                                         "binding": OneLogin_Saml2_Constants.BINDING_HTTP_POST},
            "NameIDFormat": OneLogin_Saml2_Constants.NAMEID_UNSPECIFIED,
        },
        "idp": {
            "entityId": provider.saml_entity_id,
            "singleSignOnService": {"url": provider.saml_sso_url,
                                    "binding": OneLogin_Saml2_Constants.BINDING_HTTP_REDIRECT},
            "x509cert": certificate_body(provider.saml_certificate),
        },
        "security": {
            "authnRequestsSigned": False, "wantMessagesSigned": False, "wantAssertionsSigned": False,
            "wantAssertionsEncrypted": False, "wantNameId": True, "wantNameIdEncrypted": False,
            "wantAttributeStatement": False, "requestedAuthnContext": False,
            "rejectDeprecatedAlgorithm": True,
            "allowSingleLabelDomains": True,  # the portal's own host may be one label (a test or demo host)
        },
    }
    try:
        return OneLogin_Saml2_Settings(data, sp_validation_only=False)
    except OneLogin_Saml2_Error as exc:  # a registration the form would refuse now; said as ValueError
        raise ValueError(str(exc)) from None


def _request_data(request) -> dict:
    return {"https": "on" if request.is_secure() else "off", "http_host": request.get_host(),
            "script_name": request.path, "get_data": request.GET.copy(), "post_data": request.POST.copy()}


def metadata(provider: IdentityProvider, request) -> str:
    document = settings_for(provider, request).get_sp_metadata()
    return document.decode() if isinstance(document, bytes) else document


def login_redirect(provider: IdentityProvider, request) -> str:
    """The IdP's URL carrying a new AuthnRequest; its id is kept in the session for the answer."""
    auth = OneLogin_Saml2_Auth(_request_data(request), old_settings=settings_for(provider, request))
    url = auth.login()
    request.session[REQUEST_KEY] = auth.get_last_request_id()
    return url


def consume(provider: IdentityProvider, request) -> dict:
    """Check the posted SAMLResponse; the claims ``services.sign_in`` takes (``sub``, ``email``), or
    :class:`SamlRefused`. The request id kept in the session is used once, whatever the outcome."""
    request_id = request.session.pop(REQUEST_KEY, None)
    if not request_id:
        raise SamlRefused(gettext("That sign-in was not started here, or has expired. Start again."))
    if not request.POST.get("SAMLResponse"):
        raise SamlRefused(gettext("The identity provider's answer carried no SAML response."))
    acs_url = request.build_absolute_uri(acs_path(provider))
    auth = OneLogin_Saml2_Auth(_request_data(request), old_settings=settings_for(provider, request))
    try:
        auth.process_response(request_id=request_id)
    except (OneLogin_Saml2_Error, OneLogin_Saml2_ValidationError, ValueError) as exc:
        logger.warning("SAML response from %s refused: %s", provider, exc)
        raise SamlRefused(_REFUSED()) from None
    if auth.get_errors() or not auth.is_authenticated():
        logger.warning("SAML response from %s refused: %s %s", provider, auth.get_errors(),
                       auth.get_last_error_reason())
        raise SamlRefused(_REFUSED())
    document = OneLogin_Saml2_XML.to_etree(auth.get_last_response_xml())
    problem = _portal_checks(document, acs_url, request_id, request.build_absolute_uri(metadata_path(provider)))
    if problem:
        logger.warning("SAML response from %s refused: %s", provider, problem)
        raise SamlRefused(_REFUSED())
    _once(provider, auth.get_last_assertion_id(), auth.get_last_assertion_not_on_or_after())
    return {"sub": auth.get_nameid() or "", "email": _email(auth)}


def _REFUSED() -> str:  # noqa: N802 (one sentence, translated when said)
    return gettext("The identity provider's answer was refused: it is not a valid, signed SAML response for this "
                   "sign-in. Start again.")


def _portal_checks(document, acs_url: str, request_id: str, entity_id: str) -> str:
    """What python3-saml lets pass when it is absent: Destination, InResponseTo, an audience restriction."""
    if document.get("Destination") != acs_url:
        return f"Destination {document.get('Destination')!r} is not {acs_url}"
    if document.get("InResponseTo") != request_id:
        return f"InResponseTo {document.get('InResponseTo')!r} is not the request {request_id}"
    audiences = [node.text for node in OneLogin_Saml2_XML.query(
        document, "//saml:Assertion/saml:Conditions/saml:AudienceRestriction/saml:Audience")]
    if entity_id not in [(a or "").strip() for a in audiences]:
        return f"audiences {audiences} do not name {entity_id}"
    return ""


def _once(provider: IdentityProvider, assertion_id: str | None, not_on_or_after: int | None) -> None:
    """Remember the assertion id until it expires; a second time, refuse it."""
    if not assertion_id:
        raise SamlRefused(_REFUSED())
    now = timezone.now()
    expires = datetime.fromtimestamp(not_on_or_after, tz=UTC) if not_on_or_after else now + DEFAULT_MEMORY
    SeenAssertion.objects.filter(expires_at__lt=now - DEFAULT_MEMORY).delete()
    try:
        with transaction.atomic():
            SeenAssertion.objects.create(provider=provider, assertion_id=assertion_id[:255],
                                         expires_at=max(expires, now + timedelta(minutes=5)))
    except IntegrityError:
        logger.warning("SAML assertion %s from %s replayed", assertion_id, provider)
        raise SamlRefused(gettext("That answer of the identity provider was already used. Start again.")) from None


def _email(auth: OneLogin_Saml2_Auth) -> str:
    attributes = auth.get_attributes() or {}
    for name in EMAIL_ATTRIBUTES:
        values = attributes.get(name) or []
        if values and values[0]:
            return str(values[0])
    nameid = auth.get_nameid() or ""
    return nameid if "@" in nameid else ""


# --- registering a provider: the IdP's metadata, pasted or read from its URL ------------------------------

def parse_metadata(xml: str | bytes) -> dict:
    """Entity id, single sign-on URL (HTTP-Redirect) and signing certificate from IdP metadata."""
    try:
        found = OneLogin_Saml2_IdPMetadataParser.parse(
            xml, required_sso_binding=OneLogin_Saml2_Constants.BINDING_HTTP_REDIRECT)
    except Exception as exc:  # the parser raises bare Exceptions and lxml's errors
        logger.info("SAML metadata unreadable: %s", exc)
        raise MetadataRefused(gettext("The metadata is not SAML identity provider metadata the portal can read."))
    idp = found.get("idp") or {}
    certificate = idp.get("x509cert") or ((idp.get("x509certMulti") or {}).get("signing") or [""])[0]
    values = {"saml_entity_id": idp.get("entityId") or "",
              "saml_sso_url": (idp.get("singleSignOnService") or {}).get("url") or "",
              "saml_certificate": certificate}
    if not all(values.values()):
        raise MetadataRefused(gettext("The metadata lacks the entity id, an HTTP-Redirect single sign-on URL or a "
                                      "signing certificate."))
    body = OneLogin_Saml2_Utils.format_cert(certificate, heads=False)
    values["saml_certificate"] = f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----"
    return values


def read_metadata(url: str) -> dict:
    """The IdP's metadata read from ``url`` through the portal's client for user-given URLs, then parsed."""
    try:
        answer = outbound.request("GET", url, headers={"Accept": "application/samlmetadata+xml, application/xml"},
                                  timeout=10, max_bytes=METADATA_MAX_BYTES)
    except outbound.OutboundError as exc:
        raise MetadataRefused(gettext("The portal could not read %(url)s: %(reason)s")
                              % {"url": url, "reason": exc.reason}) from None
    if answer.status != 200:
        raise MetadataRefused(gettext("%(url)s did not answer with metadata: %(reason)s")
                              % {"url": url, "reason": outbound.describe_status(answer.status)})
    return parse_metadata(answer.body)
