"""Passkeys in the browser: options for ``navigator.credentials`` (GET) and the credential it made (POST, JSON),
for registering one and for confirming the second factor with one; and removing one. Each view reads only the
signed-in person's own passkeys (another's answers 404); ``static/js/passkeys.js`` drives them."""
from __future__ import annotations

import logging

from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext
from django.views import View

from portal.core import json_input
from portal.core.audit.models import AuditKind
from portal.core.audit.recording import customer_organization_id, record
from portal.core.factors import devices, passkeys, policy
from portal.core.factors.models import Passkey
from portal.core.factors.views import safe_next

logger = logging.getLogger(__name__)


def _record(request, outcome: str, target: str = "") -> None:
    record(AuditKind.SECOND_FACTOR, request=request, organization_id=customer_organization_id(request.user),
           method="passkey", target=target, outcome=outcome)


def _options(options_json: str) -> HttpResponse:
    return HttpResponse(options_json, content_type="application/json")


def _body(request) -> dict:
    """The JSON the script posts; anything else (a form post) carries no credential."""
    if request.content_type != "application/json":
        return {}
    try:
        data = json_input.loads(request.body or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


class PasskeyRegisterView(View):
    """Register a passkey. With a factor already set up, only after confirming it recently (a stolen password
    alone must not add a factor)."""

    def refusal(self, request):
        if devices.has_factor(request.user) and not policy.session_satisfies(request.session, policy.FRESH):
            verify = f"{reverse('factors:verify')}?{urlencode({'next': reverse('factors:factors')})}"
            return JsonResponse({"detail": gettext("Confirm your second factor first."), "redirect": verify},
                                status=403)
        return None

    def get(self, request):
        return self.refusal(request) or _options(passkeys.registration_options(request))

    def post(self, request):
        refused = self.refusal(request)
        if refused is not None:
            return refused
        data = _body(request)
        first = not devices.has_factor(request.user)
        try:
            key = passkeys.register(request, data.get("credential") or {}, str(data.get("name") or ""))
        except passkeys.PasskeyRefused as exc:
            logger.info("passkey registration refused for %s: %s", request.user.pk, exc)
            _record(request, "refused", "registration")
            return JsonResponse({"detail": gettext("Your browser's passkey was not accepted. Try again.")},
                                status=400)
        policy.mark_verified(request.session)
        _record(request, "enrolled", f"passkey {key.name}")
        if first:
            request.session[devices.CODES_SHOWN_ONCE] = devices.new_recovery_codes(request.user)
        return JsonResponse({"redirect": reverse("factors:factors")})


class PasskeyVerifyView(View):
    """Confirm the second factor for this session with one of the person's passkeys."""

    def get(self, request):
        if not devices.has_passkey(request.user):
            return JsonResponse({"detail": gettext("You have no passkey.")}, status=404)
        return _options(passkeys.authentication_options(request))

    def post(self, request):
        data = _body(request)
        try:
            key = passkeys.verify(request, data.get("credential") or {})
        except passkeys.PasskeyRefused as exc:
            logger.info("passkey confirmation refused for %s: %s", request.user.pk, exc)
            _record(request, "refused")
            return JsonResponse({"detail": gettext("That passkey was not accepted. Try again, or use a code.")},
                                status=400)
        policy.mark_verified(request.session)
        _record(request, "verified", f"passkey {key.name}")
        return JsonResponse({"redirect": safe_next(request, str(data.get("next") or "/"))})


class PasskeyDeleteView(View):
    """Remove one of the person's own passkeys, after confirming a factor recently (recorded by the receiver)."""

    def post(self, request, pk: int):
        key = get_object_or_404(Passkey, pk=pk, user=request.user)
        if not policy.session_satisfies(request.session, policy.FRESH):
            return redirect(f"{reverse('factors:verify')}?{urlencode({'next': reverse('factors:factors')})}")
        key.delete()
        return redirect("factors:factors")
