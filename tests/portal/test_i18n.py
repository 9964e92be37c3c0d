"""The portal in Japanese: every template string marked, a complete catalogue shipped compiled, the language
chosen by the user's preference, the cookie or Accept-Language, and e-mails, Slack, PDFs and workbooks in the
right language."""
from __future__ import annotations

import datetime
import io
from pathlib import Path

import polib
import pytest
from django.core import mail
from django.urls import reverse
from django.utils import formats, translation

from tests.portal.template_text import masked, templates, unmarked

ROOT = Path(__file__).resolve().parents[2]
PO = ROOT / "locale" / "ja" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")


# --- every template string is marked -------------------------------------------------------------------------


def test_the_scanner_finds_unmarked_text_and_leaves_marked_text_and_code():
    source = (
        '<h1>{% translate "Clusters" %}</h1>\n'
        '<p title="Open it">Hello {{ name }}</p>\n'
        "<p>{% blocktranslate %}Shown {{ n }} times{% endblocktranslate %}</p>\n"
        '<script>var a = "Not text";</script><code>NCCL_DEBUG=INFO</code>\n'
        '<a href="/clusters/">{{ c.name }}</a> · GENIAC · 12 × <img alt="{% translate \'Logo\' %}">\n'
        "{% comment %}A note to developers{% endcomment %}<input type=\"submit\" value=\"Save\">"
    )
    found = {(piece.text.strip().replace(chr(0), "").strip(), piece.attribute) for piece in unmarked(source)}
    assert found == {("Open it", "title"), ("Hello", ""), ("Save", "value")}
    assert len(masked(source)) == len(source)  # positions are the source's


def test_no_template_has_an_unmarked_string():
    problems = []
    for path in templates(ROOT / "templates"):
        source = path.read_text()
        problems += [f"{path.relative_to(ROOT)}:{p.line(source)}: {p.text.strip()[:80]!r}" for p in unmarked(source)]
    assert not problems, "Mark these for translation ({% translate %} / {% blocktranslate %}):\n" + "\n".join(problems)


# --- the catalogue -------------------------------------------------------------------------------------------


def test_the_catalogue_is_complete():
    catalogue = polib.pofile(str(PO))
    assert len(catalogue.translated_entries()) > 800
    assert not catalogue.untranslated_entries(), [e.msgid for e in catalogue.untranslated_entries()][:20]
    assert not catalogue.fuzzy_entries(), [e.msgid for e in catalogue.fuzzy_entries()][:20]
    assert not catalogue.obsolete_entries()


def test_translations_keep_every_placeholder_and_markup():
    import re

    # Placeholders, a literal percent, and HTML tags; "<name>" in a format hint is a word for the reader (the
    # translation writes it in Japanese), not markup.
    placeholder = re.compile(r"%\(\w+\)s|%%|</?(?:a|abbr|b|br|code|em|i|kbd|samp|small|span|strong)\b[^>]*>")
    for entry in polib.pofile(str(PO)).translated_entries():
        translated = entry.msgstr or entry.msgstr_plural[0]
        source = entry.msgid_plural or entry.msgid
        assert sorted(placeholder.findall(translated)) == sorted(placeholder.findall(source)), entry.msgid


def test_gettext_reads_the_catalogue_as_valid(tmp_path):
    """gettext's own checker, where it is installed (the portal itself never needs it)."""
    import shutil
    import subprocess

    if shutil.which("msgfmt") is None:
        pytest.skip("gettext's msgfmt is not installed; polib has read the catalogue above")
    subprocess.run(["msgfmt", "--check", "-o", str(tmp_path / "check.mo"), str(PO)], check=True, capture_output=True)


def test_the_committed_mo_is_the_po_compiled(tmp_path):
    """The .mo is built by ``manage.py compile_catalogue`` (pure Python); this fails when the .po changed
    without it."""
    polib.pofile(str(PO)).save_as_mofile(str(tmp_path / "django.mo"))
    assert (tmp_path / "django.mo").read_bytes() == MO.read_bytes(), "run: manage.py compile_catalogue"


# --- how the language is chosen ------------------------------------------------------------------------------


