"""CSV exports that a spreadsheet cannot be tricked into executing."""
from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence

from django.http import StreamingHttpResponse

DANGEROUS_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value) -> str:
    """Neutralize cells a spreadsheet would read as a formula (OWASP CSV injection)."""
    if value is None:
        return ""
    text = str(value)
    if text.startswith(DANGEROUS_PREFIXES):
        return "'" + text
    return text


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_response(filename: str, header: Sequence[str], rows: Iterable[Sequence]) -> StreamingHttpResponse:
    writer = csv.writer(_Echo())

    def stream():
        yield writer.writerow([safe_cell(h) for h in header])
        for row in rows:
            yield writer.writerow([safe_cell(c) for c in row])

    response = StreamingHttpResponse(stream(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
