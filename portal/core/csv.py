"""CSV exports that a spreadsheet cannot be tricked into executing."""
from __future__ import annotations

import csv
import datetime
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal

from django.http import StreamingHttpResponse
from django.utils import translation

from portal.core.characters import holdable

DANGEROUS_PREFIXES = ("=", "+", "-", "@", "\t", "\r")

# A plain signed number ("-1", "+2", "-0.5") is read by a spreadsheet as that number, never as a formula,
# so it is left alone: quoting it would turn a change of -1 into the text '-1.
PLAIN_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")


def signed(value) -> str:
    """A change as people read it: "+2", "-1", "0"."""
    return f"+{value}" if value and value > 0 else str(value)


def safe_cell(value) -> str:
    """Neutralize cells a spreadsheet would read as a formula (OWASP CSV injection); numbers stay numbers;
    characters no export format holds are replaced (``portal.core.characters``)."""
    if value is None:
        return ""
    if isinstance(value, int | float | Decimal):
        return str(value)
    if isinstance(value, datetime.datetime):
        return iso_utc(value)
    text = holdable(str(value))
    if text.startswith(DANGEROUS_PREFIXES) and not PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def iso_utc(value: datetime.datetime) -> str:
    """Exports carry times as ISO 8601 in UTC, whatever the display time zone."""
    if value.tzinfo is None:
        return value.isoformat(timespec="seconds")
    return value.astimezone(datetime.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_response(filename: str, header: Sequence[str], rows: Iterable[Sequence]) -> StreamingHttpResponse:
    writer = csv.writer(_Echo())

    def stream():
        # Machine-readable: column names and the labels in the cells are English whatever the reader's language
        # (the workbook is the export for people).
        with translation.override("en"):
            yield writer.writerow([safe_cell(h) for h in header])
            for row in rows:
                yield writer.writerow([safe_cell(c) for c in row])

    response = StreamingHttpResponse(stream(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
