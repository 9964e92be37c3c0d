"""JSON from outside the portal, read with its nesting bounded.

Python's ``json`` decoder recurses once per array or object: a body of 100,000 ``[`` raises ``RecursionError``
(not a ``ValueError``), which every reader that catches only ``ValueError`` turned into a 500, anonymously on
the SNS endpoint. Every place that decodes JSON it did not write (API bodies, SNS notifications and the alert
manager messages inside them, Slack payloads, answers of outside services) reads it through :func:`loads`,
which counts the nesting in one linear pass before decoding and raises :class:`TooDeep`, a ``ValueError``,
so each reader's existing refusal of bad JSON covers it.
"""
from __future__ import annotations

import json
from typing import Any

# Deeper than any document the portal reads (API bodies, SNS envelopes, Alertmanager and Kubernetes answers).
MAX_DEPTH = 64


class TooDeep(ValueError):
    """The document nests arrays and objects deeper than the reader allows."""

    def __init__(self, limit: int):
        super().__init__(f"nested deeper than {limit} levels")
        self.limit = limit


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


def loads(data: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH, **kwargs) -> Any:
    """``json.loads(data)``, refusing a document nested deeper than ``max_depth`` (:class:`TooDeep`).

    Bytes are decoded as ``json`` would (UTF-8, -16 or -32); undecodable bytes raise ``UnicodeDecodeError``,
    itself a ``ValueError``. Every failure is a ``ValueError``."""
    text = data.decode(json.detect_encoding(data)) if isinstance(data, bytes | bytearray) else data
    if nesting_depth(text) > max_depth:
        raise TooDeep(max_depth)
    try:
        return json.loads(text, **kwargs)
    except RecursionError:  # a limit above the interpreter's: still a refusal, never a crash
        raise TooDeep(max_depth) from None
