"""Route cases of the call area: calls (public to signed-in organizations, program managers write), applications
(their organization's and the program manager's), reviews (the assigned reviewer's; no role of the matrix reviews
organization A's application, so every role but the program manager and staff gets 404 on them)."""
from __future__ import annotations

import datetime

from tests.routecases import (
    FORBIDDEN,
    LIST,
    OBJECTS,
    PMS,
    ROUTES,
    Case,
    _memo,
    _static,
    _writes,
    api_data,
    form_data,
)

APPLICANTS = frozenset({"customer_a", "lead_a", "pm", "staff"})
OFFER = "8 p5.48xlarge ap-northeast-1 4"


def _call(w):
    def build(w):
        from portal.engagement.calls.models import Call

        # Calls are public to every signed-in organization: nothing of organization A in it.
        return Call.objects.create(
            title="Call for cycle 91", status="open", opens_on=datetime.date(2026, 11, 1),
            closes_on=datetime.date(2026, 12, 31), next_cycle_starts_on=datetime.date(2027, 4, 1),
            offer=[{"instance_type": "p5.48xlarge", "region": "ap-northeast-1", "count": 8, "weeks": 4}],
            criteria=[{"name": "Impact", "weight": 2.0}, {"name": "Record", "weight": 1.0}])

    return _memo(w, "call", build)


def _application(w):
    def build(w):
        from portal.engagement.calls.models import Application

        return Application.objects.create(
            call=_call(w), organization=w.org_a, architecture="dense 100B", data_plan="ZZ-ORG-A-SECRET corpus",
            requested=[{"instance_type": "p5.48xlarge", "region": "ap-northeast-1", "count": 4, "weeks": 4}])

    return _memo(w, "application", build)


def _review(w):
    from portal.engagement.calls.models import ReviewAssignment
    from tests.factories import UserFactory

    return ReviewAssignment.objects.create(application=_application(w), reviewer=UserFactory(username="reviewer_x"),
                                           comment="ZZ-ORG-A-SECRET strong record")


OBJECTS.update(call=_call, application=_application, review=_review)
_call_pk = lambda o: {"pk": o["call"].pk}  # noqa: E731
_app_pk = lambda o: {"pk": o["application"].pk}  # noqa: E731
_review_pk = lambda o: {"pk": o["review"].pk}  # noqa: E731
# The call is seen by every role of an organization; the program manager's pages refuse those who only read it.
_PM_PAGE = {"customer_a": FORBIDDEN, "lead_a": FORBIDDEN, "specialist": 404}
_ONLY_REVIEWER = {"customer_a": 404, "lead_a": 404, "pm": 404, "staff": 404}
_ASSIGNMENTS = {"customer_a": 404, "lead_a": 404}

ROUTES.update({
    "calls:call_list": Case(foreign=LIST),
    "calls:call_add": Case(foreign=FORBIDDEN, expect={"customer_a": FORBIDDEN, "lead_a": FORBIDDEN}),
    "calls:call_detail": Case(kwargs=_call_pk, foreign=LIST, expect={"specialist": 404}),
    "calls:call_edit": Case(kwargs=_call_pk, foreign=FORBIDDEN, expect=_PM_PAGE),
    "calls:call_board": Case(kwargs=_call_pk, foreign=FORBIDDEN, expect=_PM_PAGE),
    "calls:call_award": Case(kwargs=_call_pk, foreign=FORBIDDEN, expect=_PM_PAGE),
    "calls:application_start": Case(kwargs=lambda o: {"pk": o["call"].pk, "org": o["organization"].slug}),
    "calls:application_list": Case(foreign=LIST),
    "calls:application_detail": Case(kwargs=_app_pk),
    "calls:application_edit": Case(kwargs=_app_pk),
    "calls:application_submit": Case(kwargs=_app_pk),
    "calls:application_reopen": Case(kwargs=_app_pk),
    "calls:application_assign": Case(kwargs=_app_pk),
    "calls:application_export": Case(kwargs=_app_pk),
    "calls:review_list": Case(foreign=LIST),
    "calls:review_edit": Case(kwargs=_review_pk, expect=_ONLY_REVIEWER),
    "calls-api:api-root": Case(api=True, foreign=LIST),
    "calls-api:call-list": Case(api=True, foreign=LIST),
    "calls-api:call-detail": Case(api=True, kwargs=_call_pk, foreign=LIST, expect={"specialist": 404}),
    "calls-api:call-award": Case(api=True, kwargs=_call_pk, foreign=LIST, expect={"specialist": 404}),
    "calls-api:application-list": Case(api=True, foreign=LIST),
    "calls-api:application-detail": Case(api=True, kwargs=_app_pk),
    "calls-api:application-submit": Case(api=True, kwargs=_app_pk),
    "calls-api:application-reopen": Case(api=True, kwargs=_app_pk),
    "calls-api:application-versions": Case(api=True, kwargs=_app_pk),
    "calls-api:review-list": Case(api=True, foreign=LIST),
    "calls-api:review-detail": Case(api=True, kwargs=_review_pk, expect=_ASSIGNMENTS),
    "calls-api:review-score": Case(api=True, kwargs=_review_pk, expect=_ASSIGNMENTS),
    "calls-api:review-conflict": Case(api=True, kwargs=_review_pk, expect=_ASSIGNMENTS),
})

