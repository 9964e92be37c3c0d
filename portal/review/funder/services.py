"""Every write of the report to the funder: the draft (its parts, each narrative drafted from the period's
timeline), issuing it (figures and text stored, hashed), correcting an issued one (a new version), comments.

Issuing is a compare-and-set under the report's row lock: a report posted twice, or two program managers
issuing at once, issue one version; the second finds it issued and gets it back unchanged."""
from __future__ import annotations

import datetime
import hashlib
import json

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext

from portal.core import access
from portal.core.choices import CycleStatus
from portal.core.models import CycleParticipation
from portal.review.funder import figures as report_figures
from portal.review.funder import narratives as report_narratives
from portal.review.funder.choices import ReportStatus
from portal.review.funder.models import FunderReport, FunderReportComment, FunderReportPart


class ReportError(Exception):
    """The report cannot be issued or corrected as asked."""


def participants(report: FunderReport) -> list[int]:
    """The organizations the report has a part for: those taking part in its cycle (the active one when it
    names none)."""
    cycle = {"cycle_id": report.program_cycle_id} if report.program_cycle_id else {"cycle__status": CycleStatus.ACTIVE}
    found = CycleParticipation.objects.filter(**cycle)
    return list(found.order_by("organization__name").values_list("organization_id", flat=True))


def drafted_narrative(organization_id: int, first_day: datetime.date, last_day: datetime.date) -> dict[str, str]:
    """A starting narrative in English and Japanese, rendered from the period's shared timeline and outcomes
    (``narratives.draft``); the lead SA edits both into prose."""
    return report_narratives.draft(organization_id, report_figures.accounting.midnight(first_day),
                                   report_figures.period_end_at(last_day), first_day, last_day)


def add_parts(report: FunderReport, narratives: dict[int, tuple[str, str]] | None = None) -> None:
    """One part per participating organization, its narratives drafted from the timeline in both languages (or
    carried from the version it corrects)."""
    narratives = narratives or {}
    for oid in participants(report):
        if oid in narratives:
            english, japanese = narratives[oid]
        else:
            drafted = drafted_narrative(oid, report.period_start, report.period_end)
            english, japanese = drafted["en"], drafted["ja"]
        FunderReportPart.objects.get_or_create(report=report, organization_id=oid,
                                               defaults={"narrative": english, "narrative_ja": japanese})


def narratives(report: FunderReport) -> dict[str, dict]:
    """The parts' narratives by organization (slug): name, English and Japanese text."""
    parts = report.parts.select_related("organization").order_by("organization__name", "id")
    return {p.organization.slug: {"organization": p.organization.name, "en": p.narrative, "ja": p.narrative_ja}
            for p in parts}


def content(report: FunderReport) -> dict:
    """The report's canonical content: what its hash covers and its exports are drawn from. Issued, its figures
    hold the narratives as they were (``figures["narratives"]``): nothing read later changes it."""
    return {
        "title": report.title, "kind": report.kind, "version": report.version,
        "period_start": report.period_start.isoformat(), "period_end": report.period_end.isoformat(),
        "data_as_of": _utc(report.data_as_of),
        "issued_at": _utc(report.issued_at),
        "supersedes": report.supersedes.content_hash if report.supersedes_id else None,
        "change_note": report.change_note,
        "figures": report.figures,
    }


def _utc(value: datetime.datetime | None) -> str | None:
    """A time as the content holds it: UTC (as the database gives it back), whatever zone it was made in."""
    return value.astimezone(datetime.UTC).isoformat() if value is not None else None


def intact(report: FunderReport) -> bool:
    """The stored content still hashes to the hash issued with it."""
    return bool(report.content_hash) and content_hash(content(report)) == report.content_hash


def content_hash(data: dict) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
                          .encode()).hexdigest()


def preview(report: FunderReport, user, parts=None) -> dict:
    """A draft's figures as ``user`` sees them now, for ``parts`` (all of them by default); an issued report's
    as stored."""
    if not report.is_draft:
        return report.figures
    parts = list(report.parts.all() if parts is None else parts)
    return {**report_figures.compute(report, user, [p.organization_id for p in parts]),
            "narratives": narratives(report)}


def export_content(report: FunderReport, user) -> dict:
    """What the PDF and the workbook draw: the stored content and its hash (a draft's figures as of now)."""
    data = content(report)
    if report.is_draft:
        data["figures"] = preview(report, user)
        data["data_as_of"] = data["figures"]["as_of"]
    return {**data, "hash": report.content_hash}


