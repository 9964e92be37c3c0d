"""The one HTTP client for URLs that users type (a cluster's Prometheus endpoint, a Slack webhook).

Such a URL is called by a worker inside the operator's network, so without care it reaches whatever
that network reaches: the instance metadata address, the database, an internal admin page. Here:

- https only; http only for hosts named in ``OUTBOUND_HTTP_HOSTS``;
- the host is resolved once (by the system's resolver, or by the name servers in
  ``OUTBOUND_DNS_SERVERS``) and refused when any address is loopback, link-local, private, shared,
  multicast, reserved or unspecified, unless the host is on ``OUTBOUND_ALLOWED_HOSTS``. No name is
  exempt by its shape: a name under ``amazonaws.com`` is whatever its owner makes it resolve to, so an
  AMP workspace behind a VPC endpoint (a private address) is called only once the operator lists its
  host. Addresses that carry an IPv4 address (IPv4-mapped, 6to4, Teredo, NAT64) are judged by it;
- the connection goes to the address that was checked (TLS still verifies the host name), so a
  second DNS answer cannot move it elsewhere;
- no redirects, short timeouts, a cap on the answer's size, no proxies from the environment.

Callers get an :class:`OutboundError` whose ``reason`` the portal wrote itself: it is safe to store and
show. The remote's own words (body, exception text) go to the log only, never to a page. A refused
connection, a timeout and a TLS failure share one sentence (``UNREACHABLE``): told apart on a page, they
would let a user map which ports answer inside the network. The log keeps which one it was.
"""
from __future__ import annotations

import fnmatch
import ipaddress
import logging
import re
import socket
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import certifi
import dns.exception
import dns.nameserver
import dns.resolver
import urllib3
from django.conf import settings

from portal.core import json_input
from portal.core.metrics.instruments import count_outbound_refusal

logger = logging.getLogger("portal.core.outbound")

# Amazon Managed Service for Prometheus data-plane endpoints, as AWS documents them: the IPv4 and the
# dual-stack (``.api.aws``) names, each with its FIPS variant. One region label, nothing deeper. The shape
# only says where to sign for (SigV4 region); it allows nothing.
AMP_HOST = re.compile(r"aps-workspaces(?:-fips)?\.(?P<region>[a-z]{2}(?:-[a-z]+){1,2}-\d{1,2})\.(?:amazonaws\.com|api\.aws)")
# NAT64's well-known prefix (RFC 6052): the last 32 bits are the IPv4 address the gateway calls.
NAT64 = ipaddress.ip_network("64:ff9b::/96")
DEFAULT_TIMEOUT = 10.0
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
DNS_LIFETIME = 5.0
CHUNK = 64 * 1024
PRIVATE = "The address is a private, local or reserved network address, which the portal does not call."
UNREACHABLE = "The host could not be reached: no connection, no answer in time, or no verified https."


class OutboundError(Exception):
    """The request was refused or failed. ``reason`` is the portal's own sentence; ``status`` the
    HTTP status the remote answered, when it answered."""

    def __init__(self, reason: str, status: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.status = status
        count_outbound_refusal(reason)  # by a fixed word, never the URL (/metrics)


@dataclass
class Target:
    scheme: str
    host: str
    port: int
    path: str
    addresses: list[str] = field(default_factory=list)


@dataclass
class Answer:
    status: int
    body: bytes
    headers: dict

    def json(self):
        try:
            return json_input.loads(self.body)
        except ValueError:
            raise OutboundError("The answer was not JSON.", self.status) from None


def _setting(name: str, default):
    return getattr(settings, name, default)


def _matches(host: str, patterns) -> bool:
    host = host.lower().rstrip(".")
    return any(fnmatch.fnmatchcase(host, str(p).lower()) for p in patterns)


def is_allowed_host(host: str) -> bool:
    """An operator let this host be called whatever it resolves to (``OUTBOUND_ALLOWED_HOSTS`` only)."""
    return _matches(host, _setting("OUTBOUND_ALLOWED_HOSTS", []))


def amp_region(host: str) -> str | None:
    """The region of an AMP workspace host name, or None when the name is not exactly one."""
    match = AMP_HOST.fullmatch(host.lower().rstrip("."))
    return match["region"] if match else None


def is_amp_host(host: str) -> bool:
    return amp_region(host) is not None


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address] | None:
    """The IPv4 addresses a transition address leads to (None for a plain IPv6 address): traffic to
    it ends at those, through a relay or a gateway, so they are what the decision is about."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)  # the Teredo server and the client's own address
    if ip in NAT64:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    return None


def _is_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_loopback or ip.is_link_local
                                 or ip.is_private or ip.is_unspecified)


def is_public_address(address: str) -> bool:
    """Only globally routable unicast addresses; an address carrying IPv4 is judged by the IPv4 inside."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address):
        inside = embedded_ipv4(ip)
        if inside is not None:
            return all(_is_public(v4) for v4 in inside)
    return _is_public(ip)


