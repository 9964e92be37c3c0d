"""Route cases of the weekly review: the program overview, frozen weekly reviews (program managers only)."""
from __future__ import annotations

from tests.routecases import (
    FORBIDDEN,
    LIST,
    OBJECTS,
    PM,
    PM_WRITES,
    ROUTES,
    Case,
    _memo,
    _static,
    _writes,
)


# --- review: the program overview, frozen weekly reviews (program managers only) --------------------
def _weekly_review(w):
    import datetime

    from portal.review import figures
    from portal.review.models import ActionItem, WeeklyReview

    review = WeeklyReview.objects.create(
        week_start=datetime.date(2026, 1, 5), figures=figures.overview(w.pm), notes="ZZ-ORG-A-SECRET notes", frozen_by=w.pm
    )
    ActionItem.objects.create(review=review, title="ZZ-ORG-A-SECRET follow up", owner=w.lead_a)
    return review


# One review per world (the action item's builder needs the same one; a second would repeat the week).
OBJECTS.update(weekly_review=lambda w: _memo(w, "weekly_review", _weekly_review),
               action_item=lambda w: _memo(w, "weekly_review", _weekly_review).action_items.get())
_PM_ONLY = {"foreign": FORBIDDEN, "expect": PM_WRITES}
_PM_POST = {"foreign": 405, "methods": ("POST",)}
_RV = {
    "review:overview_csv": Case(kwargs=lambda o: {"table": "organizations"}, **_PM_ONLY),
    "review:review_list": Case(**_PM_ONLY),
    "review:review_freeze": Case(**_PM_ONLY),
    "review:review_detail": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_ONLY),
    "review:review_print": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_ONLY),
    "review:review_pdf": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_ONLY),
    "review:review_csv": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk, "table": "organizations"}, **_PM_ONLY),
    "review:review_notes": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_POST),
    "review:actionitem_add": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_POST),
    "review:actionitem_done": Case(kwargs=lambda o: {"pk": o["action_item"].pk}, **_PM_POST),
    "review-api:api-root": Case(api=True, foreign=LIST),
    # Scoped: a lead SA gets the figures of the organizations they lead (lead_b: B's only); customers 403.
    "review-api:overview": Case(api=True, foreign=FORBIDDEN, expect={"customer_a": FORBIDDEN, "lead_b": LIST}),
    "review-api:weeklyreview-list": Case(api=True, foreign=LIST),
    "review-api:weeklyreview-detail": Case(
        api=True, kwargs=lambda o: {"pk": o["weekly_review"].pk}, expect={"customer_a": 404, "lead_a": 404}
    ),
    "review:overview_xlsx": Case(**_PM_ONLY),
    "review:review_xlsx": Case(kwargs=lambda o: {"pk": o["weekly_review"].pk}, **_PM_ONLY),
}
ROUTES.update(_RV)

# review
_writes("review:review_freeze", _static({"notes": "Frozen", "confirm": "1"}), PM)
_writes("review:review_notes", _static({"notes": "Changed"}), PM)
_writes("review:actionitem_add", lambda o: {"title": "Follow up", "owner": o.world.lead_a.pk, "due": "2026-12-31"},
        PM)
_writes("review:actionitem_done", _static({"done": "1"}), PM)
