"""Filters of the audit trail's page (and its CSV)."""
import django_filters
from django.utils.translation import gettext_lazy as _

from portal.core.audit.models import AuditEvent, AuditKind
from portal.core.models import Organization


def offered_organizations(request):
    if request is None or not getattr(request.user, "is_authenticated", False):
        return Organization.objects.none()
    return Organization.objects.restrict(request.user).order_by("name")


class AuditEventFilterSet(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=AuditKind.choices, empty_label=_("Any"), label=_("What"))
    organization = django_filters.ModelChoiceFilter(queryset=offered_organizations, to_field_name="slug",
                                                    label=_("Organization"), empty_label=_("Any"))
    actor = django_filters.CharFilter(field_name="actor_name", lookup_expr="icontains", label=_("Who"))
    since = django_filters.DateFilter(field_name="occurred_at", lookup_expr="date__gte", label=_("From"))
    until = django_filters.DateFilter(field_name="occurred_at", lookup_expr="date__lte", label=_("To"))

    class Meta:
        model = AuditEvent
        fields = ["kind", "organization", "actor", "since", "until"]
