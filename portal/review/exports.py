"""Exports of the overview and of frozen reviews: CSV of every table (formula cells neutralized by
``portal.core.csv``), one workbook of them all (``portal.core.xlsx``, one sheet per table of ``TABLES``) and a PDF
of a frozen review (reportlab platypus tables of the snapshot, charts from ``portal.core.pdf_charts``). Tables are
read by people: days in the display time zone, stored codes by their labels (the API keeps both raw).

Headings, labels and sentences are written in the active language, so the workbook and the PDF read Japanese for
a Japanese reader; a CSV's tables are built in English (``csv_of``): its headers are its column names."""
from __future__ import annotations

import io
from collections.abc import Callable

from django.http import Http404, HttpResponse
from django.utils import timezone, translation
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from portal.core import pdf_charts
from portal.core.choices import SEVERITIES_WORST_FIRST as SEVERITIES
from portal.core.csv import csv_response, signed
from portal.core.pdf import paragraph, stylesheet
from portal.core.templatetags.portal_display import code_label, local_day
from portal.core.xlsx import xlsx_response
from portal.engagement.choices import MilestoneKind
from portal.engagement.outcomes import models_label
from portal.review.figures.texts import health_text, validation_text

Table = tuple[list[str], list[list]]
# Accelerator-hours (clusters/accounting) as numbers, under the names the API gives them (a CSV's columns); the
# catalogue has a heading for each, which the workbook (``portal.core.xlsx.heading``) shows a Japanese reader.
CAPACITY_COLUMNS = [gettext_noop("gpu_hours_reserved"), gettext_noop("gpu_hours_held"),
                    gettext_noop("gpu_hours_healthy"), gettext_noop("gpu_hours_busy"), gettext_noop("goodput"),
                    gettext_noop("cost_usd"), gettext_noop("cost_from"), gettext_noop("cost_to"),
                    gettext_noop("cost_per_busy_gpu_hour"), gettext_noop("reservations_flagged")]


def _organizations(f: dict) -> Table:
    header = [gettext("Organization"), gettext("Workloads"), gettext("Lead SAs"), gettext("Clusters"),
              gettext("Clusters by state"), gettext("Health"), gettext("Validation"), gettext("Open critical"),
              gettext("Open high"), gettext("Open normal"), gettext("Open low"), gettext("Oldest open (days)"),
              gettext("Last contact"), gettext("Quota used"), gettext("Quota total"),
              gettext("Reservations ending in 14 days"), gettext("Next reservation end"),
              *CAPACITY_COLUMNS]  # the API's names, in every language
    rows = [[
        o["name"], "; ".join(w["name"] for w in o["workloads"]), "; ".join(o["leads"]), o["clusters_total"],
        "; ".join(f"{code_label(k)} {v}" for k, v in sorted(o["clusters"].items())), health_text(o) or "",
        validation_text(o) or "",
        o["open"].get("critical", 0), o["open"].get("high", 0), o["open"].get("normal", 0), o["open"].get("low", 0),
        "" if o["oldest_open_days"] is None else o["oldest_open_days"], local_day(o["last_contact"]),
        o["quota_used"], o["quota_total"], o["expiring"]["count"], o["expiring"]["next"] or "",
        *["" if o.get(column) is None else o[column] for column in CAPACITY_COLUMNS],  # reviews frozen before accounting have none
    ] for o in f.get("organizations", [])]
    return header, rows


def _totals(f: dict) -> Table:
    return ([gettext("Instance type"), gettext("Used"), gettext("Quota"), gettext("Organizations with quota")],
            [[t["instance_type"], t["used"], t["quota"], t["organizations"]] for t in f["totals"]["by_type"]])


def _week(f: dict) -> Table:
    labels = {"new": gettext("New interactions"), "resolved": gettext("Resolved interactions"),
              "open": gettext("Still open"), "launches": gettext("Launches"), "failures": gettext("Failed launches"),
              "faults": gettext("New GPU faults")}
    return [gettext("Figure"), gettext("Value")], [[label, f["week"].get(key, 0)] for key, label in labels.items()]


