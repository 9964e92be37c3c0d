"""Refuse a protected action (``policy.PROTECTED``) without a recent second factor, when the program requires one
(``SECOND_FACTOR_REQUIRED``, on by default in production).

Pages: the session must have been verified recently enough; otherwise the person is sent to set up or confirm a
factor (htmx: ``HX-Redirect``), and comes back to the page. The API: a session verified as above, or, for a
request made with an API token, a current code of the person's authenticator (or a recovery code) in the
``X-Second-Factor`` header, good once, or the token confirmed in the browser recently enough (``tokens``: the way
for a person whose only factor is a passkey). Refusals answer 403 with ``code: second_factor_required``.
"""
from __future__ import annotations

from django.conf import settings
from django.http import HttpResponseRedirect, JsonResponse
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext
from rest_framework.exceptions import APIException
from rest_framework.request import Request

from portal.core.audit.auth import AuditedTokenAuthentication
from portal.core.audit.models import AuditKind
from portal.core.audit.recording import customer_organization_id, record
from portal.core.factors import devices, policy, tokens

HEADER = "HTTP_X_SECOND_FACTOR"


class SecondFactorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if not settings.SECOND_FACTOR_REQUIRED or request.resolver_match is None:
            return None
        level = policy.requirement(request.resolver_match.view_name, request.method)
        if level is None:
            return None
        api = request.path.startswith("/api/")
        user, by_token = request.user, False
        if api and not user.is_authenticated:
            try:
                authenticated = AuditedTokenAuthentication().authenticate(Request(request))
            except APIException:
                return None  # the view answers a bad token itself
            if authenticated is None:
                return None
            user, by_token = authenticated[0], True
        if not user.is_authenticated:
            return None  # the view refuses anonymous requests
        if not by_token and policy.session_satisfies(request.session, level):
            return None
        if by_token and tokens.satisfies(authenticated[1], level):
            return None  # confirmed in the browser with a second factor, recently enough (``tokens``)
        if by_token and request.META.get(HEADER):
            device, kind = devices.verify(user, request.META[HEADER])
            record(AuditKind.SECOND_FACTOR, request=request, user=user,
                   organization_id=customer_organization_id(user), method=kind or "code",
                   target=request.path, outcome="verified" if device else "refused")
            if device is not None:
                return None
        return self.refuse(request, user, level, api, by_token)

    def refuse(self, request, user, level: str, api: bool, by_token: bool):
        enrolled = devices.has_factor(user)
        if api:
            if not enrolled:
                detail = gettext("This action needs a second factor: set one up at %(url)s first.") % {
                    "url": request.build_absolute_uri(reverse("factors:setup"))}
            elif by_token:
                detail = gettext("This action needs a current code from your authenticator in the "
                                 "X-Second-Factor header, or this token confirmed with your second factor "
                                 "(a passkey too) at %(url)s.") % {
                    "url": request.build_absolute_uri(reverse("factors:api_tokens"))}
            else:
                detail = gettext("This action needs a recent second factor: confirm it at %(url)s.") % {
                    "url": request.build_absolute_uri(reverse("factors:verify"))}
            return JsonResponse({"detail": detail, "code": "second_factor_required"}, status=403)
        back = request.get_full_path() if request.method == "GET" else (request.META.get("HTTP_REFERER") or "/")
        target = reverse("factors:verify" if enrolled else "factors:setup")
        url = f"{target}?{urlencode({'next': back, 'level': level})}"
        if getattr(request, "htmx", False):
            response = HttpResponseRedirect(url)
            response.status_code = 200
            response["HX-Redirect"] = url
            return response
        return HttpResponseRedirect(url)
