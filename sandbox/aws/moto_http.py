"""Answer, on the embedded endpoint, AWS HTTP APIs moto's server has no backend for.

Two kinds of request reach moto's server and find nothing there:

- a SigV4-signed call to a service moto lacks (Amazon Managed Grafana's control plane, signing name
  ``grafana``): routed by the signing name of its ``Authorization`` header (``@signed_service("grafana")``);
- a call to an AWS-run host that is not a botocore API (a Grafana workspace's HTTP API, an EKS cluster's
  Kubernetes API server). The portal reaches those at ``<endpoint>/_aws/<host>/<path>``
  (``portal.core.aws.service_url``); routed by the host (``@aws_host(pattern)``).

Handlers take a werkzeug ``Request``, the host and the path, and return a werkzeug ``Response``; their
state lives on moto's backends, so moto's reset forgets it. :func:`apply` (called by
:func:`sandbox.aws.moto_install.install`) puts the router in front of moto's dispatcher.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from moto.iam.models import get_account_id_from
from moto.moto_server.werkzeug_app import DomainDispatcherApplication
from werkzeug.wrappers import Request, Response

PREFIX = "/_aws/"
Handler = Callable[[Request, str, str], Response]
_HOSTS: list[tuple[re.Pattern[str], Handler]] = []
_SIGNED: dict[str, Handler] = {}
_original: dict[str, Any] = {}
_SCOPE = re.compile(r"Credential=([^/]+)/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request")


def aws_host(pattern: str) -> Callable[[Handler], Handler]:
    """Register a handler for ``/_aws/<host>/…`` whose host matches ``pattern`` (whole match)."""
    def register(handler: Handler) -> Handler:
        _HOSTS.append((re.compile(pattern), handler))
        return handler
    return register


def signed_service(name: str) -> Callable[[Handler], Handler]:
    """Register a handler for requests signed for service ``name``."""
    def register(handler: Handler) -> Handler:
        _SIGNED[name] = handler
        return handler
    return register


def signer(request: Request) -> tuple[str, str, str] | None:
    """``(access key id, region, service)`` of a SigV4 ``Authorization`` header, or None."""
    match = _SCOPE.search(request.headers.get("Authorization", ""))
    return match.groups() if match else None


def account_of(access_key_id: str) -> str:
    return get_account_id_from(access_key_id)


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(body), status=status, headers=headers or {}, content_type="application/json")


def aws_error(code: str, message: str, status: int) -> Response:
    """A REST-JSON service's error, as botocore parses it."""
    return json_response({"message": message}, status, {"x-amzn-ErrorType": code})


def route(environ: dict[str, Any]) -> Handler | None:
    path = environ.get("PATH_INFO", "")
    if path.startswith(PREFIX):
        host = path[len(PREFIX):].split("/", 1)[0]
        for pattern, handler in _HOSTS:
            if pattern.fullmatch(host):
                return handler
        return None
    match = _SCOPE.search(environ.get("HTTP_AUTHORIZATION", ""))
    return _SIGNED.get(match.group(3)) if match else None


def _call(self: DomainDispatcherApplication, environ: dict[str, Any], start_response: Any) -> Any:
    handler = route(environ)
    path = environ.get("PATH_INFO", "")
    if handler is None:
        if path.startswith(PREFIX):
            return json_response({"message": f"the embedded endpoint does not answer for {path}"}, 404)(
                environ, start_response)
        return _original["call"](self, environ, start_response)
    request = Request(environ)
    if path.startswith(PREFIX):
        host, _, rest = path[len(PREFIX):].partition("/")
        response = handler(request, host, "/" + rest)
    else:
        response = handler(request, request.host, path)
    return response(environ, start_response)


def apply() -> None:
    """Route the requests above before moto's dispatcher sees them (idempotent)."""
    if "call" not in _original:
        _original["call"] = DomainDispatcherApplication.__call__
        DomainDispatcherApplication.__call__ = _call