def _heatmap(f: dict) -> Table:
    hm = f["heatmap"]
    header = [gettext("Challenge"), *[o["name"] for o in hm["organizations"]], gettext("Total"),
              gettext("Previous window"), gettext("Change")]
    rows = [[gettext(r["name"]), *[c["count"] for c in r["cells"]], r["total"], r["previous"], signed(r["delta"])] for r in hm["rows"]]
    return header, rows


def _outstanding(f: dict) -> Table:
    return ([gettext("Organization"), gettext("Summary"), gettext("Severity"), gettext("Status"), gettext("Owner"),
             gettext("Age (days)")],
            [[r["organization"], r["summary"], code_label(r["severity"]), code_label(r["status"]), r["owner"], r["age_days"]]
             for r in f["outstanding"]])


def _lessons(f: dict) -> Table:
    return ([gettext("Organization"), gettext("Interaction"), gettext("Lesson learned")],
            [[r["organization"], r["summary"], r["lesson"]] for r in f["lessons"]])


def _outcomes(f: dict) -> Table:
    kinds = MilestoneKind.choices
    header = [gettext("Organization"), *[str(label) for _, label in kinds], gettext("Trained models")]
    rows = [[o["organization"], *[o["milestones"].get(k, "") for k, _ in kinds], models_label(o["models"])]
            for o in f.get("outcomes", [])]  # reviews frozen before outcomes existed have none
    return header, rows


def _capacity(f: dict) -> Table:
    capacity = f.get("capacity") or {}  # reviews frozen before accounting have none
    header = [gettext("Week"), gettext("Reserved"), gettext("Held"), gettext("Healthy"), gettext("Busy"),
              gettext("Reserved but not held"), gettext("Held but not healthy"), gettext("Healthy but idle"),
              gettext("Goodput")]
    rows = [[w["week"], *[round(w[k], 1) for k in ("reserved", "held", "healthy", "busy", "lost_unheld",
                                                  "lost_unhealthy", "lost_idle")],
             "" if w["goodput"] is None else w["goodput"]] for w in capacity.get("per_week", [])]
    return header, rows


def _idle(f: dict) -> Table:
    return ([gettext("Organization"), gettext("Cluster"), gettext("Idle since"), gettext("Accelerator-hours lost")],
            [[r["organization"], r["cluster"], local_day(r["since"]), round(r["lost"], 1)]
             for r in (f.get("capacity") or {}).get("idle", [])])


def _forecast(f: dict) -> Table:
    header = [gettext("Organization"), gettext("Reservation or quota"), gettext("Ends"),
              gettext("Accelerator-hours allocated"), gettext("Busy so far"),
              gettext("Busy by its end (at the last two weeks' burn)"), gettext("Share used by its end"),
              gettext("Allocation runs out")]
    rows = []
    for o in f.get("organizations", []):
        ahead = o.get("forecast") or {}
        for entry in [*ahead.get("reservations", []), *ahead.get("quotas", [])]:
            rows.append([o["name"], entry["name"], entry["end"], entry["allocated"], entry["delivered"],
                         entry["by_end"], "" if entry["share"] is None else entry["share"], ahead.get("runs_out") or ""])
    return header, rows


TABLES: dict[str, tuple[str, Callable[[dict], Table]]] = {
    "organizations": (gettext_lazy("Organizations"), _organizations),
    "totals": (gettext_lazy("Program totals by instance type"), _totals),
    "week": (gettext_lazy("This week"), _week),
    "heatmap": (gettext_lazy("Common challenges"), _heatmap),
    "outstanding": (gettext_lazy("Outstanding inquiries"), _outstanding),
    "lessons": (gettext_lazy("Lessons learned this week"), _lessons),
    "outcomes": (gettext_lazy("Outcomes"), _outcomes),
    "capacity": (gettext_lazy("Accelerator-hours per week (reserved → held → healthy → busy)"), _capacity),
    "idle": (gettext_lazy("Idle capacity"), _idle),
    "forecast": (gettext_lazy("Forecast of reservations and quotas"), _forecast),
}


# A workbook's sheet names hold 31 characters: the tables whose title is longer get a short name of their own
# (in English and in Japanese), never a title cut mid-word.
SHEETS = {
    "capacity": gettext_lazy("Accelerator-hours per week"),
    "forecast": gettext_lazy("Forecast"),
}


