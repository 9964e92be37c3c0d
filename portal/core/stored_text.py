"""Sentences the portal writes itself and stores, kept as a code with parameters and written in the reader's
language when shown.

A message is defined once, where it is written, with its English (marked ``gettext_noop`` so the catalogue has
it): ``LAUNCH_REQUESTED = stored_text.define("launch.requested", gettext_noop("Launch of cluster %(name)s
requested (%(blueprint)s)"))``. The writer stores ``Message(code, params)``: the code and the parameters in the
row, and the English sentence beside them in the row's old text column (for the API, search and exports, which
stay English). A page renders ``render(code, params, stored)`` in its language.

Parameters are names, numbers and codes, never sentences in one language:
- a parameter the definition gives a label function (``labels={"kind": kind_label}``) is a stored code, shown
  by that function in the active language;
- a parameter holding ``{"code": …, "params": …}`` is a message of its own, rendered in the same language;
- a list is joined with commas (its items rendered the same way), or one item a line when the definition gives
  it the label ``lines``;
- a number a definition gives the label ``number`` (or ``decimal1``) is written as the reader's language writes it.
A row written before its code existed, or whose code is unknown (an older release's), shows its stored text.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.utils import formats, translation
from django.utils.translation import gettext

MESSAGES: dict[str, str] = {}
LABELS: dict[str, dict[str, Callable[[object], str]]] = {}


def define(code: str, english: str, labels: dict[str, Callable[[object], str]] | None = None) -> str:
    """Register a message's English (its msgid) under ``code``, with the label functions of its coded
    parameters; returns the code."""
    if MESSAGES.get(code, english) != english:
        raise ValueError(f"stored text {code!r} is defined twice with different words")
    MESSAGES[code] = english
    LABELS[code] = dict(labels or {})
    return code


def message(code: str, **params) -> Message:
    """``Message(code, params)`` with the messages among the parameters made JSON."""
    return Message(code, {key: _plain(value) for key, value in params.items()})


def _plain(value):
    if isinstance(value, Message):
        return value.as_json()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Message:
    """A sentence to store: its code and parameters (JSON values)."""

    code: str
    params: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        return {"code": self.code, "params": self.params}

    def english(self) -> str:
        """The sentence in English: what the row's text column keeps."""
        with translation.override("en"):
            return render(self.code, self.params)

    def __str__(self) -> str:
        """The sentence in the active language."""
        return render(self.code, self.params)


def lines(value) -> str:
    """The label of a list parameter shown one item a line (the items are rendered, not labelled)."""
    return str(value)


def number(value) -> str:
    """The label of a count or amount: 12,345 in the reader's language's grouping (never 12345.0)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return formats.number_format(value, force_grouping=True) if isinstance(value, int | float) else str(value)


def decimal1(value) -> str:
    """The label of a measurement shown with one decimal (busbw in GB/s)."""
    return formats.number_format(round(value, 1), 1, force_grouping=True) if isinstance(value, int | float) else str(value)


def _value(value, label: Callable[[object], str] | None = None):
    if isinstance(value, Message):
        value = value.as_json()
    if isinstance(value, dict) and "code" in value:
        return render(value["code"], value.get("params") or {}, value.get("text", ""))
    if isinstance(value, list | tuple):
        if label is lines:
            return "\n".join(str(_value(v)) for v in value)
        return ", ".join(str(_value(v, label)) for v in value)
    if label is not None and value not in (None, ""):
        return label(value)
    return value


def render(code: str, params: dict | None, stored: str = "") -> str:
    """The message ``code`` with ``params`` in the active language; ``stored`` when the code is unknown or empty
    (rows written before codes, or by a release that knew a code this one does not)."""
    english = MESSAGES.get(code or "")
    if english is None:
        return stored
    labels = LABELS.get(code, {})
    try:
        values = {key: _value(value, labels.get(key)) for key, value in (params or {}).items()}
        return gettext(english) % values
    except (KeyError, TypeError, ValueError):  # parameters of another release's wording
        return stored or english
