"""Exports: CSV tables neutralize formula cells; the PDF is a real PDF of the frozen week."""
from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from portal.models import Organization
from portal.review import exports, services


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
    from portal.csv import safe_cell, signed

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
