"""Filters of the weekly reviews (the page and the API share them)."""
from portal.core.cycle_filter import CycleFilterMixin
from portal.core.forms import RestrictedFilterSet
from portal.review.models import WeeklyReview


class WeeklyReviewFilterSet(CycleFilterMixin, RestrictedFilterSet):
    class Meta:
        model = WeeklyReview
        fields = ["week_start"]