def part_content(report: FunderReport, part: FunderReportPart, user) -> dict:
    """What one organization's part of the report exports: the report's heading (title, period, data date, its
    hash), that organization's figures and narratives, and nothing of the program's nor of another organization
    (the program's figures and weeks are the program manager's). An issued report's part is drawn from what was
    stored; a draft's as the reader sees it now."""
    data = content(report)
    figures = report.figures if not report.is_draft else preview(report, user, [part])
    slug = part.organization.slug
    data["figures"] = {
        "period": figures.get("period", {}), "as_of": figures.get("as_of"), "cycle": figures.get("cycle", ""),
        "organizations": {slug: figures.get("organizations", {}).get(slug, {"name": part.organization.name})},
        "narratives": {slug: figures.get("narratives", {}).get(slug, {})},
    }
    if report.is_draft:
        data["data_as_of"] = figures["as_of"]
    return {**data, "hash": report.content_hash, "part": part.organization.name}


def issue(report: FunderReport, user, now: datetime.datetime | None = None) -> FunderReport:
    """Store the figures and text, hash them, and mark the report issued (and the version it corrects
    superseded). An issued report is answered as it is."""
    with transaction.atomic():
        report = FunderReport.objects.select_for_update().get(pk=report.pk)
        if report.status != ReportStatus.DRAFT:
            if report.status == ReportStatus.ISSUED:
                return report
            raise ReportError(gettext("A superseded report is not issued again."))
        if not access.can(user, access.APPROVE, report):
            raise ReportError(gettext("Only a program manager issues a report."))
        now = now or timezone.now()
        parts = list(report.parts.select_for_update(of=("self",)).select_related("organization"))
        gaps = report_narratives.missing(parts)
        if gaps:
            raise ReportError(gettext("Narratives missing a translation: %(parts)s. Write both languages before "
                                      "issuing.") % {"parts": report_narratives.describe(gaps)})
        found = report_figures.compute(report, user, [p.organization_id for p in parts], now)
        for part in parts:
            part.figures = found["organizations"].get(part.organization.slug, {})
            part._history_user = user
            part.save(update_fields=["figures", "updated"])
        # Stored as JSON gives it back (the hash is of what a later read finds).
        report.figures = json.loads(json.dumps({**found, "narratives": narratives(report)}))
        report.data_as_of = report_figures.as_of(report, now)
        report.status, report.issued_at, report.issued_by = ReportStatus.ISSUED, now, user
        report.content_hash = content_hash(content(report))
        report._history_user = user
        report.save()
        if report.supersedes_id:
            FunderReport.objects.filter(pk=report.supersedes_id, status=ReportStatus.ISSUED).update(
                status=ReportStatus.SUPERSEDED)
    return report


def correct(report: FunderReport, user, note: str) -> FunderReport:
    """A new draft version of an issued report saying what changes; the narratives carried over. Correcting the
    same report again answers the draft already made."""
    note = (note or "").strip()
    if not note:
        raise ReportError(gettext("Say what the correction changes."))
    with transaction.atomic():
        report = FunderReport.objects.select_for_update().get(pk=report.pk)
        existing = FunderReport.objects.filter(supersedes=report).first()
        if existing is not None:
            return existing
        if report.status != ReportStatus.ISSUED:
            raise ReportError(gettext("Only an issued report is corrected."))
        number = (FunderReport.objects.filter(title=report.title).aggregate(n=Max("version"))["n"] or 0) + 1
        draft = FunderReport.objects.create(
            kind=report.kind, title=report.title, period_start=report.period_start, period_end=report.period_end,
            program_cycle=report.program_cycle, version=number, supersedes=report, change_note=note, created_by=user)
        add_parts(draft, {p.organization_id: (p.narrative, p.narrative_ja) for p in report.parts.all()})
    return draft


def create(report: FunderReport, user) -> FunderReport:
    """A new draft with its parts (the page's and the API's create)."""
    report.created_by = report.created_by or user
    with transaction.atomic():
        report.save()
        add_parts(report)
    return report


def comment(part: FunderReportPart, user, text: str) -> FunderReportComment:
    return FunderReportComment.objects.create(part=part, author=user, text=text.strip())
