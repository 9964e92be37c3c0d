"""Signing a person in through a provider, and noticing that a provider no longer knows them.

The rules: a provider signs in only addresses of the domains it owns; an organization's provider links or creates
the person as a customer of that organization and nothing more (never a lead SA, program manager or staff role,
and never an account that holds another role or another organization's); the program's provider signs in only
people whose accounts the portal already holds. A person the provider no longer knows (a refresh refused) is
signed out everywhere: the account is deactivated and its API tokens deleted.

Every call to a provider (its discovery document, token endpoint and keys, and the refresh that checks a person)
goes through the portal's client for user-given URLs (``portal.core.outbound``): https only, no private, loopback
or link-local address unless the operator lists the host, the address checked when the request is made and the
connection made to that address, short timeouts and a cap on the answer's size. authlib keeps the protocol (PKCE,
state, nonce, the ID token's signature); its HTTP goes through :class:`OutboundAdapter`.
"""
from __future__ import annotations

import base64
import logging
from urllib.parse import urlencode, urlsplit

import requests
import requests.adapters
import requests.structures
from authlib.integrations.django_client import DjangoOAuth2App, OAuth
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext
from knox.models import get_token_model

from portal.core import outbound
from portal.core.audit.models import AuditKind
from portal.core.audit.recording import record
from portal.core.choices import MembershipRole
from portal.core.models import Membership
from portal.core.sso.models import ExternalIdentity, IdentityDomain, IdentityProvider

logger = logging.getLogger(__name__)
SCOPE = "openid email profile offline_access"
TIMEOUT = 10.0
MAX_BYTES = 512 * 1024
# Headers requests adds that the portal's client sets itself (or must not pass on: it reads no compressed body).
DROPPED = {"host", "content-length", "accept-encoding", "connection"}


class OutboundRefused(requests.exceptions.ConnectionError):
    """A call to a provider that ``portal.core.outbound`` refused or that failed; ``reason`` is the portal's own
    sentence (safe to show), the rest is in the log."""

    def __init__(self, reason: str, request=None):
        super().__init__(reason, request=request)
        self.reason = reason


class OutboundAdapter(requests.adapters.BaseAdapter):
    """requests' transport replaced by ``portal.core.outbound``: what authlib sends, checked and sent there."""

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        body = request.body.encode() if isinstance(request.body, str) else request.body
        headers = {k: v for k, v in request.headers.items() if k.lower() not in DROPPED}
        limit = timeout if isinstance(timeout, (int, float)) else TIMEOUT
        try:
            answer = outbound.request(request.method, request.url, body=body, headers=headers, timeout=limit,
                                      max_bytes=MAX_BYTES)
        except outbound.OutboundError as exc:
            logger.warning("sign-in call %s %s refused: %s", request.method, urlsplit(request.url).netloc,
                           exc.reason)
            raise OutboundRefused(exc.reason, request=request) from None
        response = requests.Response()
        response.status_code, response._content, response.url = answer.status, answer.body, request.url
        response.headers = requests.structures.CaseInsensitiveDict(answer.headers)
        response.encoding, response.request, response.reason = "utf-8", request, ""
        return response

    def close(self) -> None:
        pass


def _through_outbound(session: requests.Session) -> requests.Session:
    session.trust_env = False
    adapter = OutboundAdapter()
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


class _OutboundApp(DjangoOAuth2App):
    def _get_session(self):
        return _through_outbound(super()._get_session())

    def _get_oauth_client(self, **metadata):
        return _through_outbound(super()._get_oauth_client(**metadata))


class _OAuth(OAuth):
    oauth2_client_cls = _OutboundApp


class SignInRefused(Exception):
    """The provider vouched for someone the portal will not sign in; the message is for that person."""


def provider_for_email(email: str) -> IdentityProvider | None:
    domain = (email or "").rpartition("@")[2].strip().lower()
    row = IdentityDomain.objects.select_related("provider").filter(domain=domain, provider__enabled=True).first()
    return row.provider if row else None


def client(provider: IdentityProvider):
    """authlib's client for one provider: discovery, PKCE (S256), state and nonce in the session; its HTTP through
    ``portal.core.outbound``."""
    oauth = _OAuth()
    return oauth.register(
        name=provider.slug, client_id=provider.client_id, client_secret=provider.client_secret,
        server_metadata_url=f"{provider.issuer.rstrip('/')}/.well-known/openid-configuration",
        client_kwargs={"scope": SCOPE, "code_challenge_method": "S256", "timeout": TIMEOUT},
    )


