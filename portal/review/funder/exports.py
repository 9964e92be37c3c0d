"""A report to the funder as PDF and as workbook, in English or Japanese, drawn from its content alone
(``services.content``): an issued report's stored figures and narratives, so drawing it again gives the same
bytes. The PDF is reportlab's invariant mode (fixed creation date and document id), the workbook has its
document times and zip entry times set to the data's date. The PDF and workbook code is the portal's
(``portal.core.pdf``, ``portal.core.pdf_charts``, ``portal.core.xlsx``), Japanese fonts included."""
from __future__ import annotations

import datetime
import io

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from portal.core import pdf_charts
from portal.core.pdf import paragraph, stylesheet
from portal.core.xlsx import workbook_bytes
from portal.engagement.choices import MilestoneKind

LANGUAGES = ("en", "ja")
LANGUAGE_NAMES = {"en": gettext_lazy("English"), "ja": gettext_lazy("Japanese")}
# The columns of the per-organization table: key in the figures, heading (translated when drawn).
COLUMNS = (
    ("gpu_hours_reserved", "Reserved GPU-hours"), ("gpu_hours_held", "Held GPU-hours"),
    ("gpu_hours_healthy", "Healthy GPU-hours"), ("gpu_hours_busy", "Busy GPU-hours"), ("goodput", "Goodput"),
    ("cost_usd", "Cost (USD)"), ("faults", "GPU incidents"), ("critical", "Critical incidents"),
    ("fault_to_healthy_hours", "Mean hours to a healthy node"), ("milestones_reached", "Milestones reached"),
    ("models_count", "Models trained"), ("released", "Models released"), ("sessions", "Enablement sessions"),
    ("attendees", "Attendees"), ("interactions", "Support interactions"), ("escalations", "Escalations"),
    ("satisfaction", "CSAT (1–5)"),
)


def language_of(code: str | None) -> str:
    return code if code in LANGUAGES else "en"


