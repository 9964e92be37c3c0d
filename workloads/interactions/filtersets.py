"""Filters for interaction lists (pages and API share them)."""
import django_filters
from django import forms
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from portal.core.choices import OPEN_STATUSES, InteractionStatus, MembershipRole, Severity, Visibility
from portal.core.filter_fields import IsoDateTimeFilter
from portal.core.forms import RestrictedFilterSet
from portal.core.models import Organization
from workloads.interactions.choices import InteractionKind
from workloads.interactions.models import ChallengeTag, Interaction


def visible_organizations(request):
    """Only organizations the user sees are offered (and accepted) as a filter."""
    if request is None:
        return Organization.objects.none()
    return Organization.objects.restrict(request.user)


class OpenSelect(forms.NullBooleanSelect):
    """'Any', 'Open', 'Resolved' rather than Django's 'Unknown', 'Yes', 'No'."""

    def __init__(self, attrs=None):
        super().__init__(attrs)
        self.choices = [("unknown", _("Any")), ("true", _("Open")), ("false", _("Resolved"))]


def _owners(request):
    """Lead SAs of the organizations the user sees (never the whole user table)."""
    return get_user_model().objects.filter(
        memberships__role=MembershipRole.LEAD_SA, memberships__organization__in=visible_organizations(request)
    ).distinct().order_by("first_name", "last_name", "username")


class InteractionFilterSet(RestrictedFilterSet):
    q = django_filters.CharFilter(method="search", label=_("Search"))
    organization = django_filters.ModelChoiceFilter(
        queryset=lambda request: visible_organizations(request), field_name="organization", to_field_name="slug"
    )
    kind = django_filters.ChoiceFilter(choices=InteractionKind.choices)
    status = django_filters.ChoiceFilter(choices=InteractionStatus.choices)
    severity = django_filters.ChoiceFilter(choices=Severity.choices)
    visibility = django_filters.ChoiceFilter(choices=Visibility.choices)
    tag = django_filters.ModelChoiceFilter(
        queryset=ChallengeTag.objects.all(), field_name="tags", to_field_name="slug", label=_("Tag")
    )
    open = django_filters.BooleanFilter(method="only_open", label=_("Open or resolved"), widget=OpenSelect)
    owner = django_filters.ModelChoiceFilter(queryset=lambda request: _owners(request), label=_("Owner"))
    # The page's date range: whole days in the display time zone ("To" includes its day).
    from_date = django_filters.DateFilter(field_name="occurred_at", lookup_expr="date__gte", label=_("From"),
                                          widget=forms.DateInput(attrs={"type": "date"}))
    to_date = django_filters.DateFilter(field_name="occurred_at", lookup_expr="date__lte", label=_("To"),
                                        widget=forms.DateInput(attrs={"type": "date"}))
    # The API's exact bounds (ISO 8601 date-times).
    since = IsoDateTimeFilter(field_name="occurred_at", lookup_expr="gte", label=_("Since"))
    until = IsoDateTimeFilter(field_name="occurred_at", lookup_expr="lte", label=_("Until"))

    class Meta:
        model = Interaction
        fields = ["organization", "kind", "status", "severity", "visibility", "tag", "owner"]

    def search(self, queryset, name, value):
        return queryset.filter(Q(summary__icontains=value) | Q(body__icontains=value)
                               | Q(support_case_id__icontains=value))

    def only_open(self, queryset, name, value):
        if value is None:
            return queryset
        return queryset.filter(status__in=OPEN_STATUSES) if value else queryset.exclude(status__in=OPEN_STATUSES)
