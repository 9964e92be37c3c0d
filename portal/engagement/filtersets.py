"""Filters for escalation lists (the page and the API share them) and the outcomes' cycle."""
import django_filters
from django import forms

from portal.engagement.choices import OPEN_STATES, EscalationState
from portal.engagement.cycle_filter import CycleFilterMixin
from portal.engagement.models import Escalation, EscalationTarget, Milestone
from workloads.interactions.filtersets import visible_organizations


class OpenOrClosed(forms.NullBooleanSelect):
    """'Any', 'Open', 'Closed' rather than Django's 'Unknown', 'Yes', 'No'."""

    def __init__(self, attrs=None):
        super().__init__(attrs)
        self.choices = [("unknown", "Any"), ("true", "Open"), ("false", "Closed")]


class EscalationFilterSet(django_filters.FilterSet):
    state = django_filters.ChoiceFilter(choices=EscalationState.choices, empty_label="Any")
    open = django_filters.BooleanFilter(method="filter_open", label="Open or closed", widget=OpenOrClosed)
    target = django_filters.ModelChoiceFilter(queryset=EscalationTarget.objects.all(), to_field_name="slug",
                                              label="Team", empty_label="Any")
    organization = django_filters.ModelChoiceFilter(
        queryset=lambda request: visible_organizations(request), field_name="interaction__organization",
        to_field_name="slug", label="Organization", empty_label="Any",
    )

    class Meta:
        model = Escalation
        fields = ["state", "target", "organization"]

    def filter_open(self, queryset, name, value):
        if value is None:
            return queryset
        return queryset.filter(state__in=OPEN_STATES) if value else queryset.exclude(state__in=OPEN_STATES)


class OutcomeCycleFilterSet(CycleFilterMixin):
    """The outcomes page's cycle selector (its rows come from ``outcomes.figures`` for the cycle chosen)."""

    class Meta:
        model = Milestone
        fields = ["cycle"]
