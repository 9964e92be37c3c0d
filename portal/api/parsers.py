"""A JSON parser that refuses deeply nested documents (a 400, before Python's recursion limit)."""
from __future__ import annotations

import json

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH = 32


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects, counted outside strings (one linear pass)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


class DepthLimitedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = stream.read().decode(encoding) if stream is not None else ""
        except UnicodeDecodeError:
            raise ParseError("JSON parse error: the body is not valid text.") from None
        limit = getattr(settings, "API_JSON_MAX_DEPTH", MAX_DEPTH)
        if nesting_depth(text) > limit:
            raise ParseError(f"JSON parse error: nested deeper than {limit} levels.")
        try:
            return json.loads(text, parse_constant=_refuse_constant)
        except (ValueError, RecursionError) as exc:
            raise ParseError(f"JSON parse error: {exc}"[:200]) from None


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")
