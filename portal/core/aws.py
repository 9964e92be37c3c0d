"""The one factory for every boto3 client the portal uses.

It decides the endpoint (the embedded endpoint in the demo and tests, real AWS otherwise), the
region, the retry policy, and the credentials: an organization's clients act through the role that
organization's account trusts us with, assumed through STS with its external id.
"""
from __future__ import annotations

import ssl
import threading
from datetime import timedelta
from urllib.parse import urlsplit

import boto3
import urllib3
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError
from django.conf import settings
from django.utils import timezone

from portal.core import outbound
from portal.core.audit import recording as audit
from portal.core.metrics.instruments import watch_aws_client

_lock = threading.Lock()
_credentials: dict[tuple[str, str], dict] = {}


class AwsError(Exception):
    """An AWS call failed; ``code`` is AWS's error code (AccessDenied, Throttling, …) when known."""

    def __init__(self, message: str, code: str = "", retryable: bool = False):
        super().__init__(message)
        self.code = code
        self.retryable = retryable

    @property
    def unreachable(self) -> bool:
        """The endpoint could not be reached or did not answer (refused, reset, timed out): retryable like a
        throttle, but not one, and never to be reported as one."""
        return self.code in UNREACHABLE_CODES


# botocore's exceptions (translate() keeps their class name as the code) for an endpoint that did not answer.
UNREACHABLE_CODES = frozenset(
    {"EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError",
     "ConnectionError", "HTTPClientError", "ProxyConnectionError"}
)
RETRYABLE_CODES = frozenset(
    {"Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException",
     "ServiceUnavailable", "InternalFailure", "InternalError", "RequestTimeout"}
)


