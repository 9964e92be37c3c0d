"""Check a value against a shape of botocore's service model, as AWS's front door does before the service runs.

botocore's client checks only what its ``ParamValidator`` knows (required members, Python types, a few minimums);
AWS also refuses a value outside the model's ``enum``, ``pattern``, ``min``/``max`` lengths, list sizes and numeric
ranges. :func:`problems` walks a value (a request's parameters, or an answer as botocore's parser reads it) along
its shape and names every member that breaks one of those constraints, in the words and member paths AWS's
``ValidationException`` uses (``Value '…' at 'instanceIds.1.member' failed to satisfy constraint: …``).

Pure: no moto, no Django; :mod:`sandbox.aws.model_validation` applies it to every request and answer.
"""
from __future__ import annotations

import datetime
import functools
from dataclasses import dataclass
from typing import Any

import regex
from botocore.model import Shape

# What AWS calls the value's kind when a member has the wrong one (JSON protocols answer SerializationException).
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "character": (str,), "boolean": (bool,), "integer": (int,), "long": (int,),
    "byte": (int,), "short": (int,), "float": (int, float), "double": (int, float), "bigdecimal": (int, float, str),
    "biginteger": (int, str), "timestamp": (datetime.datetime, datetime.date, int, float, str),
    "blob": (bytes, bytearray, str), "list": (list, tuple), "map": (dict,), "structure": (dict,),
}


@dataclass(frozen=True)
class Problem:
    """One member that breaks its shape. ``kind``: required, type, enum, pattern, length, range or unknown."""

    path: str
    kind: str
    constraint: str
    value: Any = None

    def message(self) -> str:
        """AWS's sentence for it."""
        if self.kind == "unknown":
            return f"Member '{self.path}' is not in the model's shape"
        shown = "null" if self.value is None else f"'{_show(self.value)}'"
        return f"Value {shown} at '{self.path}' failed to satisfy constraint: {self.constraint}"


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_show(v)}" for k, v in value.items()) + "}"
    text = str(value)
    return text if len(text) <= 200 else text[:200] + "…"


def summary(found: list[Problem]) -> str:
    """``N validation error(s) detected: …; …`` as AWS words it."""
    count = len(found)
    noun = "error" if count == 1 else "errors"
    return f"{count} validation {noun} detected: " + "; ".join(p.message() for p in found)


@functools.lru_cache(maxsize=2048)
def _pattern(text: str) -> regex.Pattern[str] | None:
    """The model's pattern (Java/ECMA syntax, not implicitly anchored); None when it does not compile here."""
    try:
        return regex.compile(text)
    except regex.error:
        return None


def _label(name: str) -> str:
    """AWS names members in lower camel case in its validation messages (``InstanceIds`` → ``instanceIds``)."""
    return name[:1].lower() + name[1:]


def problems(shape: Shape | None, value: Any, *, path: str = "", unknown: bool = False,
             answer: bool = False) -> list[Problem]:
    """Every constraint ``value`` breaks against ``shape``; ``unknown`` also names members the shape lacks
    (an answer carrying what AWS never returns). ``answer``: ``value`` is what a service returned, where AWS
    itself gives ``""`` for a string it has no value for (SSM's ``OutputS3Region``), whatever its ``min``."""
    if shape is None:
        return []
    found: list[Problem] = []
    _check(shape, value, path, unknown, found, answer)
    return found


def _check(shape: Shape, value: Any, path: str, unknown: bool, found: list[Problem], answer: bool = False) -> None:
    kind = shape.type_name
    expected = _TYPES.get(kind)
    if expected is not None and (not isinstance(value, expected) or (kind != "boolean" and isinstance(value, bool)
                                                                      and bool not in expected)):
        found.append(Problem(path or "input", "type", f"Member must be of type {kind}", value))
        return
    metadata = shape.metadata
    if kind == "structure":
        _structure(shape, value, path, unknown, found, answer)
        return
    if kind in ("string", "character") and answer and value == "":
        return
    if kind in ("string", "character"):
        enum = metadata.get("enum")
        if enum and value not in enum:
            found.append(Problem(path, "enum", f"Member must satisfy enum value set: [{', '.join(enum)}]", value))
        _bounds(len(value), metadata, "length", path, value, found)
        # Answers are not held to ``pattern``: AWS's own break some (SSM's ExecutionElapsedTime ``PT0.5S`` against
        # a date pattern), so only a request is refused for one.
        compiled = _pattern(metadata["pattern"]) if metadata.get("pattern") and not answer else None
        if compiled is not None and compiled.search(value) is None:
            found.append(Problem(path, "pattern",
                                 f"Member must satisfy regular expression pattern: {metadata['pattern']}", value))
        return
    if kind == "list":
        _bounds(len(value), metadata, "length", path, value, found)
        for index, item in enumerate(value, start=1):
            _member(shape.member, item, f"{path}.{index}.member" if path else f"{index}.member", unknown, found,
                    answer)
        return
    if kind == "map":
        _bounds(len(value), metadata, "length", path, value, found)
        for key, item in value.items():
            _check(shape.key, key, f"{path}.{key}.key", unknown, found, answer)
            _member(shape.value, item, f"{path}.{key}.value", unknown, found, answer)
        return
    if kind in ("integer", "long", "byte", "short", "float", "double"):
        _bounds(value, metadata, "value", path, value, found)
    elif kind == "blob":
        _bounds(len(value), metadata, "length", path, value, found)


def _member(shape: Shape, value: Any, path: str, unknown: bool, found: list[Problem], answer: bool) -> None:
    if value is None:
        found.append(Problem(path, "required", "Member must not be null"))
        return
    _check(shape, value, path, unknown, found, answer)


def _structure(shape: Any, value: dict, path: str, unknown: bool, found: list[Problem], answer: bool) -> None:
    if shape.metadata.get("document"):
        return
    members = shape.members
    for name in shape.required_members:
        if value.get(name) is None:
            found.append(Problem(_join(path, name), "required", "Member must not be null"))
    for name, item in value.items():
        member = members.get(name)
        if member is None:
            if unknown:
                found.append(Problem(_join(path, name), "unknown", "", item))
            continue
        if item is None:
            continue
        _check(member, item, _join(path, name), unknown, found, answer)
    if shape.metadata.get("union") and sum(v is not None for v in value.values()) > 1:
        found.append(Problem(path or "input", "union", "Member must have exactly one member set", value))


def _join(path: str, name: str) -> str:
    return f"{path}.{_label(name)}" if path else _label(name)


def _bounds(measure: float, metadata: dict, what: str, path: str, value: Any, found: list[Problem]) -> None:
    low, high = metadata.get("min"), metadata.get("max")
    if low is not None and measure < low:
        found.append(Problem(path, "length" if what == "length" else "range",
                             f"Member must have {what} greater than or equal to {_number(low)}", value))
    if high is not None and measure > high:
        found.append(Problem(path, "length" if what == "length" else "range",
                             f"Member must have {what} less than or equal to {_number(high)}", value))


def _number(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else str(bound)
