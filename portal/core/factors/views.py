"""Setting up a second factor, confirming it, and the person's own factors. Each view reads only the signed-in
person's own devices (a person's factors are theirs alone; staff reset them in the admin, recorded)."""
from __future__ import annotations

import segno
from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import gettext
from django.views import View

from portal.core.audit.models import AuditKind
from portal.core.audit.recording import customer_organization_id, record
from portal.core.factors import devices, policy
from portal.core.factors.forms import CodeForm
from portal.core.factors.models import Passkey


def safe_next(request, target: str) -> str:
    """Where to go once confirmed: a page of this site only."""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                       require_https=request.is_secure()):
        return target
    return "/"


def _next(request) -> str:
    return safe_next(request, request.POST.get("next") or request.GET.get("next") or "/")


def _record(request, method: str, outcome: str) -> None:
    record(AuditKind.SECOND_FACTOR, request=request, organization_id=customer_organization_id(request.user),
           method=method, outcome=outcome)


class SetupView(View):
    """Add an authenticator: scan the code (or type the key), confirm with a code, keep the recovery codes."""

    template_name = "factors/setup.html"

    def context(self, request, form):
        device = devices.pending_authenticator(request.user)
        qr = segno.make(device.config_url, error="m")
        return {"form": form, "device": device, "key": device.key, "config_url": device.config_url,
                "qr_svg": qr.svg_inline(scale=4, dark="#111", light="#fff"), "next": _next(request),
                "enrolled": devices.has_factor(request.user)}

    def dispatch(self, request, *args, **kwargs):
        """A person who has a factor confirms it before adding another (a password alone adds none)."""
        if devices.has_factor(request.user) and not policy.session_satisfies(request.session, policy.FRESH):
            return redirect(f"{reverse('factors:verify')}?{urlencode({'next': request.get_full_path()})}")
        return super().dispatch(request, *args, **kwargs)

    def get(self, request):
        return render(request, self.template_name, self.context(request, CodeForm()))

    def post(self, request):
        form = CodeForm(request.POST)
        device = devices.pending_authenticator(request.user)
        if form.is_valid() and device.verify_token(form.cleaned_data["code"].replace(" ", "")):
            device.confirmed = True
            device.save(update_fields=["confirmed"])
            codes = devices.new_recovery_codes(request.user)
            policy.mark_verified(request.session)
            _record(request, "totp", "enrolled")
            return render(request, "factors/recovery_codes.html", {"codes": codes, "next": _next(request)})
        form.add_error("code", gettext("That code is not the one your authenticator shows now. Try the next one."))
        _record(request, "totp", "refused")
        return render(request, self.template_name, self.context(request, form), status=200)


class VerifyView(View):
    """Confirm the second factor for this session (sent here before a protected action)."""

    template_name = "factors/verify.html"

    def get(self, request):
        if not devices.has_factor(request.user):
            return redirect(f"{reverse('factors:setup')}?{request.GET.urlencode()}")
        return render(request, self.template_name, self.context(request, CodeForm()))

    def context(self, request, form) -> dict:
        return {"form": form, "next": _next(request), "passkey": devices.has_passkey(request.user),
                "authenticator": devices.has_authenticator(request.user)}

    def post(self, request):
        form = CodeForm(request.POST)
        device, kind = devices.verify(request.user, form.data.get("code", "")) if form.is_valid() else (None, "")
        if device is None:
            _record(request, "code", "refused")
            form.add_error(None, gettext("That code was not accepted. Use the code your authenticator shows now, "
                                         "or an unused recovery code."))
            return render(request, self.template_name, self.context(request, form))
        policy.mark_verified(request.session)
        _record(request, kind, "verified")
        messages.success(request, gettext("Second factor confirmed. You can now do what you asked."))
        return redirect(_next(request))


class FactorsView(View):
    """The person's own factors: whether an authenticator is set up, their passkeys, recovery codes left, new
    codes (and, once, the codes made with a first passkey)."""

    template_name = "factors/factors.html"

    def get(self, request):
        codes = request.session.pop(devices.CODES_SHOWN_ONCE, None)
        if codes:
            return render(request, "factors/recovery_codes.html", {"codes": codes, "next": request.path})
        return render(request, self.template_name, {
            "enrolled": devices.has_factor(request.user),
            "authenticator": devices.has_authenticator(request.user),
            "passkeys": Passkey.objects.filter(user=request.user),
            "recovery_left": devices.remaining_recovery_codes(request.user),
            "verified_at": policy.verified_at(request.session),
            "fresh": policy.session_satisfies(request.session, policy.FRESH)})

    def post(self, request):
        if not (devices.has_factor(request.user) and policy.session_satisfies(request.session, policy.FRESH)):
            messages.error(request, gettext("Confirm your second factor first."))
            return redirect(f"{reverse('factors:verify')}?next={reverse('factors:factors')}")
        codes = devices.new_recovery_codes(request.user)
        _record(request, "recovery code", "renewed")
        return render(request, "factors/recovery_codes.html", {"codes": codes, "next": request.path})
