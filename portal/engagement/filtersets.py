"""Filters for escalation lists (the page and the API share them)."""
import django_filters

from portal.engagement.choices import OPEN_STATES, EscalationState
from portal.engagement.models import Escalation, EscalationTarget
from workloads.filtersets_interactions import visible_organizations


class EscalationFilterSet(django_filters.FilterSet):
    state = django_filters.ChoiceFilter(choices=EscalationState.choices)
    open = django_filters.BooleanFilter(method="filter_open", label="Open only")
    target = django_filters.ModelChoiceFilter(queryset=EscalationTarget.objects.all(), to_field_name="slug")
    organization = django_filters.ModelChoiceFilter(
        queryset=lambda request: visible_organizations(request), field_name="interaction__organization",
        to_field_name="slug",
    )

    class Meta:
        model = Escalation
        fields = ["state", "target", "organization"]

    def filter_open(self, queryset, name, value):
        if value is None:
            return queryset
        return queryset.filter(state__in=OPEN_STATES) if value else queryset.exclude(state__in=OPEN_STATES)