def sign_in(provider: IdentityProvider, claims: dict, refresh_token: str = ""):
    """The account the provider's ID token ``claims`` sign in (linked or created), or :class:`SignInRefused`."""
    subject, email = str(claims.get("sub") or ""), str(claims.get("email") or "").strip().lower()
    if not subject or not email:
        raise SignInRefused(gettext("The identity provider did not say who you are (no subject or e-mail)."))
    if claims.get("email_verified") is False:
        raise SignInRefused(gettext("The identity provider has not verified your e-mail address."))
    if not provider.domains.filter(domain=email.rpartition("@")[2]).exists():
        raise SignInRefused(gettext("%(provider)s does not sign in addresses of %(domain)s.")
                            % {"provider": provider.name, "domain": email.rpartition("@")[2]})
    with transaction.atomic():
        identity = ExternalIdentity.objects.select_for_update().filter(provider=provider, subject=subject).first()
        user = identity.user if identity else _account_for(provider, email)
        if provider.organization_id is not None:
            _only_a_customer_of(user, provider.organization_id)
            Membership.objects.get_or_create(user=user, organization_id=provider.organization_id,
                                             role=MembershipRole.CUSTOMER)
        if not user.is_active:
            user.is_active = True
            user.save(update_fields=["is_active"])
        identity = identity or ExternalIdentity(provider=provider, subject=subject, user=user)
        identity.refresh_token = refresh_token or identity.refresh_token
        identity.signed_in_at, identity.removed_at = timezone.now(), None
        identity.save()
    return user


def _account_for(provider: IdentityProvider, email: str):
    user_model = get_user_model()
    user = user_model.objects.filter(email__iexact=email).order_by("id").first()
    if user is not None:
        return user
    if provider.organization_id is None:
        raise SignInRefused(gettext("The portal holds no account for %(email)s: ask the program's staff.")
                            % {"email": email})
    username = email if not user_model.objects.filter(username=email).exists() else f"{email}#{provider.pk}"
    user = user_model(username=username[:150], email=email)
    user.set_unusable_password()
    user.save()
    return user


def _only_a_customer_of(user, organization_id: int) -> None:
    """An organization's provider never signs in an account that is more than that organization's customer."""
    other = Membership.objects.filter(user=user).exclude(organization_id=organization_id,
                                                         role__in=[MembershipRole.CUSTOMER, MembershipRole.ORG_ADMIN])
    if user.is_staff or user.is_superuser or getattr(user, "is_program_manager", False) or other.exists():
        raise SignInRefused(gettext("This account holds other roles in the portal: sign in with its password, "
                                    "or ask the program's staff."))


def password_refusal(user) -> IdentityProvider | None:
    """The provider that turned passwords off for the person (a customer of its organization), if any."""
    return IdentityProvider.objects.select_related("organization").filter(
        enabled=True, passwords_allowed=False, organization__memberships__user=user,
        organization__memberships__role=MembershipRole.CUSTOMER).order_by("pk").first()


def passwords_refused(user) -> bool:
    """Whether the person is a customer of an organization whose provider has turned passwords off."""
    return password_refusal(user) is not None


def check_identity(identity: ExternalIdentity) -> bool:
    """Ask the provider to refresh the person's token: refused means it no longer knows them, and they are
    signed out everywhere. Returns whether the person is still known. A provider that cannot be reached decides
    nothing."""
    if not identity.refresh_token:
        return True
    provider = identity.provider
    credentials = base64.b64encode(f"{provider.client_id}:{provider.client_secret}".encode()).decode()
    try:
        endpoint = client(provider).load_server_metadata()["token_endpoint"]
        answer = outbound.post(
            endpoint, body=urlencode({"grant_type": "refresh_token", "refresh_token": identity.refresh_token}).encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
                     "Authorization": f"Basic {credentials}"}, timeout=TIMEOUT, max_bytes=MAX_BYTES)
        body = answer.json()
        if not isinstance(body, dict):
            raise ValueError("not a JSON object")
    except outbound.OutboundError as exc:
        logger.warning("identity provider %s unreachable: %s", provider, exc.reason)
        return True
    except (requests.RequestException, ValueError, KeyError) as exc:
        logger.warning("identity provider %s unreachable: %s", provider, exc)
        return True
    identity.checked_at = timezone.now()
    if answer.status == 200:
        identity.refresh_token = body.get("refresh_token") or identity.refresh_token
        identity.save(update_fields=["refresh_token", "checked_at"])
        return True
    if body.get("error") == "invalid_grant":
        remove(identity)
        return False
    identity.save(update_fields=["checked_at"])
    return True


def remove(identity: ExternalIdentity) -> None:
    """The provider no longer knows this person: no session, no API token, no sign-in until it vouches again."""
    user = identity.user
    with transaction.atomic():
        identity.removed_at, identity.refresh_token = timezone.now(), ""
        identity.save(update_fields=["removed_at", "refresh_token", "checked_at"])
        if not user.external_identities.filter(removed_at__isnull=True).exists():
            user.is_active = False
            user.save(update_fields=["is_active"])
            get_token_model().objects.filter(user=user).delete()
            for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
                if str(session.get_decoded().get("_auth_user_id")) == str(user.pk):
                    session.delete()
    record(AuditKind.SIGN_OUT, user=user, organization_id=identity.provider.organization_id,
           method=identity.provider.method, outcome="removed at the provider")