def table(figures: dict, name: str) -> Table:
    if name not in TABLES:
        raise Http404("No such table.")
    return TABLES[name][1](figures)


def csv_of(figures: dict, name: str, prefix: str):
    with translation.override("en"):  # a CSV's headers are its column names, its labels English
        header, rows = table(figures, name)
    return csv_response(f"{prefix}-{name}.csv", header, rows)


def workbook_of(figures: dict, prefix: str, first: tuple[tuple[str, Table], ...] = ()):
    """Every table of ``TABLES`` (and ``first``, e.g. a review's action items) as one ``.xlsx``, a sheet each,
    with the same headers and rows as the CSVs."""
    sheets = [(title, *t) for title, t in first]
    sheets += [(SHEETS.get(name, title), *builder(figures)) for name, (title, builder) in TABLES.items()]
    return xlsx_response(f"{prefix}.xlsx", sheets)


def changes_table(changes: list[dict]) -> Table:
    return ([gettext("Figure"), gettext("Before"), gettext("After"), gettext("Change")],
            [[c["label"], c["before"], c["after"], signed(c["delta"])] for c in changes])


def action_items_table(items) -> Table:
    yes, no = gettext("yes"), gettext("no")
    return ([gettext("Action"), gettext("Owner"), gettext("Due"), gettext("Done"), gettext("Carried over")],
            [[i.title, i.owner.display_name if i.owner else "", i.due or "", yes if i.done else no,
              yes if i.carried_from_id else no] for i in items])


def _local(value) -> str:
    """A time as the pages show it: the program's display time zone, with its abbreviation."""
    local = timezone.localtime(value)
    return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"


def chart_flowables(figures: dict) -> list:
    """The snapshot's charts (clusters by state, open inquiries by severity, open interactions and GPU faults
    per week, quota use by type) two to a row, then the common-challenges heat map. Reviews frozen before a
    figure existed chart what they hold."""
    # reportlab (and the charts drawn with it) loads when a PDF is asked for, not with every page.
    from reportlab.platypus import Table as Grid  # deferred: reportlab is heavy

    charts = figures.get("charts", {})
    states = sorted(figures.get("totals", {}).get("clusters", {}).items())
    organizations = figures.get("organizations", [])
    by_type = charts.get("quota_by_type", figures.get("totals", {}).get("by_type", []))
    drawings = [
        pdf_charts.bar_chart(gettext("Clusters by state"), [code_label(k) for k, _ in states],
                             [(gettext("Clusters"), [v for _, v in states])]),
        pdf_charts.bar_chart(gettext("Open inquiries by severity"), [code_label(s) for s in SEVERITIES],
                             [(gettext("Open"), [sum(o["open"].get(s, 0) for o in organizations) for s in SEVERITIES])]),
        pdf_charts.bar_chart(gettext("Open interactions per week"),
                             [p["week"][5:] for p in charts.get("open_per_week", [])],
                             [(gettext("Open"), [p["open"] for p in charts.get("open_per_week", [])])]),
        pdf_charts.bar_chart(gettext("GPU faults per week"), [p["week"][5:] for p in charts.get("faults_per_week", [])],
                             [(gettext("Faults"), [p["faults"] for p in charts.get("faults_per_week", [])])]),
        pdf_charts.bar_chart(gettext("Instances by type: running and quota"), [t["instance_type"] for t in by_type],
                             [(gettext("Running"), [t["used"] for t in by_type]),
                              (gettext("Quota"), [t["quota"] for t in by_type])]),
    ]
    program = (figures.get("capacity") or {}).get("program")  # reviews frozen before accounting have none
    if program:
        drawings.append(pdf_charts.waterfall(
            gettext("GPU-hours: reserved, held, healthy, busy"),
            [(gettext("Reserved"), program["reserved"]), (gettext("Held"), program["held"]),
             (gettext("Healthy"), program["healthy"]), (gettext("Busy"), program["busy"])],
            [gettext("not held"), gettext("not healthy"), gettext("idle")]))
    rows = [drawings[i:i + 2] + [""] * (2 - len(drawings[i:i + 2])) for i in range(0, len(drawings), 2)]
    hm = figures.get("heatmap", {"rows": [], "organizations": []})
    window = figures.get("window")
    heat = pdf_charts.heat_map(gettext("Common challenges, last %(window)s days") % {"window": window} if window
                               else gettext("Common challenges"),
                               [gettext(r["name"]) for r in hm["rows"]], [o["name"] for o in hm["organizations"]],
                               [[c["count"] for c in r["cells"]] for r in hm["rows"]])
    return [Grid(rows, hAlign="LEFT"), heat]


