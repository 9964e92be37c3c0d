"""Amazon SNS messages posted to the portal: signature, subscription confirmation and replay checks.

The observability stack's alert manager publishes to an SNS topic, and SNS posts each message to the
portal's endpoint (``POST /api/health/alerts/sns/``) without any credential the portal issued. What makes
a message trustworthy is its signature: SNS signs the canonical text of the message with the key of a
certificate it serves from ``https://sns.<region>.amazonaws.com/…pem``. So:

* the certificate URL must be https on ``sns.<region>.amazonaws.com`` (``HEALTH_SNS_CERT_HOSTS`` adds hosts
  for tests), fetched through the guarded client (``portal/core/outbound.py``) and cached by URL;
* SignatureVersion 1 is RSA with SHA-1, version 2 RSA with SHA-256, over the fields SNS names for each type;
* a message older than ``HEALTH_SNS_MAX_AGE_SECONDS`` (or from the future by more than that) is refused,
  and so is a message id already received (``SnsMessage``, unique): a captured message cannot be replayed;
* a ``SubscriptionConfirmation`` of a topic the portal knows is confirmed by fetching its ``SubscribeURL``
  (also an SNS host) through the guarded client.
"""
from __future__ import annotations

import base64
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from portal.core import json_input, outbound

logger = logging.getLogger(__name__)

SNS_HOST = re.compile(r"sns\.[a-z]{2}(-[a-z]+)+-\d\.amazonaws\.com(\.cn)?")
NOTIFICATION = "Notification"
CONFIRMATION = "SubscriptionConfirmation"
UNSUBSCRIBE = "UnsubscribeConfirmation"
# The fields SNS signs, in the order it signs them (https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html).
SIGNED_FIELDS = {
    NOTIFICATION: ("Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"),
    CONFIRMATION: ("Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"),
    UNSUBSCRIBE: ("Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"),
}
HASHES = {"1": hashes.SHA1, "2": hashes.SHA256}
CERT_CACHE_SECONDS = 24 * 3600


class MessageRefused(Exception):
    """The message is not accepted; ``status`` is the HTTP answer, ``reason`` the portal's own sentence."""

    def __init__(self, reason: str, status: int = 400) -> None:
        super().__init__(reason)
        self.reason, self.status = reason, status


@dataclass(frozen=True)
class Message:
    kind: str
    message_id: str
    topic_arn: str
    timestamp: datetime
    body: str
    subscribe_url: str = ""


def cert_host_allowed(host: str) -> bool:
    """SNS's own hosts (``sns.<region>.amazonaws.com``, one label for the region: a wildcard would also let
    ``sns.<bucket>.s3-website-<region>.amazonaws.com`` through, which anyone can serve a certificate from), plus
    the hosts the operator (a test) names in ``HEALTH_SNS_CERT_HOSTS``."""
    host = host.lower()
    return bool(SNS_HOST.fullmatch(host)) or host in getattr(settings, "HEALTH_SNS_CERT_HOSTS", [])


def _checked_url(url: str, what: str) -> str:
    parts = urlsplit(url or "")
    host = parts.hostname or ""
    extra = host in getattr(settings, "HEALTH_SNS_CERT_HOSTS", [])
    if not cert_host_allowed(host) or (parts.scheme != "https" and not extra):
        raise MessageRefused(f"the {what} is not an https URL on an SNS host", 403)
    return url


def string_to_sign(data: dict) -> bytes:
    """The canonical text SNS signs: ``name\\nvalue\\n`` for each signed field present, in order."""
    fields = SIGNED_FIELDS.get(data.get("Type", ""))
    if fields is None:
        raise MessageRefused(f"unknown SNS message type {str(data.get('Type'))[:40]!r}")
    return "".join(f"{name}\n{data[name]}\n" for name in fields if name in data).encode()


def certificate(url: str) -> x509.Certificate:
    """The signing certificate at ``url`` (an SNS host), fetched once a day through the guarded client."""
    _checked_url(url, "signing certificate URL")
    if not urlsplit(url).path.endswith(".pem"):
        raise MessageRefused("the signing certificate URL does not name a .pem file", 403)
    key = f"health:sns-cert:{url}"
    pem = cache.get(key)
    if pem is None:
        try:
            answer = outbound.request("GET", url, timeout=10, max_bytes=64 * 1024)
        except outbound.OutboundError as exc:
            raise MessageRefused(f"the signing certificate could not be fetched: {exc.reason}", 403) from None
        if answer.status != 200:
            raise MessageRefused("the signing certificate could not be fetched", 403)
        pem = answer.body
        cache.set(key, pem, CERT_CACHE_SECONDS)
    try:
        return x509.load_pem_x509_certificate(pem)
    except ValueError:
        raise MessageRefused("the signing certificate is not a PEM certificate", 403) from None


def verify(data: dict) -> Message:
    """Check the signature and the age of one posted message; raise ``MessageRefused`` otherwise."""
    version = str(data.get("SignatureVersion", ""))
    if version not in HASHES:
        raise MessageRefused("unsupported SignatureVersion (1 or 2)", 403)
    try:
        signature = base64.b64decode(data.get("Signature", ""), validate=True)
    except ValueError:
        raise MessageRefused("the signature is not base64", 403) from None
    text = string_to_sign(data)
    cert = certificate(str(data.get("SigningCertURL") or data.get("SigningCertUrl") or ""))
    try:
        cert.public_key().verify(signature, text, padding.PKCS1v15(), HASHES[version]())
    except (InvalidSignature, TypeError, ValueError):
        raise MessageRefused("the SNS signature does not verify", 403) from None
    stamp = parse_datetime(str(data.get("Timestamp", "")))
    if stamp is None or stamp.tzinfo is None:
        raise MessageRefused("the message has no valid Timestamp")
    max_age = timedelta(seconds=settings.HEALTH_SNS_MAX_AGE_SECONDS)
    if abs(timezone.now() - stamp) > max_age:
        raise MessageRefused("the message is older than the replay window", 400)
    return Message(kind=data["Type"], message_id=str(data.get("MessageId", ""))[:100],
                   topic_arn=str(data.get("TopicArn", ""))[:256], timestamp=stamp, body=str(data.get("Message", "")),
                   subscribe_url=str(data.get("SubscribeURL", "")))


def parse_body(raw: bytes) -> dict:
    try:
        data = json_input.loads(raw)
    except json_input.TooDeep as exc:
        raise MessageRefused(f"the body is {exc}") from None
    except (ValueError, UnicodeDecodeError):
        raise MessageRefused("the body is not JSON") from None
    if not isinstance(data, dict):
        raise MessageRefused("the body is not a JSON object")
    return data


def confirm(message: Message) -> None:
    """Confirm a subscription: GET its SubscribeURL (an SNS host) through the guarded client."""
    url = _checked_url(message.subscribe_url, "SubscribeURL")
    try:
        answer = outbound.request("GET", url, timeout=10, max_bytes=256 * 1024)
    except outbound.OutboundError as exc:
        raise MessageRefused(f"the subscription could not be confirmed: {exc.reason}", 502) from None
    if answer.status != 200:
        raise MessageRefused("the subscription could not be confirmed", 502)
    logger.info("confirmed the SNS subscription of %s", message.topic_arn)
