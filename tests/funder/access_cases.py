"""Route cases of the report to the funder: the report is program-wide (every organization's people reach its
page, which shows them their own part only; the program manager issues, corrects and exports it); a part is its
organization's (its lead SAs write the narrative of a draft); comments are its people's and the program
manager's. An outsider gets the report's page without organization A's part, and 404 on A's part."""
from __future__ import annotations

import datetime

from tests.routecases import FORBIDDEN, LIST, OBJECTS, PMS, ROUTES, Case, _memo, _static, _writes, api_data, form_data

MARKER = "ZZ-ORG-A-SECRET"
WRITES_PART = frozenset({"lead_a", "staff"})
COMMENTERS = frozenset({"customer_a", "lead_a", "pm", "staff"})


def _report(w):
    def build(w):
        from portal.review.funder.models import FunderReport

        # Program-wide: nothing of organization A in the report itself.
        return FunderReport.objects.create(title="GENIAC 2026 Q3", period_start=datetime.date(2026, 7, 1),
                                           period_end=datetime.date(2026, 9, 30))

    return _memo(w, "funder_report", build)


def _part(w):
    def build(w):
        from portal.review.funder.models import FunderReportPart

        return FunderReportPart.objects.create(report=_report(w), organization=w.org_a,
                                               narrative=f"{MARKER} trained its first model",
                                               narrative_ja=f"{MARKER} 最初のモデルを学習しました")

    return _memo(w, "funder_part", build)


def _comment(w):
    from portal.review.funder.models import FunderReportComment

    return FunderReportComment.objects.create(part=_part(w), author=w.customer_a, text=f"{MARKER} please add")


def _sending(w):
    from portal.review.funder.models import FunderReportSending

    return FunderReportSending.objects.create(report=_report(w), version=1, content_hash="0" * 64,
                                              languages=["en", "ja"], recipients=["ministry@example.go.jp"])


OBJECTS.update(funder_report=_report, funder_part=_part, funder_comment=_comment, funder_sending=_sending)
_report_pk = lambda o: {"pk": o["funder_report"].pk}  # noqa: E731
_part_pk = lambda o: {"pk": o["funder_part"].pk}  # noqa: E731
_comment_pk = lambda o: {"pk": o["funder_comment"].pk}  # noqa: E731
_sending_pk = lambda o: {"pk": o["funder_sending"].pk}  # noqa: E731
# The report is read by every role of an organization (their own part only); specialists hold none.
_READ = {"specialist": 404}
_PM_ONLY = {"customer_a": FORBIDDEN, "lead_a": FORBIDDEN, "specialist": 404}
_NOT_THE_LEAD = {"customer_a": FORBIDDEN, "pm": FORBIDDEN}

ROUTES.update({
    "funder:report_list": Case(foreign=LIST),
    "funder:report_add": Case(foreign=FORBIDDEN, expect={"customer_a": FORBIDDEN, "lead_a": FORBIDDEN}),
    "funder:report_detail": Case(kwargs=_report_pk, foreign=LIST, expect=_READ),
    "funder:report_issue": Case(kwargs=_report_pk, foreign=LIST, expect=_READ),
    "funder:report_correct": Case(kwargs=_report_pk, foreign=LIST, expect=_READ),
    "funder:report_pdf": Case(kwargs=_report_pk, foreign=FORBIDDEN, expect=_PM_ONLY),
    "funder:report_xlsx": Case(kwargs=_report_pk, foreign=FORBIDDEN, expect=_PM_ONLY),
    "funder:report_send": Case(kwargs=_report_pk, foreign=LIST, expect=_READ),
    # An organization's people download their own part (never another's): 404 to outsiders.
    "funder:part_pdf": Case(kwargs=_part_pk),
    "funder:part_xlsx": Case(kwargs=_part_pk),
    "funder:part_edit": Case(kwargs=_part_pk, expect=_NOT_THE_LEAD),
    "funder:part_comment": Case(kwargs=_part_pk),
    "funder-api:api-root": Case(api=True, foreign=LIST),
    "funder-api:report-list": Case(api=True, foreign=LIST),
    "funder-api:report-detail": Case(api=True, kwargs=_report_pk, foreign=LIST, expect=_READ),
    "funder-api:report-issue": Case(api=True, kwargs=_report_pk, foreign=LIST, expect=_READ),
    "funder-api:report-correct": Case(api=True, kwargs=_report_pk, foreign=LIST, expect=_READ),
    "funder-api:report-send": Case(api=True, kwargs=_report_pk, foreign=LIST, expect=_READ),
    "funder-api:sending-list": Case(api=True, foreign=LIST),
    "funder-api:sending-detail": Case(api=True, kwargs=_sending_pk, expect={"customer_a": 404, "lead_a": 404}),
    "funder-api:part-list": Case(api=True, foreign=LIST),
    "funder-api:part-detail": Case(api=True, kwargs=_part_pk),
    "funder-api:comment-list": Case(api=True, foreign=LIST),
    "funder-api:comment-detail": Case(api=True, kwargs=_comment_pk),
})

_writes("funder:report_add", form_data("funder:report_add", title="GENIAC 2026 Q4", kind="quarterly",
                                       period_start="2026-10-01", period_end="2026-12-31"), PMS)
_writes("funder:report_issue", _static({}), PMS)
# A draft is not corrected (only an issued report is): the program manager is told so, nothing is written.
_writes("funder:report_correct", _static({"note": "Beta's cost was missing"}), PMS, writes_rows=False)
_writes("funder:part_edit", form_data("funder:part_edit", "funder_part", narrative="Edited"), WRITES_PART)
_writes("funder:part_comment", _static({"text": "Please mention the release"}), COMMENTERS)
_writes("funder-api:report-issue", _static({}), PMS, success=200)
_writes("funder-api:report-correct", _static({"note": "Beta's cost was missing"}), PMS, success=409,
        writes_rows=False)
_writes("funder-api:part-detail", api_data("funder-api:part-detail", "funder_part", narrative="Edited"), WRITES_PART)
_writes("funder-api:comment-list", lambda o: {"part": o["funder_part"].pk, "text": "Please mention the release"},
        COMMENTERS, success=201, refused={"customer_b": 400, "lead_b": 400, "specialist": 400})
# The matrix's report is a draft, which is not sent: the program manager is told so, nothing is written.
_writes("funder:report_send", _static({"languages": ["en", "ja"]}), PMS, writes_rows=False)
_writes("funder-api:report-send", _static({"languages": ["en", "ja"]}), PMS, success=409, writes_rows=False)