_call_form = dict(offer=OFFER, criteria="Impact: 2\nRecord: 1", opens_on="2026-11-01", closes_on="2026-12-31",
                  next_cycle_starts_on="2027-04-01")
_writes("calls:call_add", form_data("calls:call_add", title="Call for cycle 92", status="open", **_call_form), PMS)
_writes("calls:call_edit", form_data("calls:call_edit", "call", **_call_form, description="Edited"), PMS)
# No application is submitted yet: an award of none decides nothing and writes nothing.
_writes("calls:call_award", _static({"note": ""}), PMS, writes_rows=False)
# The application of organization A exists already: starting it again opens it (nothing new is written).
_writes("calls:application_start", _static({}), APPLICANTS, writes_rows=False)
_writes("calls:application_edit", form_data("calls:application_edit", "application",
                                            requested="4 p5.48xlarge ap-northeast-1 4"), APPLICANTS)
_writes("calls:application_submit", _static({}), APPLICANTS)
# A draft is not reopened (only a submitted application is): the program manager is told so, nothing written.
_writes("calls:application_reopen", _static({}), PMS, writes_rows=False)
_writes("calls:application_assign", lambda o: {"reviewer": o.world.lead_b.pk}, PMS)
_writes("calls:review_edit", _static({"score_0": 4, "score_1": 3, "comment": "", "summary": "Clear plan"}), frozenset())
_writes("calls-api:call-list", lambda o: {
    "title": "Call for cycle 92", "status": "open", "opens_on": "2026-11-01", "closes_on": "2026-12-31",
    "next_cycle_starts_on": "2027-04-01", "criteria": [{"name": "Impact", "weight": 1}],
    "offer": [{"instance_type": "p5.48xlarge", "region": "ap-northeast-1", "count": 8, "weeks": 4}]}, PMS)
_writes("calls-api:call-detail", api_data("calls-api:call-detail", "call", description="Edited"), PMS,
        refused={"customer_b": FORBIDDEN, "lead_b": FORBIDDEN})
_writes("calls-api:call-award", _static({"decisions": {}, "note": ""}), PMS, success=200, writes_rows=False,
        refused={"customer_b": FORBIDDEN, "lead_b": FORBIDDEN})
_writes("calls-api:application-list", lambda o: {"call": o["call"].pk, "organization": o["organization"].slug},
        APPLICANTS, success=201, writes_rows=False, refused={"customer_b": 404, "lead_b": 404, "specialist": 404})
_writes("calls-api:application-detail", api_data("calls-api:application-detail", "application",
                                                 data_plan="Edited"), APPLICANTS)
_writes("calls-api:application-submit", _static({}), APPLICANTS, success=201)
_writes("calls-api:application-reopen", _static({}), PMS, success=409, writes_rows=False)
_writes("calls-api:review-score", _static({"scores": {"Impact": 4, "Record": 3}}), frozenset(),
        refused={"pm": FORBIDDEN, "staff": FORBIDDEN})
_writes("calls-api:review-conflict", _static({"note": "former employer"}), frozenset(),
        refused={"pm": FORBIDDEN, "staff": FORBIDDEN})
