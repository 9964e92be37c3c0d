"""The embedded endpoint argues back as AWS does: every request and answer checked against botocore's model.

moto, and the emulation built on it, accepts what botocore's client lets through, and botocore checks little
(no ``pattern``, no ``enum``, no ``max``). AWS checks it all before the service runs, so code that passed here
failed there (an SSM ``SendCommand`` to a HyperPod node target). This layer sits in front of moto's server (and
of :mod:`sandbox.aws.moto_http`'s handlers): it finds the operation a request is for in botocore's own model
(the signing name of its ``Authorization`` header, then ``X-Amz-Target``, ``Action`` or the REST route), reads
its parameters with moto's protocol parsers and refuses, before anything runs, a request that breaks the
input shape (:mod:`sandbox.aws.model_checks`), with the error AWS gives (:mod:`sandbox.aws.model_errors`).

Every successful answer is read back with botocore's own parser and checked against the output shape, members
AWS never returns included (JSON protocols); rules the model states in words are kept too
(:mod:`sandbox.aws.model_rules`: members only returned when the request asks, members always returned). An
answer that breaks them is the emulator's bug: it is recorded (:func:`violations`) and answered as
``InternalFailure`` naming the member, so a test that reaches it fails where the bug is. ``EMBEDDED_AWS_CHECKS=0``
in the server's environment turns the layer off (for measuring it, never for the tests).
"""
from __future__ import annotations

import io
import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

from botocore import parsers
from botocore.awsrequest import HeadersDict
from botocore.loaders import create_loader
from moto.core.parse import PROTOCOL_PARSERS
from moto.core.request import Request
from moto.core.routing import get_service_router
from moto.core.utils import get_service_model
from moto.moto_server.werkzeug_app import DomainDispatcherApplication
from werkzeug.exceptions import HTTPException
from werkzeug.wsgi import get_input_stream

from sandbox.aws import model_errors, model_rules
from sandbox.aws.model_checks import Problem, problems, summary
from sandbox.aws.moto_http import PREFIX, signer

_lock = threading.Lock()
_original: dict[str, Any] = {}
_violations: list[str] = []
_checked: Counter[tuple[str, str]] = Counter()
_by_signing_name: dict[str, list[str]] = {}


def enabled() -> bool:
    return os.environ.get("EMBEDDED_AWS_CHECKS", "1") != "0"


def violations() -> list[str]:
    """The answers the emulation gave that broke botocore's model (each: ``service Operation: what``)."""
    with _lock:
        return list(_violations)


def checked() -> dict[tuple[str, str], int]:
    """How many requests of each (service, operation) the layer checked since the last :func:`forget`."""
    with _lock:
        return dict(_checked)


def forget() -> None:
    with _lock:
        _violations.clear()
        _checked.clear()


def _services_signed_as(name: str) -> list[str]:
    """botocore's services whose requests are signed for ``name`` (the one named so first)."""
    with _lock:
        if name in _by_signing_name:
            return _by_signing_name[name]
    loader = create_loader()
    found = [name] if name in loader.list_available_services("service-2") else []
    if not found:
        for service in loader.list_available_services("service-2"):
            metadata = loader.load_service_model(service, "service-2").get("metadata", {})
            if name in (metadata.get("signingName"), metadata.get("endpointPrefix")):
                found.append(service)
    with _lock:
        _by_signing_name[name] = found
    return found


def operation_of(request: Request, body: bytes) -> tuple[Any, Any] | None:
    """(moto's service model, operation model) a request is for, from botocore's model; None when unknown."""
    signed = signer(request)
    if signed is None:
        return None
    target = request.headers.get("X-Amz-Target", "")
    action = request.args.get("Action") or (parse_qs(body.decode("utf-8", "replace")).get("Action") or [""])[0] \
        if request.mimetype == "application/x-www-form-urlencoded" or request.args.get("Action") else ""
    for service in _services_signed_as(signed[2]):
        model = get_service_model(service)
        if target:
            prefix, _, name = target.rpartition(".")
            if prefix == model.metadata.get("targetPrefix") and name in model.operation_names:
                return model, model.operation_model(name)
            continue
        if action:
            if action in model.operation_names:
                return model, model.operation_model(action)
            continue
        if model.protocol.startswith("rest"):
            try:
                operation, params = get_service_router(service).match(request)
            except (HTTPException, NotImplementedError):  # no route of this service
                continue
            request.environ["geniac.uri_params"] = params
            return model, operation
    return None


