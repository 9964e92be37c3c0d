"""Capacity lines: what a call offers, what an application asks for and what it is awarded.

A line is ``{"instance_type", "region", "count", "weeks"}``: ``count`` instances of a type in a region for
``weeks`` weeks. Pages write them one a line as text (``16 p5.48xlarge ap-northeast-1 8``), the API as JSON; both
go through :func:`parse` or :func:`clean`, which refuse a bad line with a message naming it. Sums are in
instance-weeks and accelerator-hours per (type, region), so what is asked can be set against what is offered.
No Django model here: the form, the serializer and the service share it.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.utils.translation import gettext

from portal.core import instance_types
from portal.core.choices import REGION_CODES

MAX_WEEKS = 52
MAX_COUNT = 10_000


def _error(number: int, text: str, why: str) -> ValidationError:
    return ValidationError(gettext("Line %(number)s (“%(text)s”): %(why)s")
                           % {"number": number, "text": text, "why": why})


def _line(number: int, text: str, instance_type, region, count, weeks) -> dict:
    kind = instance_types.find(str(instance_type or ""))
    if kind is None:
        raise _error(number, text, gettext("unknown instance type %(type)s.") % {"type": instance_type})
    if region not in REGION_CODES:
        raise _error(number, text, gettext("unknown region %(region)s.") % {"region": region})
    try:
        count, weeks = int(count), int(weeks)
    except (TypeError, ValueError):
        raise _error(number, text, gettext("instances and weeks are whole numbers.")) from None
    if not 0 < count <= MAX_COUNT or not 0 < weeks <= MAX_WEEKS:
        raise _error(number, text, gettext("instances are 1 to %(count)s and weeks 1 to %(weeks)s.")
                     % {"count": MAX_COUNT, "weeks": MAX_WEEKS})
    return {"instance_type": kind.name, "region": region, "count": count, "weeks": weeks}


def parse(text: str) -> list[dict]:
    """Lines typed one a line: ``<instances> <instance type> <region> <weeks>``; blank lines are skipped."""
    found = []
    for number, raw in enumerate(text.splitlines(), start=1):
        words = raw.replace("×", " ").replace(",", " ").split()
        if not words:
            continue
        if len(words) != 4:
            raise _error(number, raw.strip(), gettext("write instances, instance type, region and weeks."))
        found.append(_line(number, raw.strip(), words[1], words[2], words[0], words[3]))
    return found


def clean(rows) -> list[dict]:
    """Lines as JSON (the API's): a list of objects with the four keys."""
    if not isinstance(rows, list):
        raise ValidationError(gettext("Capacity lines are a list."))
    found = []
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise _error(number, str(row)[:80], gettext("each line is an object."))
        found.append(_line(number, str(row)[:80], row.get("instance_type"), row.get("region"), row.get("count"),
                           row.get("weeks")))
    return found


def as_text(rows: Iterable[dict]) -> str:
    return "\n".join(f"{r['count']} {r['instance_type']} {r['region']} {r['weeks']}" for r in rows)


def accelerator_hours(row: dict) -> int:
    return row["count"] * row["weeks"] * 7 * 24 * instance_types.get(row["instance_type"]).accelerator_count


def instance_weeks(rows: Iterable[dict]) -> dict[tuple[str, str], int]:
    """Instance-weeks per (instance type, region)."""
    found: dict[tuple[str, str], int] = defaultdict(int)
    for r in rows:
        found[(r["instance_type"], r["region"])] += r["count"] * r["weeks"]
    return dict(found)


def total_hours(rows: Iterable[dict]) -> int:
    return sum(accelerator_hours(r) for r in rows)


def compare(offer: Iterable[dict], asked: Iterable[dict]) -> list[dict]:
    """Per (type, region): instance-weeks offered, asked, and what is over (positive: more asked than offered)."""
    offered, wanted = instance_weeks(offer), instance_weeks(asked)
    return [{"instance_type": t, "region": r, "offered": offered.get((t, r), 0), "asked": wanted.get((t, r), 0),
             "over": wanted.get((t, r), 0) - offered.get((t, r), 0)}
            for t, r in sorted(set(offered) | set(wanted))]
