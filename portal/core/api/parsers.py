"""A JSON parser that refuses deeply nested documents (a 400, before Python's recursion limit), through the one
reader of outside JSON (``portal.core.json_input``)."""
from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from portal.core.json_input import TooDeep, loads, nesting_depth

MAX_DEPTH = 32
__all__ = ["DepthLimitedJSONParser", "nesting_depth"]


class DepthLimitedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = stream.read().decode(encoding) if stream is not None else ""
        except UnicodeDecodeError:
            raise ParseError("JSON parse error: the body is not valid text.") from None
        limit = getattr(settings, "API_JSON_MAX_DEPTH", MAX_DEPTH)
        try:
            return loads(text, max_depth=limit, parse_constant=_refuse_constant)
        except TooDeep:
            raise ParseError(f"JSON parse error: nested deeper than {limit} levels.") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error: {exc}"[:200]) from None


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")
