"""The person's second factors: a TOTP authenticator (django-otp's ``TOTPDevice``) and recovery codes (its
``StaticDevice``, each code good once). Every query here is of the signed-in person's own devices."""
from __future__ import annotations

import secrets

from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

RECOVERY_CODES = 10
AUTHENTICATOR = "authenticator"
RECOVERY = "recovery codes"


def has_factor(user) -> bool:
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


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
