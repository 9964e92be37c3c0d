"""Filters for escalation lists (the page and the API share them) and the outcomes' cycle."""
import django_filters
from django import forms
from django.utils.translation import gettext_lazy as _

from portal.core import access
from portal.core.cycle_filter import CycleFilterMixin
from portal.core.models import EscalationTarget, Organization
from portal.engagement.choices import OPEN_STATES, EscalationState
from portal.engagement.models import Escalation, Milestone
from workloads.interactions.filtersets import visible_organizations


class OpenOrClosed(forms.NullBooleanSelect):
    """'Any', 'Open', 'Closed' rather than Django's 'Unknown', 'Yes', 'No'."""

    def __init__(self, attrs=None):
        super().__init__(attrs)
        self.choices = [("unknown", _("Any")), ("true", _("Open")), ("false", _("Closed"))]


def _only_a_specialist(user) -> bool:
    roles = access.roles_of(user)
    return bool(access.teams(user)) and not (access.is_staff(user) or access.is_program_manager(user)
                                             or roles.get(access.LEAD_SA) or roles.get(access.CUSTOMER))


def offered_targets(request):
    """A specialist is offered their own teams (the only ones whose escalations they see); others every team."""
    if request is None or not getattr(request.user, "is_authenticated", False):
        return EscalationTarget.objects.none()
    if _only_a_specialist(request.user):
        return EscalationTarget.objects.filter(pk__in=access.teams(request.user))
    return EscalationTarget.objects.all()


def offered_organizations(request):
    """A specialist holds no organization role: they are offered the organizations of their escalations."""
    if request is not None and getattr(request.user, "is_authenticated", False) and _only_a_specialist(request.user):
        return Organization.objects.filter(
            interactions__escalations__target_id__in=access.teams(request.user)).distinct()
    return visible_organizations(request)


class EscalationFilterSet(django_filters.FilterSet):
    state = django_filters.ChoiceFilter(choices=EscalationState.choices, empty_label=_("Any"), label=_("State"))
    open = django_filters.BooleanFilter(method="filter_open", label=_("Open or closed"), widget=OpenOrClosed)
    target = django_filters.ModelChoiceFilter(queryset=offered_targets, to_field_name="slug",
                                              label=_("Team"), empty_label=_("Any"))
    organization = django_filters.ModelChoiceFilter(
        queryset=offered_organizations, field_name="interaction__organization",
        to_field_name="slug", label=_("Organization"), empty_label=_("Any"),
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
