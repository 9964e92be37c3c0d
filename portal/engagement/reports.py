"""The cycle report as CSV and as a PDF (reportlab platypus, as the weekly review's)."""
from __future__ import annotations

import io

from django.http import HttpResponse

from portal.core.csv import csv_response
from portal.core.pdf import paragraph, stylesheet
from portal.engagement.choices import MilestoneKind

HEADER = ["Organization", *[label for _, label in MilestoneKind.choices], "Trained models", "Clusters",
          "Failed launches", "Interactions", "Resolved", "Escalations", "Satisfaction (1–5)"]


def rows(data: dict) -> list[list]:
    return [[r["organization"], *[r["milestones"].get(k, "") for k, _ in MilestoneKind.choices], "; ".join(r["models"]),
             r["clusters"], r["launch_failures"], r["interactions"], r["resolved"], r["escalations"],
             "" if r["satisfaction"] is None else r["satisfaction"]] for r in data["organizations"]]


def csv_of(data: dict):
    return csv_response(f"cycle-{data['cycle']['number']}-report.csv", HEADER, rows(data))


def pdf_of(data: dict) -> HttpResponse:
    from reportlab.lib import colors  # deferred: reportlab is heavy
    from reportlab.lib.pagesizes import A4, landscape  # deferred: reportlab is heavy
    from reportlab.lib.units import mm  # deferred: reportlab is heavy
    from reportlab.platypus import LongTable, SimpleDocTemplate, Spacer, TableStyle  # deferred: reportlab is heavy

    styles = stylesheet()
    small = styles["BodyText"].clone("small", fontSize=7, leading=8.5)
    cycle, totals = data["cycle"], data["totals"]

    def para(value):
        # A PDF is not a spreadsheet: cells print as they are (no formula neutralizing), never as markup.
        return paragraph(value, small)

    buffer = io.BytesIO()
    doc = SimpleDocTemplate(buffer, pagesize=landscape(A4), leftMargin=12 * mm, rightMargin=12 * mm,
                            topMargin=12 * mm, bottomMargin=12 * mm, title=f"GENIAC {cycle['name']} report")
    summary = (f"{totals['organizations']} organizations · {totals['models']} trained models "
               f"({totals['released']} released) · {totals['clusters']} clusters launched "
               f"({totals['launch_failures']} failed) · {totals['interactions']} support interactions, "
               f"{totals['escalations']} escalations · {totals['sessions']} enablement sessions, satisfaction "
               f"{totals['satisfaction'] if totals['satisfaction'] is not None else 'not scored'}")
    story = [
        paragraph(f"GENIAC {cycle['name']} — cycle report", styles["Title"]),
        paragraph(f"{cycle['status']} · {cycle['starts_on'] or '?'} to {cycle['ends_on'] or 'now'}", styles["BodyText"]),
        Spacer(1, 3 * mm), para(summary), Spacer(1, 3 * mm),
        paragraph("Organizations", styles["Heading2"]),
    ]
    body = rows(data)
    if body:
        table = LongTable([[para(h) for h in HEADER], *[[para(c) for c in row] for row in body]], repeatRows=1)
        table.setStyle(TableStyle([
            ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#dde3ea")),
            ("GRID", (0, 0), (-1, -1), 0.25, colors.grey),
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ]))
        story.append(table)
    else:
        story.append(paragraph("No organization took part.", styles["BodyText"]))
    doc.build(story)
    response = HttpResponse(buffer.getvalue(), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="cycle-{cycle["number"]}-report.pdf"'
    return response
