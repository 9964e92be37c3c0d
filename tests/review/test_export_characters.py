"""Exports hold whatever users typed: a control character in a name (a model called ``"alpha\\x01"``) is
replaced at the writer in the workbook, the CSV and the PDF, for reviews frozen with it too (their snapshot is
stored as it was, so only the writer can mend it)."""
from __future__ import annotations

import io

import openpyxl
from django.urls import reverse

from portal.core.characters import REPLACEMENT, holdable
from portal.core.models import Organization
from portal.review import services
from tests.engagement.factories_engagement import TrainedModelFactory
from tests.review.test_review_exports import _csv, _pdf_text

NAME = "alpha\x01model\x1b"  # no NUL: PostgreSQL text holds none (and the portal refuses one at the door)


def _cells(response) -> list:
    assert response.status_code == 200, response.content[:300]
    book = openpyxl.load_workbook(io.BytesIO(response.content))
    return [c.value for sheet in book.worksheets for row in sheet.iter_rows() for c in row]


def test_holdable_replaces_only_what_a_format_cannot_hold():
    assert holdable("a\x01b\x00c\x1f\x7f") == f"a{REPLACEMENT}b{REPLACEMENT}c{REPLACEMENT}{REPLACEMENT}"
    assert holdable("tab\tline\nreturn\r 日本語 é") == "tab\tline\nreturn\r 日本語 é"


def test_the_overview_workbook_of_a_model_named_with_a_control_character(world, client):
    TrainedModelFactory(organization=world.org_a, name=NAME, parameters_billions=7)
    client.force_login(world.pm)
    cells = _cells(client.get(reverse("review:overview_xlsx")))
    assert any(isinstance(v, str) and f"alpha{REPLACEMENT}model{REPLACEMENT}" in v for v in cells)


def test_a_frozen_review_holding_a_control_character_still_exports(world, client):
    TrainedModelFactory(organization=world.org_a, name=NAME, parameters_billions=7)
    review = services.freeze(world.pm, notes="notes\x02here")
    # A review frozen before the writers replaced them: the snapshot itself holds the characters.
    review.figures["organizations"][0]["name"] = "Org\x03A"
    review.save(update_fields=["figures"])
    client.force_login(world.pm)
    cells = _cells(client.get(reverse("review:review_xlsx", kwargs={"pk": review.pk})))
    assert f"Org{REPLACEMENT}A" in cells
    for table in ("organizations", "outcomes"):
        body = _csv(client.get(reverse("review:review_csv", kwargs={"pk": review.pk, "table": table})))
        assert not any(c in body for c in "\x00\x01\x03"), table
    body = _csv(client.get(reverse("review:review_csv", kwargs={"pk": review.pk, "table": "outcomes"})))
    assert f"alpha{REPLACEMENT}model{REPLACEMENT}" in body
    pdf = client.get(reverse("review:review_pdf", kwargs={"pk": review.pk}))
    assert pdf.status_code == 200
    text = _pdf_text(pdf.content)
    assert b"notes" in text
    assert not any(c in text for c in (b"\x01", b"\x02", b"\x03", b"\\001", b"\\002", b"\\003"))


def test_list_csv_of_an_organization_named_with_a_control_character(world, client):
    Organization.objects.create(name="Gamma\x01Labs", slug="gamma", aws_account_id="123456789099")
    client.force_login(world.pm)
    body = _csv(client.get(reverse("review:overview_csv", kwargs={"table": "organizations"})))
    assert f"Gamma{REPLACEMENT}Labs" in body and "\x01" not in body
