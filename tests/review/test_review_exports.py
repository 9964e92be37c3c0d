"""Exports: CSV tables neutralize formula cells; the PDF is a real PDF of the frozen week."""
from __future__ import annotations

import datetime
import io

import openpyxl
import pytest
from django.urls import reverse
from django.utils import timezone

from portal.core.models import Organization
from portal.core.xlsx import CONTENT_TYPE, cell_value
from portal.review import exports, services
from portal.review.figures import overview as overview_figures


def _csv(response) -> str:
    return b"".join(response.streaming_content).decode()


def test_overview_csv_neutralizes_formulas(world, client):
    Organization.objects.create(name='=HYPERLINK("http://evil","x")', slug="evil", aws_account_id="123456789012")
    client.force_login(world.pm)
    response = client.get(reverse("review:overview_csv", kwargs={"table": "organizations"}))
    assert response["Content-Type"].startswith("text/csv")
    body = _csv(response)
    assert "'=HYPERLINK" in body
    assert "\n=HYPERLINK" not in body and ",=HYPERLINK" not in body


@pytest.mark.parametrize("table", [*exports.TABLES, "changes", "action-items"])
def test_every_review_table_exports(world, client, table):
    review = services.freeze(world.pm)
    client.force_login(world.pm)
    response = client.get(reverse("review:review_csv", kwargs={"pk": review.pk, "table": table}))
    assert response.status_code == 200
    assert _csv(response).splitlines()[0]


def test_action_item_csv_is_injection_safe(world, client):
    review = services.freeze(world.pm)
    review.action_items.create(title="+cmd|' /C calc'!A0", owner=world.lead_a)
    client.force_login(world.pm)
    body = _csv(client.get(reverse("review:review_csv", kwargs={"pk": review.pk, "table": "action-items"})))
    assert "'+cmd" in body


def test_pdf_of_a_frozen_review(world, client):
    review = services.freeze(world.pm, notes="Sockets fallback on Alpha")
    client.force_login(world.pm)
    response = client.get(reverse("review:review_pdf", kwargs={"pk": review.pk}))
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert response.content.startswith(b"%PDF")
    week = review.week_start.isoformat().encode()
    assert week in response.content
    assert response["Content-Disposition"].endswith(f'weekly-review-{review.week_start.isoformat()}.pdf"')


def test_printable_page(world, client):
    review = services.freeze(world.pm, notes="printed notes")
    client.force_login(world.pm)
    body = client.get(reverse("review:review_print", kwargs={"pk": review.pk})).content.decode()
    assert "printed notes" in body and "css/review.css" in body and "site-header" not in body


def test_safe_cell_leaves_numbers_alone():
    from portal.core.csv import safe_cell, signed

    assert safe_cell(-1) == "-1" and safe_cell(2.5) == "2.5" and safe_cell(0) == "0"
    assert safe_cell(signed(2)) == "+2" and safe_cell(signed(-1)) == "-1" and safe_cell(signed(0)) == "0"
    assert safe_cell("-0.5") == "-0.5"
    assert safe_cell("-1+1") == "'-1+1" and safe_cell("=1") == "'=1" and safe_cell("+A1") == "'+A1"


def test_changes_and_heatmap_csv_keep_signed_numbers(world, client):
    """A change of -1 is the number -1 and a change of +2 keeps its sign, in the CSV and the PDF."""
    import csv
    import io

    from portal.review import figures
    from tests.review.test_review_interactions import _interaction

    for days in (1, 3, 10):
        _interaction(world.org_a, days, tags=["nccl-config"])
    _interaction(world.org_a, 40, tags=["nccl-config"])
    _interaction(world.org_b, 2, tags=["efa-networking"])
    _interaction(world.org_b, 30, tags=["efa-networking"])
    _interaction(world.org_b, 35, tags=["efa-networking"])
    client.force_login(world.pm)
    body = _csv(client.get(reverse("review:overview_csv", kwargs={"table": "heatmap"}) + "?window=28"))
    change = {r[0]: r[-1] for r in csv.reader(io.StringIO(body))}
    assert change["Challenge"] == "Change"
    assert change["Nccl Config"] == "+2" and change["EFA networking"] == "-1"

    first = services.freeze(world.pm)
    week = first.figures["week"]
    later = {**first.figures, "week": {**week, "new": week["new"] - 1, "launches": week["launches"] + 2}}
    rows = exports.changes_table(figures.diff(first.figures, later))[1]
    assert ["This week: new", week["new"], week["new"] - 1, "-1"] in rows
    assert ["This week: launches", week["launches"], week["launches"] + 2, "+2"] in rows


