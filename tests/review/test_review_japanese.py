"""A frozen review reads in the language of whoever opens it: its page, its workbook and its PDF. The snapshot
keeps facts (open faults, the worst verdict, clusters validated), and the sentences are written when shown; a
review frozen before the facts were kept shows its stored English. CSVs stay English."""
from __future__ import annotations

import io
import re

import openpyxl
from django.urls import reverse
from django.utils import translation

from portal.review import exports, services
from portal.review.figures.texts import health_text, validation_text
from tests.health.factories_health import ClusterFactory
from tests.review.test_review_health import _fault, _report, _run
from tests.review.test_review_interactions import _interaction

JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff00-\uffef]")
# What a Japanese reader reads as it is: numbers, days, times, signs and the product's own names.
AS_IS = re.compile(r"^[\d\s.,:;%+\-–—→×()/·|#]*$")
NAMES = ("GENIAC", "GPU", "JST", "EFA", "SA", "p5.48xlarge")


def _program(world):
    """A week with something in every part of the review: faults and validation, a tagged interaction, an
    action item and Japanese notes."""
    cluster = ClusterFactory(organization=world.org_a, name="a1")
    _report(cluster)
    _fault(cluster, 1, verdict="replace")
    _run(cluster, "pass")
    _interaction(world.org_b, 1, tags=["efa-networking"], summary="NCCL hang")
    review = services.freeze(world.pm, notes="ソケットへのフォールバックを確認")
    review.action_items.create(title="EFA の再確認", owner=world.lead_a)
    return review


def _data_names(world, review) -> list[str]:
    """Names the data holds (organizations, people, summaries, clusters): printed as typed, in any language."""
    names = [o["name"] for o in review.figures["organizations"]]
    names += [o.get("description", "") for o in review.figures["organizations"]]
    names += [u.display_name for u in (world.pm, world.lead_a, world.lead_b)]
    names += [u.username for u in (world.pm, world.lead_a, world.lead_b)]
    names += ["NCCL hang", "a1", world.org_a.description or "", world.org_b.description or ""]
    return [n for n in names if n]


def _foreign(lines: list[str], names: list[str]) -> list[str]:
    """Lines a Japanese reader would find in English: no Japanese, not numbers, not (a piece of) a name."""
    out = []
    for line in (raw.strip() for raw in lines):
        if not line or JAPANESE.search(line) or AS_IS.match(line) or line in NAMES:
            continue
        if any(line in name for name in names):  # a cell wraps a long name over lines
            continue
        out.append(line)
    return out


def test_the_frozen_review_stores_facts_and_writes_its_sentences_for_each_reader(world, client):
    review = _program(world)
    row = {o["slug"]: o for o in review.figures["organizations"]}["alpha-labs"]
    assert row["health_facts"] == {"open_faults": 1, "worst": "replace", "reporting": True, "not_reporting": 0}
    assert row["validation_facts"] == {"passed": 1, "ready": 1}
    assert row["health"] == "1 open fault (worst: replace node)"  # the stored sentence (the API's) is English
    with translation.override("ja"):
        assert health_text(row) == "未解決の障害 1 件（最も重い対処: ノード交換）"
        assert "検証" in validation_text(row)
    client.force_login(world.pm)
    page = client.get(reverse("review:review_detail", kwargs={"pk": review.pk}), HTTP_ACCEPT_LANGUAGE="ja")
    assert "未解決の障害 1 件（最も重い対処: ノード交換）" in page.content.decode()
    assert "1 open fault" not in page.content.decode()


def test_a_review_frozen_before_facts_were_kept_shows_its_stored_sentence(world, client):
    review = _program(world)
    for row in review.figures["organizations"]:
        row.pop("health_facts", None), row.pop("validation_facts", None)
    review.save(update_fields=["figures"])
    client.force_login(world.pm)
    page = client.get(reverse("review:review_detail", kwargs={"pk": review.pk}), HTTP_ACCEPT_LANGUAGE="ja")
    assert "1 open fault (worst: replace node)" in page.content.decode()


