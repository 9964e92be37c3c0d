"""How values are shown on every page (a builtin library: no ``{% load %}`` needed).

Times as the portal shows them: the display time zone (``TIME_ZONE``, Asia/Tokyo by default), to the minute.

Figures frozen as JSON keep their times as ISO strings in UTC; ``when`` shows those like any datetime, so a
page never mixes UTC and local times. Exports and the API keep ISO 8601 in UTC.
"""
from __future__ import annotations

import datetime
import re
from decimal import ROUND_HALF_UP, Decimal
from types import ModuleType

from django import template
from django.db import models
from django.utils import numberformat, timezone
from django.utils.dateparse import parse_datetime
from django.utils.formats import get_format
from django.utils.translation import get_language, gettext

from portal.core import choices as portal_choices
from portal.core import stored_text

register = template.Library()


def _as_datetime(value) -> datetime.datetime | None:
    if isinstance(value, datetime.datetime):
        return value
    if isinstance(value, str) and value:
        return parse_datetime(value)
    return None


@register.filter
def when(value, with_zone: bool = False) -> str:
    """'2026-12-01 19:52' (or '2026-12-01 19:52 JST' with ``when:True``); '' for nothing."""
    moment = _as_datetime(value)
    if moment is None:
        return "" if value in (None, "") else str(value)
    if timezone.is_aware(moment):
        moment = timezone.localtime(moment)
    text = f"{moment:%Y-%m-%d %H:%M}"
    return f"{text} {moment.tzname()}" if with_zone and moment.tzname() else text


@register.filter
def local_day(value) -> str:
    """'2026-12-02': the day a time (or an ISO string of frozen figures) falls on in the display time zone,
    never the UTC day its ISO text starts with; a date as it is; '' for nothing."""
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value.isoformat()
    moment = _as_datetime(value)
    if moment is None:
        return "" if value in (None, "") else str(value)
    if timezone.is_aware(moment):
        moment = timezone.localtime(moment)
    return f"{moment:%Y-%m-%d}"


@register.simple_tag
def display_time_zone() -> str:
    """'Asia/Tokyo (JST)': said once in the footer (a name, the same in every language)."""
    now = timezone.localtime()
    return f"{timezone.get_current_timezone_name()} ({now.tzname()})"


# Vocabularies whose codes pages show through their models' labels, never as bare codes.
MODEL_ONLY = (portal_choices.CycleStatus, portal_choices.CarryKind, portal_choices.TargetKind)

# Modules whose choices ``code_label`` knows, besides the core's: each app adds its own in its ``ready()``
# (``add_label_source``), so this library imports nothing above the core.
LABEL_SOURCES: list[ModuleType] = []


def add_label_source(module: ModuleType) -> None:
    """Make ``code_label`` know the choices defined in ``module`` (an app's ``choices``)."""
    global _LABELS
    if module not in LABEL_SOURCES:
        LABEL_SOURCES.append(module)
        _LABELS = None
        _TRANSLATED.clear()


def _labels() -> dict:
    """Every stored code of the portal's choices with its human label ("waiting_customer" → "Waiting for the
    customer", "reset_gpu" → "Reset GPU"), for values that reach a page without their model (frozen figures,
    timeline entries). The first module defining a code names it: the core's choices, the apps' in the order they
    were added. The cycle and team vocabularies are shown through their models only."""
    labels: dict[str, str] = {}
    for module in (portal_choices, *LABEL_SOURCES):
        for item in vars(module).values():
            if (isinstance(item, type) and issubclass(item, models.Choices) and item is not models.TextChoices
                    and item not in MODEL_ONLY):
                for member in item:
                    labels.setdefault(str(member.value), member.label)
    return labels


# Labels stay lazy (gettext_lazy): each page reads them in its own language, translated once per language.
_LABELS: dict | None = None
_TRANSLATED: dict[str, dict[str, str]] = {}


@register.filter
def code_label(value) -> str:
    """The human label of a stored code; an unknown code is shown with spaces for underscores."""
    global _LABELS
    if value in (None, ""):
        return ""
    if _LABELS is None:
        _LABELS = _labels()
        _TRANSLATED.clear()
    language = get_language()
    labels = _TRANSLATED.get(language)
    if labels is None:  # each language's labels translated once, not once per cell of a thousand-row table
        labels = _TRANSLATED[language] = {code: str(label) for code, label in _LABELS.items()}
    text = str(value)
    return labels.get(text) or text.replace("_", " ")