def _pdf_text(pdf: bytes) -> bytes:
    """The page streams of a reportlab PDF, decoded (ASCII85 then Flate)."""
    import re
    import zlib

    from reportlab.lib.rl_accel import asciiBase85Decode

    text = b""
    for stream in re.findall(rb"stream\r?\n(.*?)endstream", pdf, flags=re.S):
        try:
            text += zlib.decompress(asciiBase85Decode(stream.strip().decode("latin-1")))
        except (zlib.error, ValueError, UnicodeError):
            text += stream
    return text


def test_pdf_prints_numbers_not_neutralized_text(world, client):
    from portal.review.figures import DEFAULT_WINDOW
    from tests.review.test_review_interactions import _interaction

    # Efa networking: one this window, two in the previous one: a change of -1.
    for days in (1, DEFAULT_WINDOW + 1, DEFAULT_WINDOW + 2):
        _interaction(world.org_b, days, tags=["efa-networking"])
    review = services.freeze(world.pm, notes="=SUM(A1)")
    client.force_login(world.pm)
    text = _pdf_text(client.get(reverse("review:review_pdf", kwargs={"pk": review.pk})).content)
    assert b"(EFA networking) Tj" in text or b"(EFA) Tj" in text
    frozen = timezone.localtime(review.frozen_at)
    assert f"(Frozen {frozen:%Y-%m-%d %H:%M} {frozen.tzname()} by pm)".encode() in text  # the pages' time zone
    assert b"(-1)" in text
    assert b"'-1" not in text and b"\\'-1" not in text and b"'=SUM" not in text


def _workbook(response):
    assert response["Content-Type"] == CONTENT_TYPE
    return openpyxl.load_workbook(io.BytesIO(response.content))


def test_the_overview_workbook_has_a_sheet_per_table_with_the_csv_headers(world, client):
    Organization.objects.create(name='=HYPERLINK("http://evil","x")', slug="evil", aws_account_id="123456789012")
    client.force_login(world.pm)
    response = client.get(reverse("review:overview_xlsx"), {"window": 14})
    assert response.status_code == 200 and ".xlsx" in response["Content-Disposition"]
    book = _workbook(response)
    assert book.sheetnames == [exports.SHEETS.get(name, title) for name, (title, _) in exports.TABLES.items()]
    assert all(len(name) <= 31 for name in book.sheetnames)  # whole names, none cut at 31 characters
    figures_now = overview_figures(world.pm, window=14)
    for (title, builder), sheet in zip(exports.TABLES.values(), book.worksheets, strict=True):
        header, rows = builder(figures_now)
        assert [c.value for c in sheet[1]] == header, title
        assert all(c.font.bold for c in sheet[1]) and sheet.freeze_panes == "A2", title
        assert sheet.max_row == len(rows) + 1, title
    orgs = book["Organizations"]
    names = [row[0].value for row in orgs.iter_rows(min_row=2)]
    assert "'=HYPERLINK(\"http://evil\",\"x\")" in names
    assert all(c.data_type != "f" for row in orgs.iter_rows() for c in row)  # no formula anywhere
    clusters = [c.value for c in orgs["D"][1:]]
    assert clusters and all(isinstance(v, int) for v in clusters)  # numbers as numbers