def _value(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return round(value, 2)
    return value


def _rows(figures: dict) -> tuple[list[str], list[list]]:
    """The table of figures: one row per organization, then the program's (absent from one organization's part:
    ``services.part_content`` leaves the program's figures out)."""
    header = [_("Organization"), *[_(label) for _key, label in COLUMNS]]
    rows = [[org["name"], *[_value(org.get(key)) for key, _label in COLUMNS]]
            for org in figures.get("organizations", {}).values()]
    if "program" in figures:
        program = {**figures["program"], "models_count": figures["program"].get("models")}
        rows.append([_("Program"), *[_value(program.get(key)) for key, _label in COLUMNS]])
    return header, rows


def _narrative(entry: dict, language: str) -> str:
    """The narrative written in ``language`` (each language prints its own; an issued report has both)."""
    return (entry.get(language) or "").strip() or _("No narrative written in this language yet.")


def _title(content: dict) -> str:
    return _("%(title)s (version %(version)s)") % {"title": content["title"], "version": content["version"]}


def _stamp(content: dict) -> str:
    return _("Period %(start)s to %(end)s · data as of %(as_of)s") % {
        "start": content["period_start"], "end": content["period_end"], "as_of": content["data_as_of"] or _("now")}


def workbook(content: dict, language: str) -> bytes:
    """The report as a workbook: a summary sheet, the figures per organization and for the program, the weeks'
    accelerator-hours, milestones and models, and the narratives."""
    with translation.override(language_of(language)):
        figures = content["figures"]
        summary = [[_("Report"), _title(content)], *([[_("Part of"), content["part"]]] if content.get("part") else []),
                   [_("Period"), f"{content['period_start']} – {content['period_end']}"],
                   [_("Data as of"), content["data_as_of"] or ""], [_("Issued"), content.get("issued_at") or _("draft")],
                   [_("Corrects"), content.get("supersedes") or ""], [_("What changed"), content.get("change_note") or ""]]
        weeks = [[w["week"], *[_value(w.get(k)) for k in ("reserved", "held", "healthy", "busy", "goodput")]]
                 for w in figures.get("per_week", [])]
        outcomes = []
        for org in figures.get("organizations", {}).values():
            for kind, day in sorted(org.get("milestones", {}).items(), key=lambda kv: kv[1]):
                outcomes.append([org["name"], _("Milestone"), str(MilestoneKind(kind).label), day])
            for model in org.get("models", []):
                outcomes.append([org["name"], _("Model"), model["name"], model.get("released_on") or ""])
        narratives = [[entry["organization"], _narrative(entry, language)]
                      for entry in figures.get("narratives", {}).values()]
        when = datetime.datetime.fromisoformat(content["data_as_of"]) if content["data_as_of"] else None
        sheets = [(_("Summary"), [_("Item"), _("Value")], summary), (_("Figures"), *_rows(figures))]
        if "program" in figures:  # the weeks are the program's
            sheets.append((_("GPU-hours per week"),
                           [_("Week"), _("Reserved"), _("Held"), _("Healthy"), _("Busy"), _("Goodput")], weeks))
        sheets += [(_("Outcomes"), [_("Organization"), _("Kind"), _("Name"), _("Date")], outcomes),
                   (_("Narratives"), [_("Organization"), _("Narrative")], narratives)]
        return workbook_bytes(sheets, fixed=when or datetime.datetime(2000, 1, 1))


def pdf(content: dict, language: str) -> bytes:
    """The report as a PDF: title, the program's GPU-hours waterfall and weekly chart, the table of figures, then
    one section per organization (its waterfall, figures and narrative)."""
    from reportlab.lib import colors  # deferred: reportlab is heavy
    from reportlab.lib.pagesizes import A4, landscape  # deferred: reportlab is heavy
    from reportlab.lib.units import mm  # deferred: reportlab is heavy
    from reportlab.platypus import LongTable, SimpleDocTemplate, Spacer, TableStyle  # deferred: reportlab is heavy
    from reportlab.platypus import Table as Grid  # deferred: reportlab is heavy

    with translation.override(language_of(language)):
        styles = stylesheet()
        small = styles["BodyText"].clone("small", fontSize=7, leading=8.5)
        heading = styles["Heading2"].clone("heading", keepWithNext=1)
        figures = content["figures"]
        program = figures.get("program", {})

        def waterfall(title: str, row: dict):
            return pdf_charts.waterfall(title, [
                (_("Reserved"), row.get("gpu_hours_reserved") or 0), (_("Held"), row.get("gpu_hours_held") or 0),
                (_("Healthy"), row.get("gpu_hours_healthy") or 0), (_("Busy"), row.get("gpu_hours_busy") or 0)],
                [_("not held"), _("not healthy"), _("idle")])

        weeks = figures.get("per_week", [])
        story = [
            paragraph(_title(content), styles["Title"]),
            paragraph(_stamp(content), styles["BodyText"]),
            paragraph(_("Content hash (SHA-256): %(hash)s") % {"hash": content.get("hash") or _("not issued")}, small),
        ]
        if content.get("change_note"):
            story.append(paragraph(_("Corrects the previous version: %(note)s") % {"note": content["change_note"]},
                                   styles["BodyText"]))
        if content.get("part"):
            story.append(paragraph(_("The part of %(organization)s in this report.")
                                   % {"organization": content["part"]}, styles["BodyText"]))
        else:
            story += [Spacer(1, 3 * mm), paragraph(_("The program"), heading), Grid([[
                waterfall(_("GPU-hours: reserved, held, healthy, busy"), program),
                pdf_charts.bar_chart(_("Busy GPU-hours per week"), [w["week"][5:] for w in weeks],
                                     [(_("Busy"), [w.get("busy") or 0 for w in weeks])]),
            ]], hAlign="LEFT")]
        header, rows = _rows(figures)
        table = LongTable([[paragraph(h, small) for h in header], *[[paragraph(c, small) for c in row] for row in rows]],
                          repeatRows=1)
        table.setStyle(TableStyle([("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#dde3ea")),
                                   ("GRID", (0, 0), (-1, -1), 0.25, colors.grey), ("VALIGN", (0, 0), (-1, -1), "TOP")]))
        story += [paragraph(_("Figures per organization"), heading), table]
        narratives = figures.get("narratives", {})
        for slug, org in figures.get("organizations", {}).items():
            story += [Spacer(1, 4 * mm), paragraph(org["name"], heading), waterfall(org["name"], org)]
            models = "; ".join(m["name"] for m in org.get("models", [])) or _("none")
            reached = "; ".join(f"{MilestoneKind(k).label} {d}" for k, d in sorted(org.get("milestones", {}).items(),
                                                                                  key=lambda kv: kv[1])) or _("none")
            story.append(paragraph(_("Milestones reached: %(milestones)s · Models: %(models)s")
                                   % {"milestones": reached, "models": models}, small))
            for line in _narrative(narratives.get(slug, {}), language).splitlines():
                story.append(paragraph(line, styles["BodyText"]))
        buffer = io.BytesIO()
        doc = SimpleDocTemplate(buffer, pagesize=landscape(A4), leftMargin=12 * mm, rightMargin=12 * mm,
                                topMargin=12 * mm, bottomMargin=12 * mm, title=_title(content), invariant=1)
        doc.build(story)
        return buffer.getvalue()
