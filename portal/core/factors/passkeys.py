"""Passkeys (WebAuthn) as a second factor, with py_webauthn verifying every ceremony.

Registering: the portal offers options with a fresh challenge (kept in the session), the browser's authenticator
makes a credential, and the attestation is verified (challenge, origin, relying party, user presence) before its
public key is kept. Confirming: options with a fresh challenge and the person's own credentials, and the assertion
verified against the kept public key, its signature counter required to move forward. A challenge is good for
one answer. The relying party is the portal's host (``WEBAUTHN_RP_ID`` overrides it behind a proxy), the origin
the address the browser used.
"""
from __future__ import annotations

import secrets

from django.conf import settings
from django.db import transaction
from django.http.request import split_domain_port
from django.utils import timezone
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    AuthenticatorTransport,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from portal.core import json_input
from portal.core.factors.models import Passkey

REGISTER_KEY = "passkey_register_challenge"
VERIFY_KEY = "passkey_verify_challenge"
NAME_LIMIT = 100


class PasskeyRefused(Exception):
    """The browser's answer was not accepted; the message says why (for the log and the audit trail)."""


def relying_party(request) -> tuple[str, str]:
    """The relying party id and the origin the browser must have used."""
    host = request.get_host()
    return settings.WEBAUTHN_RP_ID or split_domain_port(host)[0], f"{request.scheme}://{host}"


def _descriptors(user) -> list[PublicKeyCredentialDescriptor]:
    out = []
    for key in Passkey.objects.filter(user=user):
        transports = []
        for value in key.transports or []:
            try:
                transports.append(AuthenticatorTransport(value))
            except ValueError:
                continue
        out.append(PublicKeyCredentialDescriptor(id=base64url_to_bytes(key.credential_id),
                                                 transports=transports or None))
    return out


def _user_handle(user) -> bytes:
    """A stable handle that names nobody (WebAuthn's user.id must not be personal data)."""
    return f"portal-user-{user.pk}".encode()


def registration_options(request) -> str:
    """Options for ``navigator.credentials.create`` (JSON), the challenge kept in the session."""
    user = request.user
    rp_id, _origin = relying_party(request)
    options = generate_registration_options(
        rp_id=rp_id, rp_name=settings.WEBAUTHN_RP_NAME, user_id=_user_handle(user),
        user_name=user.get_username(), user_display_name=user.get_full_name() or user.get_username(),
        challenge=secrets.token_bytes(32), exclude_credentials=_descriptors(user),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED, user_verification=UserVerificationRequirement.PREFERRED),
    )
    request.session[REGISTER_KEY] = bytes_to_base64url(options.challenge)
    return options_to_json(options)


def register(request, credential: dict | str, name: str) -> Passkey:
    """Verify the attestation the browser sent and keep the passkey (or :class:`PasskeyRefused`)."""
    challenge = request.session.pop(REGISTER_KEY, None)
    if not challenge:
        raise PasskeyRefused("no registration was started in this session")
    rp_id, origin = relying_party(request)
    try:
        verified = verify_registration_response(credential=credential, expected_challenge=base64url_to_bytes(
            challenge), expected_rp_id=rp_id, expected_origin=origin)
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        raise PasskeyRefused(str(exc) or type(exc).__name__) from exc
    credential_id = bytes_to_base64url(verified.credential_id)
    if Passkey.objects.filter(credential_id=credential_id).exists():
        raise PasskeyRefused("this passkey is registered already")
    transports = _transports(credential)
    return Passkey.objects.create(user=request.user, name=(name or "").strip()[:NAME_LIMIT] or "passkey",
                                  credential_id=credential_id, public_key=verified.credential_public_key,
                                  sign_count=verified.sign_count, transports=transports)


def _transports(credential: dict | str) -> list[str]:
    try:
        data = json_input.loads(credential) if isinstance(credential, str) else credential
        values = (data.get("response") or {}).get("transports") or []
    except (ValueError, AttributeError):
        return []
    return [str(v)[:20] for v in values if isinstance(v, str)][:8]


def authentication_options(request) -> str:
    """Options for ``navigator.credentials.get`` naming the person's own passkeys (JSON)."""
    rp_id, _origin = relying_party(request)
    options = generate_authentication_options(
        rp_id=rp_id, challenge=secrets.token_bytes(32), allow_credentials=_descriptors(request.user),
        user_verification=UserVerificationRequirement.PREFERRED)
    request.session[VERIFY_KEY] = bytes_to_base64url(options.challenge)
    return options_to_json(options)


def verify(request, credential: dict | str) -> Passkey:
    """Verify an assertion by one of the person's passkeys; the signature counter must move forward."""
    challenge = request.session.pop(VERIFY_KEY, None)
    if not challenge:
        raise PasskeyRefused("no confirmation was started in this session")
    try:
        data = json_input.loads(credential) if isinstance(credential, str) else dict(credential)
        credential_id = str(data.get("rawId") or data.get("id") or "")
    except (ValueError, TypeError) as exc:
        raise PasskeyRefused("the answer is not a credential") from exc
    rp_id, origin = relying_party(request)
    with transaction.atomic():
        key = Passkey.objects.select_for_update().filter(user=request.user, credential_id=credential_id).first()
        if key is None:
            raise PasskeyRefused("not one of this person's passkeys")
        try:
            verified = verify_authentication_response(
                credential=data, expected_challenge=base64url_to_bytes(challenge), expected_rp_id=rp_id,
                expected_origin=origin, credential_public_key=bytes(key.public_key),
                credential_current_sign_count=key.sign_count)
        except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
            raise PasskeyRefused(str(exc) or type(exc).__name__) from exc
        key.sign_count, key.last_used_at = verified.new_sign_count, timezone.now()
        key.save(update_fields=["sign_count", "last_used_at"])
    return key