def test_accept_language_chooses_when_nothing_else_says(client, db):
    japanese = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="ja,en;q=0.5")
    assert japanese["Content-Language"] == "ja"
    assert '<html lang="ja"' in japanese.text and "サインイン" in japanese.text
    english = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="en-GB,en;q=0.9")
    assert english["Content-Language"] == "en" and "Sign in" in english.text and "サインイン" not in english.text


def test_the_switcher_before_sign_in_keeps_the_choice_in_a_cookie(client, db, settings):
    response = client.post(reverse("set_language"), {"language": "ja", "next": "/login/"})
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "ja"
    assert "サインイン" in client.get("/login/", HTTP_ACCEPT_LANGUAGE="en").text


def test_the_switcher_refuses_what_it_cannot_speak_and_foreign_pages(client, db, settings):
    refused = client.post(reverse("set_language"), {"language": "fr", "next": "/login/"})
    assert refused.status_code == 400 and settings.LANGUAGE_COOKIE_NAME not in refused.cookies
    away = client.post(reverse("set_language"), {"language": "ja", "next": "https://evil.example/"})
    assert away.status_code == 302 and away["Location"] == "/"
    assert client.get(reverse("set_language")).status_code == 405


def test_the_choice_is_remembered_for_the_person(client, world):
    client.force_login(world.customer_a)
    client.post(reverse("set_language"), {"language": "ja", "next": "/organizations/"})
    world.customer_a.refresh_from_db()
    assert world.customer_a.language == "ja"

    from django.test import Client

    elsewhere = Client()  # another browser: no cookie, asking for English
    elsewhere.force_login(world.customer_a)
    page = elsewhere.get(reverse("portal:organization_list"), HTTP_ACCEPT_LANGUAGE="en")
    assert page.status_code == 200 and page["Content-Language"] == "ja"
    assert "閲覧できるプログラム参加組織です。" in page.text and '<html lang="ja"' in page.text
    assert 'aria-pressed="true">日本語' in page.text


def test_a_person_without_a_preference_follows_the_browser(client, world):
    client.force_login(world.lead_a)
    assert world.lead_a.language == ""
    assert "組織" in client.get(reverse("portal:organization_list"), HTTP_ACCEPT_LANGUAGE="ja").text
    assert "The program's participants" in client.get(reverse("portal:organization_list"),
                                                      HTTP_ACCEPT_LANGUAGE="en").text


def test_a_page_in_japanese_shows_japanese_and_its_dates(client, world):
    from portal.core import timeline

    timeline.record(world.org_a, "note", "Kickoff", visibility="shared")
    world.customer_a.language = "ja"
    world.customer_a.save(update_fields=["language"])
    client.force_login(world.customer_a)
    page = client.get(reverse("portal:timeline", kwargs={"slug": world.org_a.slug})).text
    assert "タイムライン" in page and "新しい順に表示します" in page
    assert "Skip to content" not in page and "本文へスキップ" in page
    with translation.override("ja"):
        assert formats.date_format(datetime.date(2026, 12, 1)) == "2026-12-01"
        assert formats.date_format(datetime.date(2026, 12, 1), "MONTH_DAY_FORMAT") == "12月1日"
        assert formats.date_format(datetime.date(2026, 12, 1), "YEAR_MONTH_FORMAT") == "2026年12月"


# --- e-mail, Slack, PDF and workbook ------------------------------------------------------------------------


def test_an_email_is_written_in_each_recipients_language(world):
    from portal.core import notifications

    world.lead_a.language = "ja"
    world.lead_a.save(update_fields=["language"])
    payload = {"title": "EFA down at Alpha", "body": "32 devices missing", "severity": "high",
               "url": "/clusters/1/"}
    notifications.send_email([world.lead_a.email, "nobody@example.com"], payload)
    by_recipient = {to: message for message in mail.outbox for to in message.to}
    japanese, english = by_recipient[world.lead_a.email], by_recipient["nobody@example.com"]
    assert japanese is not english
    assert "ポータルで開く" in japanese.body and "GENIAC プログラムポータル" in japanese.body
    assert "EFA down at Alpha" in japanese.subject and "32 devices missing" in japanese.body
    assert "Open it in the portal" in english.body and "ポータル" not in english.body + english.subject
    assert english.subject == "[GENIAC HIGH] EFA down at Alpha"