def whole_number(value) -> str:
    """``floatformat:"0g"`` of a number (rounded half up, "-0" shown as "0", digits grouped as the reader's
    language groups them) for tables rendered in Python (tests/accounting/test_forecast_rows.py holds it to the
    filter in English and Japanese). No value (a key a frozen week's figures predate) is shown as nothing, as
    the filter shows it."""
    return grouped(value, 0)


@register.filter
def grouped(value, places: int = 0) -> str:
    """A count or an amount as the reader reads it: ``places`` decimals rounded half up, thousands grouped with
    the active language's separators (``4,172,404.78``, not ``4172404.78``); '' for nothing."""
    if value in (None, ""):
        return ""
    places = int(places)
    number = Decimal(repr(float(value))).quantize(_ONE.scaleb(-places), ROUND_HALF_UP)
    if number == 0:
        number = abs(number)
    return numberformat.format(number, get_format("DECIMAL_SEPARATOR"), places, get_format("NUMBER_GROUPING"),
                               get_format("THOUSAND_SEPARATOR"), force_grouping=True)


@register.filter
def money(value) -> str:
    """An amount to the cent, grouped for the reader (``grouped`` with two places)."""
    return grouped(value, 2)


_ONE = Decimal(1)


@register.filter
def stored_words(value) -> str:
    """Text the portal wrote itself and stored in English (a fault's meaning and advice from the XID table), in
    the reader's language where the catalogue has it, as it is otherwise; '' for nothing. An XID fault's meaning
    is stored behind its code ("XID 79: GPU has fallen off the bus"): the code stays, the words are translated."""
    if isinstance(value, dict) and "code" in value:  # a sentence stored as a code (portal/core/stored_text.py)
        return stored_text.render(value["code"], value.get("params") or {}, value.get("text", ""))
    text = "" if value is None else str(value)
    coded = _XID_CODED.match(text)
    if coded:
        return f"{coded.group(1)}{stored_words(coded.group(2))}"
    efa = _EFA_SEEN.match(text)
    if efa:
        return gettext("%(seen)s of %(expected)s EFA devices reported") % {
            "seen": grouped(efa.group(1)), "expected": grouped(efa.group(2))}
    grew = _GREW.match(text)
    if grew:
        return gettext("%(counter)s grew by %(grown)s since the last report") % {
            "counter": grew.group(1), "grown": _measure(grew.group(2))}
    return gettext(text) if text else ""


_XID_CODED = re.compile(r"^(XID \d+: )(.+)$", re.DOTALL)
# Faults whose words carry a value, stored in English by ingestion (clusters/health/readers/summary.py): the
# value is kept and written as the reader's language writes numbers.
_EFA_SEEN = re.compile(r"^(\d+) of (\d+) EFA devices reported$")
_GREW = re.compile(r"^([a-z_]+) grew by ([0-9.e+-]+) since the last report$")


def _measure(text: str) -> str:
    """A stored reading ("1234", "2.5", "1e+06") grouped for the reader, its decimals kept (up to three)."""
    try:
        value = float(text)
    except ValueError:
        return text
    places = 0 if value.is_integer() else min(3, len(repr(value).split(".")[-1]))
    return grouped(value, places)


@register.filter
def lower_first(value) -> str:
    """'Status and lead SA' → 'status and lead SA' (an acronym keeps its capitals, unlike ``lower``)."""
    text = str(value)
    if len(text) > 1 and text[1].isupper():
        return text
    return text[:1].lower() + text[1:]


@register.filter
def person(user) -> str:
    """A person as every page names them: the full name, else the username; "" for nobody (so ``|default``
    still reads "—" or "Nobody yet"). Tables and detail pages use this one filter, so they never disagree."""
    if user is None or user == "":
        return ""
    if isinstance(user, str):  # a name already frozen into figures
        return user
    if not getattr(user, "pk", None):
        return ""
    return user.get_full_name() or user.get_username()