def pdf_story(review, changes: list[dict], items) -> list:
    """The PDF's flowables: heading, notes, charts, action items, changes, then every table of the snapshot, in
    the active language. Headings keep with what follows them, so none is left alone at the bottom of a page."""
    from reportlab.lib import colors  # deferred: reportlab is heavy
    from reportlab.lib.units import mm  # deferred: reportlab is heavy
    from reportlab.platypus import LongTable, Spacer, TableStyle  # deferred: reportlab is heavy

    styles = stylesheet()
    small = styles["BodyText"].clone("small", fontSize=7, leading=8.5)
    heading = styles["Heading2"].clone("heading", keepWithNext=1)

    def para(value):
        # A PDF is not a spreadsheet: cells print as they are (no formula neutralizing), never as markup.
        return paragraph(value, small)

    def add_table(title: str, header: list[str], rows: list[list]) -> None:
        story.append(paragraph(title, heading))
        if not rows:
            story.append(paragraph(gettext("Nothing to show."), styles["BodyText"]))
            return
        data = [[para(h) for h in header], *[[para(c) for c in row] for row in rows]]
        t = LongTable(data, repeatRows=1)
        t.setStyle(TableStyle([
            ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#dde3ea")),
            ("GRID", (0, 0), (-1, -1), 0.25, colors.grey),
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ]))
        story.append(t)
        story.append(Spacer(1, 4 * mm))

    frozen = (gettext("Frozen %(when)s by %(person)s") % {"when": _local(review.frozen_at),
                                                         "person": review.frozen_by.display_name}
              if review.frozen_by else gettext("Frozen %(when)s") % {"when": _local(review.frozen_at)})
    story = [
        paragraph(gettext("GENIAC weekly review — week of %(week_start)s")
                  % {"week_start": f"{review.week_start:%Y-%m-%d}"},
                  styles["Title"]),
        paragraph(frozen, styles["BodyText"]),
        Spacer(1, 3 * mm),
        paragraph(gettext("Notes"), heading),
    ]
    no_notes = gettext("No notes.")
    for line in (review.notes or no_notes).splitlines() or [no_notes]:
        story.append(para(line))
    story.append(paragraph(gettext("At a glance"), heading))
    story.extend(chart_flowables(review.figures))
    add_table(gettext("Action items"), *action_items_table(items))
    add_table(gettext("Changes since the previous review"), *changes_table(changes))
    for key, (title, builder) in TABLES.items():
        header, rows = builder(review.figures)
        if key == "organizations":  # a page is too narrow for them: the capacity table below carries the hours
            keep = len(header) - len(CAPACITY_COLUMNS)
            header, rows = header[:keep], [row[:keep] for row in rows]
        add_table(title, header, rows)
    return story


def pdf_response(review, changes: list[dict], items) -> HttpResponse:
    """A PDF of the frozen review (landscape A4), from :func:`pdf_story`."""
    from reportlab.lib.pagesizes import A4, landscape  # deferred: reportlab is heavy
    from reportlab.lib.units import mm  # deferred: reportlab is heavy
    from reportlab.platypus import SimpleDocTemplate  # deferred: reportlab is heavy

    buffer = io.BytesIO()
    doc = SimpleDocTemplate(buffer, pagesize=landscape(A4), leftMargin=12 * mm, rightMargin=12 * mm,
                            topMargin=12 * mm, bottomMargin=12 * mm,
                            title=gettext("GENIAC weekly review — week of %(week_start)s")
                            % {"week_start": f"{review.week_start:%Y-%m-%d}"})
    doc.build(pdf_story(review, changes, items))
    response = HttpResponse(buffer.getvalue(), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="weekly-review-{review.week_start:%Y-%m-%d}.pdf"'
    return response
