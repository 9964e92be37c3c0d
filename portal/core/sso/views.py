"""Signing in through an identity provider: the address decides the provider; the provider sends the person back
to the callback (OpenID Connect) or posts its answer to the assertion consumer route (SAML), which signs them in
(or says why not). All are reached before signing in; the SAML metadata is public (it names only the portal's own
addresses)."""
from __future__ import annotations

import logging

from authlib.integrations.base_client import OAuthError
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_not_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext
from django.views import View
from django.views.decorators.csrf import csrf_exempt
from joserfc.errors import JoseError
from requests import RequestException

from portal.core.audit.models import AuditKind
from portal.core.audit.recording import record
from portal.core.sso import saml, services
from portal.core.sso.models import IdentityProvider, Protocol

logger = logging.getLogger(__name__)

SESSION_KEY = "sso_provider"
NEXT_KEY = "sso_next"
BACKEND = "portal.core.sso.backends.PasswordPolicyBackend"


def _refuse(request, message: str, provider: IdentityProvider | None = None):
    record(AuditKind.SIGN_IN_FAILED, request=request, method=provider.method if provider else "sso",
           outcome="refused", target=message[:500])
    messages.error(request, message)
    return redirect("login")


@method_decorator(login_not_required, name="dispatch")
class StartView(View):
    """POST an e-mail address: off to the identity provider that owns its domain."""

    def post(self, request):
        email = request.POST.get("email", "").strip()
        provider = services.provider_for_email(email)
        if provider is None:
            messages.error(request, gettext("No identity provider signs in addresses of that domain: "
                                            "sign in with your password."))
            return redirect("login")
        target = request.POST.get("next") or ""
        request.session[SESSION_KEY] = provider.pk
        request.session[NEXT_KEY] = target if url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()) else ""
        if provider.protocol == Protocol.SAML:
            try:
                return redirect(saml.login_redirect(provider, request))
            except ValueError as exc:  # a certificate that no longer reads; the registration checks it
                logger.warning("SAML provider %s unusable: %s", provider, exc)
                return _refuse(request, gettext("%(provider)s is not set up right: ask its administrator.")
                               % {"provider": provider.name}, provider)
        try:
            return services.client(provider).authorize_redirect(
                request, request.build_absolute_uri(reverse("sso:callback")), login_hint=email)
        except services.OutboundRefused as exc:
            return _refuse(request, _unreachable(provider, exc), provider)
        except (OAuthError, RequestException, ValueError, KeyError):
            return _refuse(request, gettext("%(provider)s cannot be reached right now. Try again in a minute.")
                           % {"provider": provider.name}, provider)


def _unreachable(provider: IdentityProvider, exc: services.OutboundRefused) -> str:
    """The portal's own sentence for a call to the provider that was refused or failed (never its answer)."""
    return gettext("The portal could not call %(provider)s: %(reason)s") % {"provider": provider.name,
                                                                          "reason": exc.reason}


@method_decorator(login_not_required, name="dispatch")
class CallbackView(View):
    """The provider's answer: the code is exchanged (with the PKCE verifier), the ID token checked (signature,
    issuer, audience, expiry, nonce), and the person signed in by the rules of ``services.sign_in``."""

    def get(self, request):
        provider = IdentityProvider.objects.filter(pk=request.session.get(SESSION_KEY), enabled=True,
                                                   protocol=Protocol.OIDC).first()
        if provider is None:
            return _refuse(request, gettext("That sign-in was not started here, or has expired. Start again."))
        try:
            token = services.client(provider).authorize_access_token(request)
        except services.OutboundRefused as exc:
            return _refuse(request, _unreachable(provider, exc), provider)
        except (OAuthError, JoseError, RequestException, ValueError, KeyError) as exc:
            # The provider's own words (an OAuth error's description) go to the log, not to the page.
            logger.warning("sign-in answer of %s refused: %s %s", provider, type(exc).__name__, exc)
            return _refuse(request, gettext("The identity provider's answer was refused (%(reason)s). Start again.")
                           % {"reason": type(exc).__name__}, provider)
        claims = token.get("userinfo") or {}
        return _signed_in(request, provider, claims, token.get("refresh_token", ""))


def _signed_in(request, provider: IdentityProvider, claims: dict, refresh_token: str = ""):
    try:
        user = services.sign_in(provider, claims, refresh_token)
    except services.SignInRefused as exc:
        return _refuse(request, str(exc), provider)
    target = request.session.pop(NEXT_KEY, "") or reverse("home")
    request.session.pop(SESSION_KEY, None)
    user.sso_method = provider.method
    login(request, user, backend=BACKEND)
    return redirect(target)


SAML_PROVIDERS = IdentityProvider.objects.filter(protocol=Protocol.SAML, enabled=True)


@method_decorator(login_not_required, name="dispatch")
class SamlMetadataView(View):
    """The portal's service provider metadata for one SAML provider, for its administrator to load at the IdP."""

    def get(self, request, pk: int):
        provider = get_object_or_404(SAML_PROVIDERS.exclude(saml_certificate=""), pk=pk)
        try:
            document = saml.metadata(provider, request)
        except ValueError:
            return HttpResponse(status=404)
        return HttpResponse(document, content_type="application/samlmetadata+xml")


@method_decorator([login_not_required, csrf_exempt], name="dispatch")
class SamlConsumerView(View):
    """The assertion consumer: the IdP's answer, posted by the person's browser (so no CSRF token; the answer's
    signature, its InResponseTo bound to this session's request and the assertion id used once stand in). A POST
    that came without the session cookie is shown a page that posts it again from this origin, once."""

    def post(self, request, pk: int):
        provider = SAML_PROVIDERS.filter(pk=pk).first()
        if (provider is not None and settings.SESSION_COOKIE_NAME not in request.COOKIES
                and request.POST.get("SAMLResponse") and not request.POST.get("continued")):
            # The IdP's page posted here across sites, so the browser kept the session cookie (SameSite=Lax)
            # back: the same answer is posted again from the portal's own page, with the cookie.
            return render(request, "sso/saml_continue.html",
                          {"saml_response": request.POST["SAMLResponse"], "action": request.path})
        if provider is None or request.session.get(SESSION_KEY) != provider.pk:
            request.session.pop(saml.REQUEST_KEY, None)
            return _refuse(request, gettext("That sign-in was not started here, or has expired. Start again."),
                           provider)
        try:
            claims = saml.consume(provider, request)
        except saml.SamlRefused as exc:
            return _refuse(request, str(exc), provider)
        return _signed_in(request, provider, claims)