def _protocol(model: Any, request: Request) -> str:
    protocol = model.protocol
    if protocol in ("json", "rest-json", "rest-xml", "ec2"):
        return protocol
    return "query"


def parameters(model: Any, operation: Any, request: Request, body: bytes) -> dict[str, Any]:
    """The request's parameters as the operation's input shape names them (moto's protocol parsers)."""
    parser = PROTOCOL_PARSERS[_protocol(model, request)](operation)
    return parser.parse({"method": request.method, "values": request.values, "headers": request.headers,
                         "body": body, "url_path": request.path,
                         "url_params": request.environ.get("geniac.uri_params", {})})


def _answer(model: Any, operation: Any, status: int, headers: HeadersDict, body: bytes) -> dict[str, Any]:
    """The answer as botocore's own client reads it."""
    parser = parsers.create_parser(model.protocol if model.protocol in parsers.PROTOCOL_PARSERS else "query")
    return parser.parse({"status_code": status, "headers": headers, "body": body}, operation.output_shape)


def _raw_members(model: Any, operation: Any, body: bytes) -> list[Problem]:
    """Members a JSON answer carries that the output shape lacks (botocore's parser drops them silently)."""
    if model.protocol not in ("json", "rest-json") or not body or operation.output_shape is None:
        return []
    try:
        raw = json.loads(body)
    except ValueError:
        return []
    shape = operation.output_shape
    payload = shape.serialization.get("payload")
    if payload:
        shape, raw = shape.members[payload], raw
    if not isinstance(raw, dict):
        return []
    return [p for p in problems(shape, raw, unknown=True, answer=True) if p.kind == "unknown"]


def _record(service: str, name: str, found: list[Problem]) -> str:
    text = f"{service} {name}: " + "; ".join(p.message() for p in found)
    with _lock:
        _violations.append(text)
    return text


def _check_answer(model: Any, operation: Any, params: dict, status: int, headers: HeadersDict,
                  body: bytes) -> str | None:
    """What is wrong with a successful answer, or None."""
    if operation.output_shape is None or operation.has_streaming_output:
        return None
    answer = _answer(model, operation, status, headers, body)
    answer.pop("ResponseMetadata", None)
    found = [p for p in problems(operation.output_shape, answer, answer=True) if p.kind != "unknown"]
    found += _raw_members(model, operation, body)
    found += model_rules.broken(model.service_name, operation, params, answer)
    return _record(model.service_name, operation.name, found) if found else None


def _call(self: DomainDispatcherApplication, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
    path = environ.get("PATH_INFO", "")
    if not enabled() or path.startswith((PREFIX, "/moto-api")):
        return _original["call"](self, environ, start_response)
    body = get_input_stream(environ).read()
    environ.update({"wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body)), "wsgi.input_terminated": True})
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    request = Request({**environ, "wsgi.input": io.BytesIO(body)})
    found = operation_of(request, body)
    if found is None:
        return _original["call"](self, environ, start_response)
    model, operation = found
    try:
        params = parameters(model, operation, request, body)
    except Exception as exc:  # noqa: BLE001 - a body the protocol cannot read is the caller's error on AWS too
        return model_errors.serialization(model, operation, str(exc))(environ, start_response)
    with _lock:
        _checked[(model.service_name, operation.name)] += 1
    wrong = problems(operation.input_shape, params) if operation.input_shape is not None else []
    if wrong:
        return model_errors.validation(model, operation, wrong, summary(wrong))(environ, start_response)
    captured: dict[str, Any] = {}

    def keep(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable:
        captured.update(status=status, headers=headers)
        return lambda data: None

    answer = b"".join(_original["call"](self, environ, keep))
    code = int(captured["status"].split()[0])
    if 200 <= code < 300:
        wrong_answer = _check_answer(model, operation, params, code, HeadersDict(captured["headers"]), answer)
        if wrong_answer is not None:
            return model_errors.internal(model, wrong_answer)(environ, start_response)
    start_response(captured["status"], captured["headers"])
    return [answer]


def apply() -> None:
    """Put the checks in front of the endpoint (after :func:`sandbox.aws.moto_http.apply`; idempotent)."""
    if "call" not in _original:
        _original["call"] = DomainDispatcherApplication.__call__
        DomainDispatcherApplication.__call__ = _call