def translate(exc: Exception) -> AwsError:
    """Turn botocore's exceptions into the portal's own, keeping AWS's code and message."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = error.get("Code", "")
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        message = error.get("Message") or str(exc)
        return AwsError(f"{code}: {message}" if code else message, code=code,
                        retryable=code in RETRYABLE_CODES or status >= 500)
    if isinstance(exc, (BotoCoreError, ResponseParserError)):
        # Connection trouble, or a 5xx whose body is not AWS's XML/JSON (a proxy's HTML error page):
        # both are transient. ResponseParserError is not a BotoCoreError, so it is named here.
        return AwsError(str(exc).splitlines()[0][:500] if str(exc) else type(exc).__name__,
                        code=type(exc).__name__, retryable=True)
    return AwsError(str(exc))


# What the portal's AWS wrappers catch and hand to translate().
AWS_EXCEPTIONS = (ClientError, BotoCoreError, ResponseParserError)


def _config(timeouts: tuple[float, float] = (5, 30), max_attempts: int | None = None) -> Config:
    return Config(
        retries={"mode": "standard", "max_attempts": max_attempts or settings.AWS_MAX_ATTEMPTS},
        connect_timeout=timeouts[0],
        read_timeout=timeouts[1],
    )


def _base_kwargs(region: str | None, config: Config | None = None) -> dict:
    kwargs = {"region_name": region or settings.AWS_DEFAULT_REGION, "config": config or _config()}
    if settings.AWS_ENDPOINT_URL:
        kwargs["endpoint_url"] = settings.AWS_ENDPOINT_URL
    return kwargs


def _assumed(role_arn: str, external_id: str, region: str | None, config: Config | None = None) -> dict:
    key = (role_arn, external_id)
    with _lock:
        cached = _credentials.get(key)
        if cached and cached["Expiration"] - timedelta(minutes=5) > timezone.now():
            return cached
    sts = boto3.client("sts", **_base_kwargs(region, config))  # as bounded as the client it is for
    watch_aws_client(sts)
    params = {"RoleArn": role_arn, "RoleSessionName": settings.AWS_ROLE_SESSION_NAME, "DurationSeconds": 3600}
    if external_id:
        params["ExternalId"] = external_id
    try:
        creds = sts.assume_role(**params)["Credentials"]
    except (ClientError, BotoCoreError) as exc:
        raise translate(exc) from exc
    with _lock:
        _credentials[key] = creds
    return creds


def client(service: str, organization=None, region: str | None = None, *, endpoint_url: str | None = None,
           static_keys: tuple[str, str] | None = None, timeouts: tuple[float, float] | None = None,
           max_attempts: int | None = None):
    """A boto3 client for ``service``; acting in ``organization``'s account when it has a role.
    ``endpoint_url`` and ``static_keys`` point one client at S3-compatible storage of the portal's own
    (health push bodies on MinIO) without moving the other clients; ``timeouts`` (connect, read seconds) and
    ``max_attempts`` bound a client that a request waits on (the push store)."""
    region = region or (organization.home_region if organization is not None else None)
    config = _config(timeouts or (5, 30), max_attempts) if timeouts or max_attempts else None
    kwargs = _base_kwargs(region, config)
    if endpoint_url:
        kwargs["endpoint_url"] = endpoint_url
    if static_keys and static_keys[0]:
        kwargs.update(aws_access_key_id=static_keys[0], aws_secret_access_key=static_keys[1])
    role_arn = getattr(organization, "role_arn", "")
    if role_arn:
        creds = _assumed(role_arn, organization.external_id, region, config)
        kwargs.update(
            aws_access_key_id=creds["AccessKeyId"],
            aws_secret_access_key=creds["SecretAccessKey"],
            aws_session_token=creds["SessionToken"],
        )
    made = boto3.client(service, **kwargs)
    if organization is not None and getattr(organization, "pk", None) is not None:
        # Every action (not a read) made in an organization's account goes on the audit trail.
        made.meta.events.register("after-call", audit.aws_call_recorder(organization.pk, service))
    watch_aws_client(made)  # every call counted by operation and error code (/metrics)
    return made


def program_client(service: str, region: str | None = None):
    """A boto3 client acting through the program's own role (``AWS_PROGRAM_ROLE_ARN``; the portal's identity when
    unset): what the program buys for every organization (Capacity Block and training plan offerings)."""
    kwargs = _base_kwargs(region)
    if settings.AWS_PROGRAM_ROLE_ARN:
        creds = _assumed(settings.AWS_PROGRAM_ROLE_ARN, settings.AWS_PROGRAM_EXTERNAL_ID, region)
        kwargs.update(aws_access_key_id=creds["AccessKeyId"], aws_secret_access_key=creds["SecretAccessKey"],
                      aws_session_token=creds["SessionToken"])
    made = boto3.client(service, **kwargs)
    watch_aws_client(made)
    return made


def signing_credentials(organization):
    """Credentials of ``organization``'s assumed role, for signing a request ourselves (SigV4 to AMP).

    Only the organization's role: the portal's own identity never signs a request to a URL a user gave.
    """
    if organization is None or not getattr(organization, "role_arn", ""):
        raise AwsError("The organization has no IAM role for the portal to assume.", code="NoRole")
    creds = _assumed(organization.role_arn, organization.external_id, organization.home_region)
    return Credentials(creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])


def clear_credentials() -> None:
    with _lock:
        _credentials.clear()


# AWS hosts that are not botocore APIs: an Amazon Managed Grafana workspace's HTTP API, an EKS cluster's
# Kubernetes API server. With the embedded endpoint they are reached through it, at /_aws/<host>/.
SERVICE_PREFIX = "/_aws/"


def service_url(host_or_url: str) -> str:
    """The URL to call for an AWS-run host (``g-1.grafana-workspace.<region>.amazonaws.com`` or an https URL).

    Real AWS: ``https://<host><path>``. With ``AWS_ENDPOINT_URL``: ``<endpoint>/_aws/<host><path>``, where the
    embedded endpoint answers for those hosts (``sandbox/aws/moto_http.py``)."""
    text = host_or_url.strip()
    parts = urlsplit(text if "://" in text else f"https://{text}")
    if parts.scheme != "https" or not parts.hostname:
        raise AwsError(f"not an https AWS address: {host_or_url!r}")
    path = parts.path.rstrip("/")
    if settings.AWS_ENDPOINT_URL:
        return f"{settings.AWS_ENDPOINT_URL.rstrip('/')}{SERVICE_PREFIX}{parts.netloc}{path}"
    return f"https://{parts.netloc}{path}"


def service_request(method: str, url: str, *, body: bytes | None = None, headers: dict | None = None,
                    timeout: float = 20, ca_data: str | None = None):
    """One request to a :func:`service_url` address; an ``outbound.Answer`` or an ``outbound.OutboundError``.

    The embedded endpoint is the operator's own, called as boto3 calls it (no address guard); AWS hosts go
    through the guarded client, and an EKS API server (``ca_data``: the cluster's certificate authority, PEM)
    is verified against its own authority instead of the public ones."""
    endpoint = (settings.AWS_ENDPOINT_URL or "").rstrip("/")
    if not endpoint or not url.startswith(endpoint + SERVICE_PREFIX):
        if ca_data is None:
            return outbound.request(method, url, body=body, headers=headers, timeout=timeout)
        target = outbound.resolve(url)
        context = ssl.create_default_context(cadata=ca_data)
        pool = urllib3.HTTPSConnectionPool(target.addresses[0], target.port, ssl_context=context,
                                           server_hostname=target.host, assert_hostname=target.host,
                                           timeout=timeout, retries=False, maxsize=1)
        path = target.path
    else:
        pool = urllib3.PoolManager(timeout=timeout, retries=False)
        path = url
    try:
        response = pool.request(method, path, body=body, headers={"User-Agent": "geniac-portal", **(headers or {})},
                                redirect=False)
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise outbound.OutboundError(f"{outbound.UNREACHABLE} ({type(exc).__name__})") from None
    finally:
        pool.clear() if isinstance(pool, urllib3.PoolManager) else pool.close()
    return outbound.Answer(status=response.status, body=response.data, headers=dict(response.headers.items()))
