"""Each organization's people download their own part of the report (PDF and workbook, both languages): never
another organization's part, never the program's totals or weeks (which the report shows program managers only).
Narratives are written in both languages, each language prints its own, and a missing translation is flagged on
the page and refused at issue."""
from __future__ import annotations

import datetime
import io
import zipfile
from xml.etree import ElementTree

from django.test import Client
from django.urls import reverse

from portal.review.funder import exports, services
from portal.review.funder.models import FunderReportPart

AFTER = datetime.datetime(2026, 10, 2, 9, 0, tzinfo=datetime.UTC)


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _xlsx_text(body: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(body)) as book:
        # Parsed, not read raw: a writer may store text as character references (openpyxl does, through lxml).
        return "\n".join("".join(ElementTree.fromstring(book.read(n)).itertext())
                         for n in book.namelist() if n.endswith(".xml"))


def _parts(quarter, world):
    return (FunderReportPart.objects.get(report=quarter, organization=world.org_a),
            FunderReportPart.objects.get(report=quarter, organization=world.org_b))


def test_a_customer_downloads_their_own_part_and_never_another_organizations(world, quarter):
    a, b = _parts(quarter, world)
    FunderReportPart.objects.filter(pk=b.pk).update(narrative="Beta secret plan", narrative_ja="ベータの秘密")
    report = services.issue(quarter, world.pm, now=AFTER)
    client = _client(world.customer_a)
    for name in ("funder:part_pdf", "funder:part_xlsx"):
        for lang in ("en", "ja"):
            assert client.get(reverse(name, kwargs={"pk": a.pk}), {"lang": lang}).status_code == 200
        assert client.get(reverse(name, kwargs={"pk": b.pk})).status_code == 404
        assert _client(world.lead_b).get(reverse(name, kwargs={"pk": a.pk})).status_code == 404
    book = _xlsx_text(client.get(reverse("funder:part_xlsx", kwargs={"pk": a.pk}), {"lang": "en"}).content)
    program = report.figures["program"]
    assert world.org_a.name in book and world.org_b.name not in book and "Beta secret plan" not in book
    assert "Program" not in book and "GPU-hours per week" not in book
    assert str(program["gpu_hours_held"]) not in book  # 816.0: the program's total, A's is 720.0
    assert "720" in book
    # The part's export is drawn from what was stored: the same bytes each time.
    url = reverse("funder:part_pdf", kwargs={"pk": a.pk})
    assert client.get(url, {"lang": "ja"}).content == client.get(url, {"lang": "ja"}).content
    data = services.part_content(report, a, world.customer_a)
    assert set(data["figures"]["organizations"]) == {world.org_a.slug} and "program" not in data["figures"]
    assert set(data["figures"]["narratives"]) == {world.org_a.slug}


def test_each_language_prints_its_own_narrative(world, quarter):
    a, _b = _parts(quarter, world)
    FunderReportPart.objects.filter(pk=a.pk).update(narrative="Alpha trained its 70B model.",
                                                    narrative_ja="アルファは 70B モデルを学習しました。")
    report = services.issue(quarter, world.pm, now=AFTER)
    data = services.export_content(report, world.pm)
    english, japanese = _xlsx_text(exports.workbook(data, "en")), _xlsx_text(exports.workbook(data, "ja"))
    assert "Alpha trained its 70B model." in english and "アルファは" not in english
    assert "アルファは 70B モデルを学習しました。" in japanese and "Alpha trained" not in japanese


def test_a_missing_translation_is_flagged_and_refused_at_issue(world, quarter):
    a, _b = _parts(quarter, world)
    FunderReportPart.objects.filter(pk=a.pk).update(narrative="Only English", narrative_ja="")
    page = _client(world.pm).get(quarter.get_absolute_url()).content.decode()
    assert "Missing translations" in page and f"{world.org_a.name} (Japanese)" in page
    response = _client(world.pm).post(reverse("funder:report_issue", kwargs={"pk": quarter.pk}))
    assert response.status_code == 302
    quarter.refresh_from_db()
    assert quarter.status == "draft"
    FunderReportPart.objects.filter(pk=a.pk).update(narrative_ja="英語だけではなくなりました")
    assert services.issue(quarter, world.pm, now=AFTER).status == "issued"
