"""A software WebAuthn authenticator for the passkey tests: a P-256 key made with `cryptography`, its COSE public
key and authenticator data built byte by byte as the WebAuthn specification lays them out, so py_webauthn's
verification runs for real on what it answers (attestation format "none", assertions signed with ES256)."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import struct

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

UP, UV, AT = 0x01, 0x04, 0x40


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SoftwareAuthenticator:
    def __init__(self, origin: str = "http://testserver", rp_id: str = "testserver"):
        self.origin, self.rp_id = origin, rp_id
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(32)
        self.sign_count = 0

    def cose_public_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        # COSE_Key: kty EC2 (2), alg ES256 (-7), crv P-256 (1), x, y.
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"),
                            -3: numbers.y.to_bytes(32, "big")})

    def _client_data(self, kind: str, challenge: str, origin: str | None) -> bytes:
        return json.dumps({"type": kind, "challenge": challenge, "origin": origin or self.origin,
                           "crossOrigin": False}).encode()

    def _rp_hash(self, rp_id: str | None) -> bytes:
        return hashlib.sha256((rp_id or self.rp_id).encode()).digest()

    def create(self, options: dict, *, origin: str | None = None, rp_id: str | None = None) -> dict:
        """What navigator.credentials.create answers for ``options`` (the portal's JSON)."""
        client_data = self._client_data("webauthn.create", options["challenge"], origin)
        attested = (bytes(16) + struct.pack(">H", len(self.credential_id)) + self.credential_id
                    + self.cose_public_key())
        auth_data = self._rp_hash(rp_id) + bytes([UP | UV | AT]) + struct.pack(">I", self.sign_count) + attested
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        raw = b64url(self.credential_id)
        return {"id": raw, "rawId": raw, "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation),
                             "transports": ["internal"]}}

    def get(self, options: dict, *, origin: str | None = None, count: int | None = None,
            key: ec.EllipticCurvePrivateKey | None = None) -> dict:
        """What navigator.credentials.get answers: an assertion signed over authenticator data and the client
        data's hash, the counter moved on by one (or set to ``count``)."""
        self.sign_count = self.sign_count + 1 if count is None else count
        client_data = self._client_data("webauthn.get", options["challenge"], origin)
        auth_data = self._rp_hash(None) + bytes([UP | UV]) + struct.pack(">I", self.sign_count)
        signature = (key or self.key).sign(auth_data + hashlib.sha256(client_data).digest(),
                                           ec.ECDSA(hashes.SHA256()))
        raw = b64url(self.credential_id)
        return {"id": raw, "rawId": raw, "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                             "signature": b64url(signature)}}
