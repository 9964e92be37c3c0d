"""The report to the funder: its figures are the existing services', issuing freezes them with a content hash
(data edited later changes nothing, re-rendering gives the same bytes, PDF and workbook, in both languages),
a correction is a new version, and each organization's people see and comment on their own part only."""
from __future__ import annotations

import datetime
import hashlib
import io
import json
import zipfile

from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from clusters.accounting import services as accounting
from clusters.accounting.models import OrganizationDay
from portal.engagement import cycles
from portal.review.figures.capacity import capacity_figures
from portal.review.figures.organizations import organization_rows
from portal.review.figures.scope import Scope
from portal.review.funder import exports, services
from portal.review.funder.models import FunderReport, FunderReportComment, FunderReportPart
from tests.funder.conftest import FIRST, LAST, draft, seed_period
from workloads.enablement.models import EnablementSession
from workloads.interactions.models import Interaction

AFTER = datetime.datetime(2026, 10, 2, 9, 0, tzinfo=datetime.UTC)


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _issued(world, quarter) -> FunderReport:
    return services.issue(quarter, world.pm, now=AFTER)


def test_the_draft_parts_are_the_cycles_organizations_with_narratives_drafted_from_the_timeline(world, quarter):
    """Drafted in both languages from the entries' codes and days (their titles are people's English words and
    stay out of both); each language rendered through the catalogue, not translated from the other."""
    parts = {p.organization_id: p for p in quarter.parts.all()}
    assert set(parts) == {world.org_a.pk, world.org_b.pk}
    a, b = parts[world.org_a.pk], parts[world.org_b.pk]
    assert a.narrative.splitlines() == ["From 2026-07-01 to 2026-09-30:", "- 1 event on the timeline: Note 1.",
                                        "- 2026-08-05: Note."]
    assert a.narrative_ja.splitlines() == ["2026-07-01 から 2026-09-30 まで:", "- タイムラインの出来事 1 件: メモ 1。",
                                           "- 2026-08-05: メモ。"]
    assert "Pre-training" not in a.narrative + a.narrative_ja
    assert b.narrative.splitlines()[1] == "- No shared event was recorded in the period."
    assert b.narrative_ja.splitlines()[1] == "- 期間中に共有された出来事はありません。"


def test_the_figures_are_the_existing_services_figures(world, quarter):
    report = _issued(world, quarter)
    a = report.figures["organizations"][world.org_a.slug]
    # Capacity accounting over the quarter's days, as the overview's window would read it.
    direct = accounting.organization_figures(None, accounting.midnight(FIRST), report.data_as_of)
    assert a["gpu_hours_held"] == direct[world.org_a.pk]["held"] == 720.0
    assert a["gpu_hours_busy"] == direct[world.org_a.pk]["busy"]
    last = timezone.localtime(report.data_as_of - datetime.timedelta(microseconds=1))
    scope = Scope(user=world.pm, now=last, window=(last.date() - FIRST).days + 1)
    organization_rows(scope)
    program = capacity_figures(scope)["program"]
    assert report.figures["program"]["gpu_hours_held"] == program["held"] == 816.0
    assert report.figures["program"]["goodput"] == program["goodput"]
    # Support and enablement: the cycle report's counting, over the quarter's days.
    found = cycles.support_and_enablement([world.org_a.pk, world.org_b.pk], FIRST, LAST,
                                          EnablementSession.objects.filter(date__gte=FIRST, date__lte=LAST))
    assert a["interactions"] == found["by_org"][world.org_a.pk]["interactions"]
    assert report.figures["program"]["sessions"] == found["program"]["sessions"]