def parse(url: str) -> Target:
    """Scheme, host and port checks that need no network (also used by forms)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise OutboundError("The address is not a valid URL.") from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if not host:
        raise OutboundError("The address has no host name.")
    if parts.username or parts.password:
        raise OutboundError("Put credentials in the auth fields, not in the address.")
    if scheme == "http":
        if not _matches(host, _setting("OUTBOUND_HTTP_HOSTS", [])):
            raise OutboundError("Use https: plain http is allowed only for hosts the operator named.")
    elif scheme != "https":
        raise OutboundError("Use an https address.")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    target = Target(scheme, host, port or (443 if scheme == "https" else 80), path)
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    local_name = host.rstrip(".") == "localhost" or host.rstrip(".").endswith(".localhost")
    if not is_allowed_host(host) and (local_name or (literal is not None and not is_public_address(host))):
        raise OutboundError(PRIVATE)
    return target


def _nameserver(entry: str) -> dns.nameserver.Do53Nameserver:
    """``address`` or ``address:port`` (an IPv6 address in brackets) from ``OUTBOUND_DNS_SERVERS``."""
    parts = urlsplit(f"//{str(entry).strip()}")
    return dns.nameserver.Do53Nameserver(parts.hostname, parts.port or 53)


def lookup(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, each once, in the resolver's order."""
    servers = _setting("OUTBOUND_DNS_SERVERS", [])
    try:
        if not servers:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            return list(dict.fromkeys(info[4][0] for info in infos))
        try:
            return [str(ipaddress.ip_address(host))]
        except ValueError:
            pass
        resolver = dns.resolver.Resolver(configure=False)
        resolver.nameservers = [_nameserver(entry) for entry in servers]
        resolver.lifetime = DNS_LIFETIME
        return list(dict.fromkeys(resolver.resolve_name(host).addresses()))
    except (socket.gaierror, UnicodeError, dns.exception.DNSException) as exc:
        logger.info("outbound lookup of %s failed: %s", host, exc)
        raise OutboundError("The host name does not resolve.") from None


def resolve(url: str) -> Target:
    """``parse`` plus DNS: every address the host resolves to must be public (unless allow-listed)."""
    target = parse(url)
    addresses = lookup(target.host, target.port)
    if not addresses:
        raise OutboundError("The host name does not resolve.")
    if not is_allowed_host(target.host) and not all(is_public_address(a) for a in addresses):
        raise OutboundError(PRIVATE)
    target.addresses = addresses
    return target


def _pool(target: Target, address: str, timeout: urllib3.Timeout):
    if target.scheme == "https":
        return urllib3.HTTPSConnectionPool(
            address, target.port, timeout=timeout, retries=False, maxsize=1,
            cert_reqs="CERT_REQUIRED", ca_certs=certifi.where(),
            server_hostname=target.host, assert_hostname=target.host,
        )
    return urllib3.HTTPConnectionPool(address, target.port, timeout=timeout, retries=False, maxsize=1)


def request(method: str, url: str, *, body: bytes | None = None, headers: dict | None = None,
            timeout: float | None = None, max_bytes: int | None = None) -> Answer:
    """Send one request to a checked address; the answer (any status) or an ``OutboundError``."""
    target = resolve(url)
    timeout = min(timeout or DEFAULT_TIMEOUT, _setting("OUTBOUND_MAX_TIMEOUT", 30))
    max_bytes = max_bytes or _setting("OUTBOUND_MAX_BYTES", DEFAULT_MAX_BYTES)
    default_port = 443 if target.scheme == "https" else 80
    host_header = target.host if target.port == default_port else f"{target.host}:{target.port}"
    send_headers = {"Host": host_header, "Accept-Encoding": "identity", "User-Agent": "geniac-portal",
                    **(headers or {})}
    deadline = time.monotonic() + timeout
    address = target.addresses[0]
    pool = _pool(target, address, urllib3.Timeout(connect=min(timeout, 5.0), read=timeout))
    try:
        response = pool.urlopen(method, target.path, body=body, headers=send_headers, redirect=False,
                                retries=False, preload_content=False, assert_same_host=False)
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        logger.warning("outbound %s %s (%s port %s) %s: %s", method, target.host, address, target.port,
                       _failure(exc), exc)
        raise OutboundError(UNREACHABLE) from None
    try:
        status = response.status
        if 300 <= status < 400:
            raise OutboundError(f"The host answered with a redirect (HTTP {status}); the portal does not follow redirects.",
                                status)
        length = response.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > max_bytes:
            raise OutboundError(f"The answer is larger than {max_bytes:,} bytes.", status)
        chunks, size = [], 0
        while True:
            if time.monotonic() > deadline:
                raise OutboundError("The host did not answer in time.", status)
            try:
                chunk = response.read(CHUNK)
            except (urllib3.exceptions.HTTPError, OSError):
                raise OutboundError("The answer was cut off.", status) from None
            if not chunk:
                break
            size += len(chunk)
            if size > max_bytes:
                raise OutboundError(f"The answer is larger than {max_bytes:,} bytes.", status)
            chunks.append(chunk)
        return Answer(status=status, body=b"".join(chunks), headers=dict(response.headers.items()))
    finally:
        response.release_conn()
        response.close()
        pool.close()


def _failure(exc: Exception) -> str:
    """Which way a request failed before any answer, for the log (the page says ``UNREACHABLE``)."""
    if isinstance(exc, urllib3.exceptions.NewConnectionError):  # a subclass of the timeout error in urllib3 2
        return "could not connect"
    if isinstance(exc, urllib3.exceptions.TimeoutError):
        return "timed out"
    if isinstance(exc, urllib3.exceptions.SSLError):
        return "TLS failure"
    return "failed"


def post(url: str, **kwargs) -> Answer:
    return request("POST", url, **kwargs)


def describe_status(status: int) -> str:
    """The portal's sentence for a non-success status (never the remote's own text)."""
    if status in (401, 403):
        return f"The host refused the credentials (HTTP {status})."
    if status == 404:
        return "Nothing answers at that path (HTTP 404)."
    if status == 429:
        return "The host is rate-limiting the portal (HTTP 429)."
    if status >= 500:
        return f"The host had an error (HTTP {status})."
    return f"The host answered HTTP {status}."
