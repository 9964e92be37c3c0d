"""Signing in through an identity provider: the address decides the provider; the provider sends the person back
to the callback, which signs them in (or says why not). Both are reached before signing in."""
from __future__ import annotations

from authlib.integrations.base_client import OAuthError
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_not_required
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext
from django.views import View
from joserfc.errors import JoseError
from requests import RequestException

from portal.core.audit.models import AuditKind
from portal.core.audit.recording import record
from portal.core.sso import services
from portal.core.sso.models import IdentityProvider

SESSION_KEY = "sso_provider"
NEXT_KEY = "sso_next"
BACKEND = "portal.core.sso.backends.PasswordPolicyBackend"


def _refuse(request, message: str, provider: IdentityProvider | None = None):
    record(AuditKind.SIGN_IN_FAILED, request=request, method=f"oidc:{provider.name}" if provider else "oidc",
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
        try:
            return services.client(provider).authorize_redirect(
                request, request.build_absolute_uri(reverse("sso:callback")), login_hint=email)
        except (OAuthError, RequestException, ValueError):
            return _refuse(request, gettext("%(provider)s cannot be reached right now. Try again in a minute.")
                           % {"provider": provider.name}, provider)


@method_decorator(login_not_required, name="dispatch")
class CallbackView(View):
    """The provider's answer: the code is exchanged (with the PKCE verifier), the ID token checked (signature,
    issuer, audience, expiry, nonce), and the person signed in by the rules of ``services.sign_in``."""

    def get(self, request):
        provider = IdentityProvider.objects.filter(pk=request.session.get(SESSION_KEY), enabled=True).first()
        if provider is None:
            return _refuse(request, gettext("That sign-in was not started here, or has expired. Start again."))
        try:
            token = services.client(provider).authorize_access_token(request)
        except (OAuthError, JoseError, RequestException, ValueError) as exc:
            return _refuse(request, gettext("The identity provider's answer was refused (%(reason)s). Start again.")
                           % {"reason": getattr(exc, "error", "") or type(exc).__name__}, provider)
        claims = token.get("userinfo") or {}
        try:
            user = services.sign_in(provider, claims, token.get("refresh_token", ""))
        except services.SignInRefused as exc:
            return _refuse(request, str(exc), provider)
        target = request.session.pop(NEXT_KEY, "") or reverse("home")
        request.session.pop(SESSION_KEY, None)
        user.sso_method = f"oidc:{provider.name}"
        login(request, user, backend=BACKEND)
        return redirect(target)