def test_every_sheet_name_is_whole_in_english_and_japanese(world, client):
    """A sheet name holds 31 characters: each is short enough in both languages, so none is cut."""
    from django.utils import translation

    from portal.core.xlsx import heading

    names = [exports.SHEETS.get(name, title) for name, (title, _) in exports.TABLES.items()]
    names += ["Action items", "Changes since previous review"]
    for language in ("en", "ja"):
        with translation.override(language):
            assert [n for n in names if len(heading(n)) > 31] == [], language
    client.force_login(world.pm)
    client.cookies["portal_language"] = "ja"
    book = _workbook(client.get(reverse("review:overview_xlsx")))
    assert "週ごとのアクセラレーター時間" in book.sheetnames and "予測" in book.sheetnames


def test_the_review_workbook_keeps_dates_numbers_and_neutralizes_text(world, client):
    review = services.freeze(world.pm)
    review.action_items.create(title="+cmd|' /C calc'!A0", owner=world.lead_a, due=datetime.date(2026, 12, 24))
    client.force_login(world.pm)
    book = _workbook(client.get(reverse("review:review_xlsx", kwargs={"pk": review.pk})))
    assert book.sheetnames[:2] == ["Action items", "Changes since previous review"]
    assert len(book.sheetnames) == len(exports.TABLES) + 2
    items = book["Action items"]
    assert [c.value for c in items[1]] == exports.action_items_table([])[0]
    title, owner, due = (c.value for c in items[2][:3])
    assert title == "'+cmd|' /C calc'!A0" and owner == world.lead_a.display_name
    assert due == datetime.datetime(2026, 12, 24) and items["C2"].is_date  # a date, not text
    week = book["This week"]
    assert all(isinstance(row[1].value, int) for row in week.iter_rows(min_row=2))


def test_cell_values_follow_the_csv_rules():
    assert cell_value("+2") == 2 and cell_value("-1") == -1 and cell_value("0.5") == 0.5
    assert cell_value("=SUM(A1)") == "'=SUM(A1)" and cell_value("@x") == "'@x"
    assert cell_value("2026-12-02") == datetime.date(2026, 12, 2) and cell_value("2026-13-02") == "2026-13-02"
    assert cell_value(None) is None and cell_value("Beta Works") == "Beta Works"
    moment = datetime.datetime(2026, 12, 1, 20, 30, tzinfo=datetime.UTC)
    assert cell_value(moment) == datetime.datetime(2026, 12, 1, 20, 30)


def test_the_pdf_charts_the_week_and_draws_the_heat_map(world, client):
    from reportlab.graphics.shapes import Drawing
    from reportlab.platypus import Table as Grid

    from tests.review.test_review_interactions import _interaction

    _interaction(world.org_b, 1, tags=["efa-networking"])
    review = services.freeze(world.pm)
    client.force_login(world.pm)
    ctx_items = review.action_items.all()
    story = exports.pdf_story(review, [], ctx_items)
    grid = next(f for f in story if isinstance(f, Grid))
    drawings = [cell for row in grid._cellvalues for cell in row if isinstance(cell, Drawing)]
    drawings += [f for f in story if isinstance(f, Drawing)]
    assert len(drawings) == 7  # six charts (the GPU-hours waterfall among them) and the heat map
    # Every heading keeps with what follows it: none can be left alone at the bottom of a page.
    headings = [f for f in story if getattr(getattr(f, "style", None), "name", "") == "heading"]
    assert len(headings) >= 3 + len(exports.TABLES) and all(h.style.keepWithNext for h in headings)

    text = _pdf_text(client.get(reverse("review:review_pdf", kwargs={"pk": review.pk})).content)
    for title in (b"Clusters by state", b"Open inquiries by severity", b"Open interactions per week",
                  b"GPU faults per week", b"Instances by type: running and quota", b"Common challenges, last",
                  b"GPU-hours: reserved, held, healthy, busy"):
        assert b"(" + title in text, title
    assert b"(Beta Works) Tj" in text or b"(Beta Works)" in text  # a heat-map column
    assert b" re" in text  # the heat map's cells are rectangles


