"""Workbooks (``.xlsx``) of the portal's tables, as safe to open as its CSVs.

One sheet per table, headers bold and frozen. Cells keep their type so a spreadsheet can sum and sort them:
numbers (and the plain signed changes "+2", "-1" tables print) are numbers, ISO days ("2026-12-02") are
dates, times are naive UTC date-times as the CSVs' ISO UTC text. Every other text goes through
``portal.core.csv.safe_cell``: a cell beginning with ``=``, ``+``, ``-`` or ``@`` is written as text with the
leading apostrophe the CSVs carry, never as a formula (openpyxl would store ``=…`` as one).

Sheet names and column headings are for people, so they are read through the catalogue in the active language
(a CSV keeps the same headings in English: they are its machine-readable column names); values stay as they are.
"""
from __future__ import annotations

import datetime
import io
import re
import zipfile
from collections.abc import Iterable, Sequence
from decimal import Decimal

from django.http import HttpResponse
from django.utils.translation import gettext
from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.writer.excel import ExcelWriter

from portal.core.characters import holdable
from portal.core.csv import PLAIN_NUMBER, safe_cell

CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# Sheet names: at most 31 characters, none of these.
_BAD_TITLE = re.compile(r"[\[\]:*?/\\]")
_BOLD = Font(bold=True)


def cell_value(value):
    """What a cell holds: a number, a date, a date-time or neutralized text."""
    if value is None:
        return None
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    if isinstance(value, int | float | Decimal):
        return value
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC).replace(tzinfo=None)
        return value
    if isinstance(value, datetime.date):
        return value
    text = str(value)
    if PLAIN_NUMBER.fullmatch(text):
        return float(text) if "." in text else int(text)
    if ISO_DAY.fullmatch(text):
        try:
            return datetime.date.fromisoformat(text)
        except ValueError:
            pass
    return safe_cell(text)


def heading(text) -> str:
    """A sheet's name or a column's heading in the active language (as it is when the catalogue lacks it)."""
    text = str(text)
    return gettext(text) if text else text


def shortened(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, never cut mid-word: a long title ends at the last whole word
    that fits, with "…" (Japanese, written without spaces, ends at the last character that fits)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    if " " in head and text[limit - 1] != " ":
        head = head[: head.rindex(" ")]
    return head.rstrip(" ,;:-–—(") + "…"


def sheet_title(title: str, taken: set[str]) -> str:
    """A valid sheet name for ``title`` (31 characters at most, never cut mid-word), unique in the workbook."""
    base = _BAD_TITLE.sub(" ", holdable(title)).strip() or "Sheet"
    name, n = shortened(base, 31), 2
    while name.lower() in taken:
        suffix = f" ({n})"
        name, n = shortened(base, 31 - len(suffix)) + suffix, n + 1
    taken.add(name.lower())
    return name


def workbook_bytes(sheets: Iterable[tuple[str, Sequence[str], Iterable[Sequence]]], *,
                   fixed: datetime.datetime | None = None) -> bytes:
    """An ``.xlsx`` of ``(title, header, rows)`` sheets, in order.

    ``fixed``: the same bytes every time for the same sheets (a frozen report's): the document's created and
    modified properties and every zip entry's time are ``fixed`` instead of now."""
    book = Workbook()
    book.remove(book.active)
    taken: set[str] = set()
    for title, header, rows in sheets:
        header = [heading(h) for h in header]
        sheet = book.create_sheet(sheet_title(heading(title), taken))
        sheet.append([safe_cell(h) for h in header])
        for cell in sheet[1]:
            cell.font = _BOLD
        widths = [len(str(h)) for h in header]
        for row in rows:
            values = [cell_value(c) for c in row]
            sheet.append(values)
            for i, v in enumerate(values[: len(widths)]):
                widths[i] = max(widths[i], min(len(str(v)) if v is not None else 0, 60))
        for row in sheet.iter_rows(min_row=2):
            for cell in row:
                if isinstance(cell.value, datetime.datetime):
                    cell.number_format = "yyyy-mm-dd hh:mm"
                elif isinstance(cell.value, datetime.date):
                    cell.number_format = "yyyy-mm-dd"
        for index, width in enumerate(widths, start=1):
            sheet.column_dimensions[get_column_letter(index)].width = max(8, width + 2)
        sheet.freeze_panes = "A2"
    buffer = io.BytesIO()
    if fixed is None:
        book.save(buffer)
        return buffer.getvalue()
    return _fixed_bytes(book, fixed)


def _fixed_bytes(book: Workbook, when: datetime.datetime) -> bytes:
    """The workbook with ``when`` as its document times and its zip entries' times (openpyxl's own save
    stamps now into both)."""
    if when.tzinfo is not None:
        when = when.astimezone(datetime.UTC).replace(tzinfo=None)
    when = when.replace(microsecond=0)
    book.properties.created = book.properties.modified = when
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        ExcelWriter(book, archive).write_data()
    out = io.BytesIO()
    stamp = (max(when.year, 1980), when.month, when.day, when.hour, when.minute, when.second)
    with zipfile.ZipFile(raw) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for entry in source.infolist():
            info = zipfile.ZipInfo(entry.filename, date_time=stamp)
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, entry.external_attr
            target.writestr(info, source.read(entry.filename))
    return out.getvalue()


def xlsx_response(filename: str, sheets) -> HttpResponse:
    response = HttpResponse(workbook_bytes(sheets), content_type=CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