def test_the_review_pdf_reads_japanese_for_a_japanese_reader(world, client):
    from pypdf import PdfReader

    review = _program(world)
    client.force_login(world.pm)
    client.cookies["portal_language"] = "ja"
    response = client.get(reverse("review:review_pdf", kwargs={"pk": review.pk}))
    lines = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(response.content)).pages).splitlines()
    assert len([line for line in lines if JAPANESE.search(line)]) > 100
    assert _foreign(lines, _data_names(world, review)) == []
    text = "".join(lines)  # a cell's text wraps over lines
    assert "GENIAC 週次レビュー" in text and "未解決の障害 1 件" in text and "EFA ネットワーク" in text, text
    # The same review in English has English in the same places (the check above is not blind).
    client.cookies["portal_language"] = "en"
    english = client.get(reverse("review:review_pdf", kwargs={"pk": review.pk}))
    lines = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(english.content)).pages).splitlines()
    assert "GENIAC weekly review — week of" in "\n".join(lines)
    assert len(_foreign(lines, _data_names(world, review))) > 100


def test_the_review_workbook_reads_japanese_sheets_and_headers(world, client):
    review = _program(world)
    client.force_login(world.pm)
    client.cookies["portal_language"] = "ja"
    response = client.get(reverse("review:review_xlsx", kwargs={"pk": review.pk}))
    book = openpyxl.load_workbook(io.BytesIO(response.content))
    names = _data_names(world, review)
    assert [name for name in book.sheetnames if not JAPANESE.search(name)] == []
    headers = [c.value for sheet in book.worksheets for c in sheet[1]]
    assert [h for h in headers if not JAPANESE.search(str(h)) and h not in names] == []
    cells = [c.value for sheet in book.worksheets for row in sheet.iter_rows(min_row=2) for c in row
             if isinstance(c.value, str)]
    assert "未解決の障害 1 件（最も重い対処: ノード交換）" in cells and "いいえ" in cells


def test_sheet_names_are_never_cut_mid_word():
    """Excel holds 31 characters in a sheet name: every title is whole in both languages (or has a short name
    of its own), so no name is cut."""
    from portal.core.xlsx import heading, sheet_title

    titles = [str(exports.SHEETS.get(name, title)) for name, (title, _) in exports.TABLES.items()]
    titles += ["Action items", "Changes since previous review"]
    for language in ("en", "ja"):
        with translation.override(language):
            for title in titles:
                assert sheet_title(heading(title), set()) == heading(title), (language, title)


def test_the_csvs_of_a_japanese_reader_stay_english(world, client):
    review = _program(world)
    client.force_login(world.pm)
    client.cookies["portal_language"] = "ja"
    for table in ("organizations", "week", "changes", "action-items"):
        response = client.get(reverse("review:review_csv", kwargs={"pk": review.pk, "table": table}))
        body = b"".join(response.streaming_content).decode()
        assert not JAPANESE.search(body.replace("EFA の再確認", "")), table
    body = b"".join(client.get(reverse("review:review_csv", kwargs={"pk": review.pk, "table": "organizations"}))
                    .streaming_content).decode()
    assert body.startswith("Organization,Workloads,Lead SAs") and "1 open fault (worst: replace node)" in body


def test_a_long_sheet_name_ends_at_a_whole_word():
    from portal.core.xlsx import sheet_title

    taken: set[str] = set()
    name = sheet_title("Accelerator-hours per week (reserved → held → healthy → busy)", taken)
    assert name == "Accelerator-hours per week…" and len(name) <= 31
    again = sheet_title("Accelerator-hours per week (reserved → held → healthy → busy)", taken)
    assert again == "Accelerator-hours per week… (2)" and len(again) <= 31
    japanese = sheet_title("週ごとのアクセラレーター時間（予約済み → 確保済み → 正常 → 使用中）", set())
    assert len(japanese) <= 31 and japanese.endswith("確保済み →…")  # its spaces are where it may end
    assert sheet_title("Organizations", set()) == "Organizations"
