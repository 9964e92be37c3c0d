"""Exports: CSV tables neutralize formula cells; the PDF is a real PDF of the frozen week."""
from __future__ import annotations

import pytest
from django.urls import reverse

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