def test_the_waterfall_draws_each_step_and_its_loss():
    from reportlab.graphics.shapes import Rect

    from portal.core import pdf_charts

    drawing = pdf_charts.waterfall("GPU-hours", [("Reserved", 3840), ("Held", 1280), ("Healthy", 1232),
                                                 ("Busy", 739.2)], ["not held", "not healthy", "idle"])
    texts = [s.text for s in drawing.contents if getattr(s, "text", None)]
    assert [t for t in texts if t[0].isdigit()] == ["3,840", "1,280", "1,232", "739"]
    assert {"not held", "not healthy", "idle"} <= set(texts)
    bars = [s for s in drawing.contents if isinstance(s, Rect)]
    assert len(bars) == 7  # each step after the first: its bar, then its loss above it
    # Heights in proportion to the figures; a loss bar tops up to the step before.
    assert [round(b.height / bars[0].height, 4) for b in (bars[0], bars[1], bars[3], bars[5])] == [
        1.0, round(1280 / 3840, 4), round(1232 / 3840, 4), round(739.2 / 3840, 4)]
    assert round(bars[1].height + bars[2].height, 6) == round(bars[0].height, 6)
    assert any(getattr(s, "text", "") == "Nothing to chart yet."
               for s in pdf_charts.waterfall("GPU-hours", [("Reserved", 0)], []).contents)


def test_a_step_of_nothing_is_drawn_as_nothing_with_labels_at_the_axis():
    """Reserved 3,840 and held 0: the drawing has one shape, the reserved bar. "Held" draws no rectangle of any
    height (neither a bar nor a red outline as tall as the reserved one): its "0" and "not held" are labels at
    the axis. A later step of nothing after nothing says no loss at all."""
    from reportlab.graphics.shapes import Rect

    from portal.core import pdf_charts

    drawing = pdf_charts.waterfall("GPU-hours", [("Reserved", 3840), ("Held", 0), ("Healthy", 0), ("Busy", 0)],
                                   ["not held", "not healthy", "idle"])
    rects = [s for s in drawing.contents if isinstance(s, Rect)]
    assert len(rects) == 1 and rects[0].fillColor is not None  # the reserved bar alone, no outline above "Held"
    reserved = rects[0]
    assert max(r.height for r in rects) == reserved.height and reserved.height > 50
    texts = {s.text: s for s in drawing.contents if getattr(s, "text", None)}
    zeros = [s for s in drawing.contents if getattr(s, "text", None) == "0"]
    assert len(zeros) == 3 and all(z.y < reserved.y + 10 for z in zeros)  # each "0" at the axis
    assert texts["not held"].y < reserved.y + 20  # the loss in words, at the axis, not atop a red bar
    assert "not healthy" not in texts and "idle" not in texts  # nothing was left to lose


def test_the_review_pdfs_waterfall_with_nothing_held_has_no_tall_shape_but_the_reserved_bar():
    """The review's chart as the PDF draws it (``portal.review.exports``), for a program that held nothing."""
    from reportlab.graphics.shapes import Drawing, Rect

    from portal.review import exports

    figures = {"capacity": {"program": {"reserved": 3840.0, "held": 0.0, "healthy": 0.0, "busy": 0.0}}}
    grid, _heat = exports.chart_flowables(figures)
    drawings = [cell for row in grid._cellvalues for cell in row if isinstance(cell, Drawing)]
    waterfall = next(d for d in drawings if any(getattr(s, "text", "") == "not held" for s in d.contents))
    tall = [r for r in waterfall.contents if isinstance(r, Rect) and r.height > 1]
    assert len(tall) == 1


def test_an_empty_chart_says_so():
    from portal.core import pdf_charts

    drawing = pdf_charts.bar_chart("Clusters by state", [], [("Clusters", [])])
    assert any(getattr(s, "text", "") == "Nothing to chart yet." for s in drawing.contents)
    heat = pdf_charts.heat_map("Common challenges", ["EFA"], ["Alpha", "Beta"], [[0, 3]])
    assert [s.text for s in heat.contents if getattr(s, "text", None) in ("0", "3")] == ["0", "3"]
