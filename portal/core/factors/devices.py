"""The person's second factors: a TOTP authenticator (django-otp's ``TOTPDevice``), passkeys (``Passkey``,
confirmed in the browser: ``passkeys``) and recovery codes (django-otp's ``StaticDevice``, each code good once).
Every query here is of the signed-in person's own devices."""
from __future__ import annotations

import secrets

from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from portal.core.audit.models import AuditKind
from portal.core.audit.recording import customer_organization_id, record
from portal.core.factors.models import Passkey, TokenConfirmation

RECOVERY_CODES = 10
AUTHENTICATOR = "authenticator"
RECOVERY = "recovery codes"
# New recovery codes made with a first passkey wait here for the factors page, which shows them once (the browser
# registers a passkey with a script, and the codes are shown by the page it goes to next).
CODES_SHOWN_ONCE = "recovery_codes_once"


def has_factor(user) -> bool:
    return has_authenticator(user) or has_passkey(user)


def has_authenticator(user) -> bool:
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def has_passkey(user) -> bool:
    return Passkey.objects.filter(user=user).exists()


def pending_authenticator(user) -> TOTPDevice:
    """The authenticator being set up (unconfirmed), made once and shown until confirmed."""
    device = TOTPDevice.objects.filter(user=user, confirmed=False).order_by("id").first()
    return device or TOTPDevice.objects.create(user=user, name=AUTHENTICATOR, confirmed=False)


def new_recovery_codes(user) -> list[str]:
    """Replace the person's recovery codes with fresh ones, shown once."""
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name=RECOVERY, confirmed=True)
    # django-otp keeps a code in 16 characters: ten hex digits in two groups of five (40 bits each).
    codes = [f"{code[:5]}-{code[5:]}" for code in (secrets.token_hex(5) for _ in range(RECOVERY_CODES))]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=code) for code in codes)
    return codes


def verify(user, code: str) -> tuple[object | None, str]:
    """The device a code verifies (consumed: a TOTP step or a recovery code is good once), and which kind."""
    code = (code or "").strip().replace(" ", "")
    if not code:
        return None, ""
    for device in TOTPDevice.objects.filter(user=user, confirmed=True):
        if device.verify_token(code):
            return device, "totp"
    for device in StaticDevice.objects.filter(user=user, confirmed=True):
        if device.verify_token(code):
            return device, "recovery code"
    return None, ""


def remaining_recovery_codes(user) -> int:
    return StaticToken.objects.filter(device__user=user, device__confirmed=True).count()


def reset(user) -> None:
    """Staff resetting a person's factors: every authenticator, passkey and recovery code goes (each removal of an
    authenticator or passkey is recorded by ``receivers``; the reset itself is recorded here), and so do the API tokens'
    confirmations made with them."""
    TOTPDevice.objects.filter(user=user).delete()
    Passkey.objects.filter(user=user).delete()
    StaticDevice.objects.filter(user=user).delete()
    TokenConfirmation.objects.filter(token__user=user).delete()  # API tokens confirmed with those factors
    record(AuditKind.SECOND_FACTOR, organization_id=customer_organization_id(user), method="reset",
           target=f"second factors of {user.get_username()}", outcome="reset")
