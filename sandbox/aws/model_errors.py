"""The errors the embedded endpoint answers with, in each protocol's wire form, as botocore parses AWS's.

A request that breaks its input shape gets the error the service itself gives: the validation error the
operation's model names among its errors (``ValidationException``, ``InvalidParameterValueException`` …), else the
protocol's usual one (``ValidationException`` for JSON services, ``ValidationError`` for query services such as
CloudFormation, ``InvalidParameterValue``/``MissingParameter`` for EC2, ``InvalidArgument`` for S3). A member of
the wrong type is ``SerializationException`` on the JSON protocols, as AWS answers before it validates anything.
"""
from __future__ import annotations

import json
import uuid
from typing import Any
from xml.sax.saxutils import escape

from werkzeug.wrappers import Response

from sandbox.aws.model_checks import Problem

# The names services give their validation error, most specific first.
VALIDATION_CODES = ("ValidationException", "ValidationError", "InvalidParameterValueException",
                    "InvalidParameterException", "InvalidRequestException", "InvalidInputException",
                    "InvalidParameterValue", "BadRequestException")
DEFAULT_CODES = {"json": "ValidationException", "rest-json": "ValidationException", "query": "ValidationError",
                 "ec2": "InvalidParameterValue", "rest-xml": "InvalidArgument"}


def _code_and_status(shape: Any) -> tuple[str, int]:
    error = shape.metadata.get("error") or {}
    return error.get("code", shape.name), int(error.get("httpStatusCode", 400))


def validation_code(model: Any, operation: Any, found: list[Problem]) -> tuple[str, int]:
    """The code (and HTTP status) the service answers a request breaking its input shape with."""
    protocol = model.protocol
    if protocol in ("json", "rest-json") and any(p.kind == "type" for p in found):
        return "SerializationException", 400
    named = {shape.name: shape for shape in operation.error_shapes}
    for name in VALIDATION_CODES:
        if name in named:
            return _code_and_status(named[name])
    if protocol == "ec2" and all(p.kind == "required" for p in found):
        return "MissingParameter", 400
    return DEFAULT_CODES.get(protocol, "ValidationException"), 400


def error(model: Any, code: str, message: str, status: int) -> Response:
    """One error in the wire form of ``model``'s protocol."""
    request_id = str(uuid.uuid4())
    protocol = model.protocol
    if protocol == "json":
        return Response(json.dumps({"__type": code, "message": message}), status=status,
                        headers={"x-amzn-RequestId": request_id},
                        content_type=f"application/x-amz-json-{model.metadata.get('jsonVersion', '1.1')}")
    if protocol == "rest-json":
        return Response(json.dumps({"message": message}), status=status,
                        headers={"x-amzn-ErrorType": code, "x-amzn-RequestId": request_id},
                        content_type="application/json")
    text, code_text = escape(message), escape(code)
    if protocol == "ec2":
        body = (f"<Response><Errors><Error><Code>{code_text}</Code><Message>{text}</Message></Error></Errors>"
                f"<RequestID>{request_id}</RequestID></Response>")
    elif protocol == "rest-xml":
        body = f"<Error><Code>{code_text}</Code><Message>{text}</Message><RequestId>{request_id}</RequestId></Error>"
    else:
        fault = "Receiver" if status >= 500 else "Sender"
        body = (f"<ErrorResponse><Error><Type>{fault}</Type><Code>{code_text}</Code><Message>{text}</Message>"
                f"</Error><RequestId>{request_id}</RequestId></ErrorResponse>")
    return Response(body, status=status, content_type="text/xml")


def validation(model: Any, operation: Any, found: list[Problem], message: str) -> Response:
    code, status = validation_code(model, operation, found)
    return error(model, code, message, status)


def serialization(model: Any, operation: Any, message: str) -> Response:
    code = "SerializationException" if model.protocol in ("json", "rest-json") else DEFAULT_CODES.get(
        model.protocol, "ValidationError")
    return error(model, code, f"The request could not be read: {message}"[:1000], 400)


def internal(model: Any, violation: str) -> Response:
    """An answer that broke the model: the emulation's bug, answered as AWS answers its own failures."""
    return error(model, "InternalFailure",
                 f"The embedded endpoint's answer does not match botocore's model: {violation}"[:2000], 500)