def test_slack_speaks_the_programs_language_whatever_the_page_does(settings):
    from portal.core import notifications

    payload = {"title": "EFA down", "severity": "high", "url": "/clusters/1/"}
    with translation.override("ja"):
        assert notifications.slack_text(payload)[0].endswith("|open>")
    settings.LANGUAGE_CODE = "ja"
    assert notifications.slack_text(payload)[0].endswith("|開く>")


def test_the_weekly_review_pdf_in_japanese_prints_japanese(client, world):
    from pypdf import PdfReader

    from portal.review import services

    review = services.freeze(world.pm, notes="ソケットへのフォールバックを確認")
    world.pm.language = "ja"
    world.pm.save(update_fields=["language"])
    client.force_login(world.pm)
    response = client.get(reverse("review:review_pdf", kwargs={"pk": review.pk}))
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(response.content)).pages)
    assert "ソケットへのフォールバックを確認" in text
    assert "まだグラフにするデータがありません。" in text  # the charts' own words, in Japanese
    assert b"HeiseiKakuGo-W5" in response.content


def test_the_pdf_in_english_keeps_its_latin_font(client, world):
    from portal.review import services

    review = services.freeze(world.pm)
    client.force_login(world.pm)
    content = client.get(reverse("review:review_pdf", kwargs={"pk": review.pk}), HTTP_ACCEPT_LANGUAGE="en").content
    assert b"Helvetica" in content and b"HeiseiKakuGo" not in content


def test_workbook_headings_are_translated_and_csv_names_are_not():
    import openpyxl

    from portal.core import xlsx

    sheets = [("Organizations", ["Organization", "Quota", "Validated"], [["Alpha", 8, True]])]
    with translation.override("ja"):
        book = openpyxl.load_workbook(io.BytesIO(xlsx.workbook_bytes(sheets)))
    sheet = book.worksheets[0]
    assert sheet.title == "組織"
    assert [c.value for c in sheet[1]] == ["組織", "クォータ", "検証済み"]
    assert [c.value for c in sheet[2]] == ["Alpha", 8, "はい"]
    with translation.override("en"):
        book = openpyxl.load_workbook(io.BytesIO(xlsx.workbook_bytes(sheets)))
    assert [c.value for c in book.worksheets[0][1]] == ["Organization", "Quota", "Validated"]


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_language_switcher_is_on_every_page_and_posts_back_here(client, world, language):
    client.force_login(world.lead_a)
    page = client.get(reverse("portal:lead_home") + "?x=1", HTTP_ACCEPT_LANGUAGE=language).text
    assert f'action="{reverse("set_language")}"' in page
    assert 'name="next" value="/lead/?x=1"' in page
    assert 'value="en" lang="en"' in page and 'value="ja" lang="ja"' in page


def test_every_chart_script_text_is_translated_for_the_page():
    import re

    from portal.core.context_processors import JS_STRINGS

    used = set()
    for script in (ROOT / "static" / "js").glob("*-charts.js"):
        used |= set(re.findall(r'\bt\("([^"]+)"\)', script.read_text()))
    assert used and used <= set(JS_STRINGS), used - set(JS_STRINGS)
    catalogue = {e.msgid for e in polib.pofile(str(PO)).translated_entries()}
    assert set(JS_STRINGS) <= catalogue


def test_the_overview_gives_its_chart_script_the_japanese_texts(client, world):
    import json
    import re

    world.pm.language = "ja"
    world.pm.save(update_fields=["language"])
    client.force_login(world.pm)
    page = client.get(reverse("review:overview")).text
    found = re.search(r'<script id="portal-js-strings" type="application/json">(.*?)</script>', page)
    strings = json.loads(found.group(1))
    assert strings["Open interactions per week"] == "週ごとの未解決の問い合わせ"


def test_the_persons_choice_beats_the_cookie_and_the_browser(client, world, settings):
    world.lead_a.language = "ja"
    world.lead_a.save(update_fields=["language"])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    client.force_login(world.lead_a)
    page = client.get(reverse("portal:lead_home"), HTTP_ACCEPT_LANGUAGE="en")
    assert page["Content-Language"] == "ja" and "担当組織" in page.text
    client.post(reverse("set_language"), {"language": "en", "next": "/lead/"})
    world.lead_a.refresh_from_db()
    assert world.lead_a.language == "en"
    assert client.get(reverse("portal:lead_home"), HTTP_ACCEPT_LANGUAGE="ja")["Content-Language"] == "en"
