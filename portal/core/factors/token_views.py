"""The person's API tokens in the browser: list, create (shown once), confirm with a recent second factor, and
revoke. Creating and confirming need a second factor confirmed in this session within the fresh window (a passkey
does it in the browser); each view reads only the signed-in person's own tokens (another's answers 404)."""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext
from django.views import View

from portal.core import submissions
from portal.core.factors import devices, policy, tokens

SHOWN_ONCE = "api_token_once"


def _needs_factor(request):
    """A redirect to confirm (or set up) a factor first, or None when this session's is fresh enough."""
    if not settings.SECOND_FACTOR_REQUIRED and not devices.has_factor(request.user):
        return None
    if devices.has_factor(request.user) and policy.session_satisfies(request.session, policy.FRESH):
        return None
    target = reverse("factors:verify" if devices.has_factor(request.user) else "factors:setup")
    messages.info(request, gettext("Confirm your second factor first: then create or confirm the API token."))
    return redirect(f"{target}?{urlencode({'next': reverse('factors:api_tokens'), 'level': policy.FRESH})}")


class ApiTokensView(View):
    template_name = "factors/api_tokens.html"

    def get(self, request):
        return render(request, self.template_name, {
            "tokens": tokens.own_tokens(request.user), "new_token": request.session.pop(SHOWN_ONCE, None),
            "fresh": policy.session_satisfies(request.session, policy.FRESH),
            "session_hours": settings.SECOND_FACTOR_SESSION_HOURS, "fresh_minutes": settings.SECOND_FACTOR_FRESH_MINUTES,
            "enrolled": devices.has_factor(request.user)})

    @submissions.once
    def post(self, request):
        refused = _needs_factor(request)
        if refused is not None:
            return refused
        instance, text = tokens.issue(request.user, request, method="browser, second factor confirmed")
        if devices.has_factor(request.user):
            tokens.confirm(instance, request)
        request.session[SHOWN_ONCE] = {"token": text, "expiry": instance.expiry.isoformat()}
        submissions.record(request, None, reverse("factors:api_tokens"))  # a token's key is no row id
        return redirect("factors:api_tokens")


class ApiTokenConfirmView(View):
    def post(self, request, key: str):
        token = tokens.own_token(request.user, key)
        if token is None:
            raise Http404
        refused = _needs_factor(request)
        if refused is not None:
            return refused
        tokens.confirm(token, request)
        messages.success(request, gettext("The API token %(key)s… may now do what needs a second factor.")
                         % {"key": token.token_key})
        return redirect("factors:api_tokens")


class ApiTokenRevokeView(View):
    def post(self, request, key: str):
        token = tokens.own_token(request.user, key)
        if token is None:
            raise Http404
        tokens.revoke(token, request)
        messages.success(request, gettext("The API token %(key)s… no longer works.") % {"key": token.token_key})
        return redirect("factors:api_tokens")