def test_issuing_stores_the_content_its_hash_and_the_datas_date(world, quarter):
    report = _issued(world, quarter)
    assert report.status == "issued" and report.data_as_of == accounting.midnight(LAST + datetime.timedelta(days=1))
    canonical = json.dumps(services.content(report), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert report.content_hash == hashlib.sha256(canonical.encode()).hexdigest()
    assert services.intact(FunderReport.objects.get(pk=report.pk))


def test_data_edited_after_issue_changes_nothing_and_rerendering_gives_the_same_bytes(world, quarter):
    report = _issued(world, quarter)
    before = {(lang, kind): render(services.export_content(report, world.pm), lang)
              for lang in exports.LANGUAGES for kind, render in (("pdf", exports.pdf), ("xlsx", exports.workbook))}
    stored = json.dumps(report.figures, sort_keys=True)
    OrganizationDay.objects.filter(organization=world.org_a).update(held=1000, healthy=900, busy=800, measured=900)
    Interaction.objects.create(organization=world.org_a, summary="later", occurred_at=AFTER - datetime.timedelta(days=30))
    FunderReportPart.objects.filter(report=report).update(narrative="rewritten after issue")
    again = FunderReport.objects.get(pk=report.pk)
    assert json.dumps(again.figures, sort_keys=True) == stored and services.intact(again)
    after = {(lang, kind): render(services.export_content(again, world.pm), lang)
             for lang in exports.LANGUAGES for kind, render in (("pdf", exports.pdf), ("xlsx", exports.workbook))}
    assert after == before
    assert b"rewritten after issue" not in b"".join(after.values())
    # The same through the download route, twice.
    client = _client(world.pm)
    url = reverse("funder:report_pdf", kwargs={"pk": report.pk})
    assert client.get(url, {"lang": "ja"}).content == client.get(url, {"lang": "ja"}).content == before[("ja", "pdf")]


def test_both_languages(world, quarter):
    report = _issued(world, quarter)
    data = services.export_content(report, world.pm)
    english, japanese = exports.pdf(data, "en"), exports.pdf(data, "ja")
    assert b"HeiseiKakuGo-W5" in japanese and b"HeiseiKakuGo-W5" not in english
    sheets = {}
    for lang in exports.LANGUAGES:
        with zipfile.ZipFile(io.BytesIO(exports.workbook(data, lang))) as book:
            sheets[lang] = book.read("xl/workbook.xml").decode()
            assert {i.date_time for i in book.infolist()} == {(2026, 9, 30, 15, 0, 0)}
    assert 'name="Figures"' in sheets["en"] and 'name="数値"' in sheets["ja"]


def test_a_customer_sees_and_comments_on_their_own_part_only(world, quarter):
    url = reverse("funder:report_detail", kwargs={"pk": quarter.pk})
    page_a = _client(world.customer_a).get(url).content.decode()
    assert world.org_a.name in page_a and "Beta Works" not in page_a
    page_b = _client(world.customer_b).get(url).content.decode()
    assert "Beta Works" in page_b and "Alpha Labs" not in page_b
    part_a = quarter.parts.get(organization=world.org_a)
    comment = reverse("funder:part_comment", kwargs={"pk": part_a.pk})
    assert _client(world.customer_b).post(comment, {"text": "not mine"}).status_code == 404
    assert _client(world.customer_a).post(comment, {"text": "Please mention the 1T tokens"}).status_code == 302
    assert FunderReportComment.objects.get().part == part_a
    listed = _api(world.customer_a).get(reverse("funder-api:part-list")).json()
    assert [p["organization"] for p in listed["results"]] == [world.org_a.slug]
    # The whole report's exports are the program manager's.
    assert _client(world.customer_a).get(reverse("funder:report_pdf", kwargs={"pk": quarter.pk})).status_code == 403


def test_a_lead_edits_only_their_organizations_narratives_and_only_in_a_draft(world, quarter):
    part_a, part_b = (quarter.parts.get(organization=o) for o in (world.org_a, world.org_b))
    lead = _client(world.lead_a)
    assert lead.get(reverse("funder:part_edit", kwargs={"pk": part_b.pk})).status_code == 404
    edit = reverse("funder:part_edit", kwargs={"pk": part_a.pk})
    assert lead.post(edit, {"narrative": "Alpha trained its 70B model.", "narrative_ja": "70Bモデルを学習。"}).status_code == 302
    assert _client(world.customer_a).post(edit, {"narrative": "mine"}).status_code == 403
    report = _issued(world, quarter)
    assert report.figures["narratives"][world.org_a.slug]["ja"] == "70Bモデルを学習。"
    assert lead.post(edit, {"narrative": "after issue"}).status_code == 403
    api = _api(world.lead_a).patch(reverse("funder-api:part-detail", kwargs={"pk": part_a.pk}),
                                   {"narrative": "after issue"}, format="json")
    assert api.status_code == 403
    assert FunderReportPart.objects.get(pk=part_a.pk).narrative == "Alpha trained its 70B model."


def test_a_report_posted_twice_is_issued_once(world, quarter):
    client = _client(world.pm)
    url = reverse("funder:report_issue", kwargs={"pk": quarter.pk})
    key = {"_submission": "k" * 32}
    first = client.post(url, key)
    second = client.post(url, key)
    assert first.status_code == second.status_code == 302
    issued = FunderReport.objects.get(pk=quarter.pk)
    # A second issue, keyed or not, answers the issued report unchanged.
    assert services.issue(issued, world.pm).content_hash == issued.content_hash
    assert _api(world.pm).post(reverse("funder-api:report-issue", kwargs={"pk": quarter.pk})).json()[
        "content_hash"] == issued.content_hash
    assert issued.history.filter(status="issued").count() == 1


def test_a_correction_is_a_new_version_that_says_what_changed(world, quarter):
    report = _issued(world, quarter)
    correct = reverse("funder:report_correct", kwargs={"pk": report.pk})
    assert _client(world.pm).post(correct, {"note": "Beta's cost was missing"}).status_code == 302
    draft_v2 = FunderReport.objects.get(supersedes=report)
    assert draft_v2.version == 2 and draft_v2.change_note == "Beta's cost was missing"
    assert services.correct(report, world.pm, "again") == draft_v2  # one draft per corrected version
    issued_v2 = services.issue(draft_v2, world.pm, now=AFTER)
    assert FunderReport.objects.get(pk=report.pk).status == "superseded"
    assert services.content(issued_v2)["supersedes"] == report.content_hash
    assert FunderReport.objects.get(pk=report.pk).content_hash == report.content_hash


def test_a_second_cycle_end_report_uses_the_cycles_organizations(world):
    cycle = seed_period(world)
    report = draft(world, program_cycle=cycle, )
    assert report.parts.count() == 2


def test_the_report_page_needs_as_many_queries_for_many_organizations_as_for_few(world, quarter):
    from portal.core.models import Cycle, CycleParticipation
    from tests.factories import OrganizationFactory
    from tests.queries import assert_flat_queries

    cycle = Cycle.objects.get(status="active")

    def grow(n):
        for _ in range(n):
            org = OrganizationFactory()
            CycleParticipation.objects.create(cycle=cycle, organization=org)
            FunderReportPart.objects.create(report=quarter, organization=org, narrative="n")

    client = _client(world.pm)
    assert_flat_queries(client, reverse("funder:report_detail", kwargs={"pk": quarter.pk}), grow=grow, sizes=(3, 9))
