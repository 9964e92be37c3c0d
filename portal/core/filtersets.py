"""Filters for the program core."""
import django_filters
from django.utils.translation import gettext_lazy as _

from portal.core.choices import REGION_CHOICES
from portal.core.field_labels import FIELD_LABELS
from portal.core.models import Organization


class OrganizationFilterSet(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label=_("Search"))
    home_region = django_filters.ChoiceFilter(choices=REGION_CHOICES, label=FIELD_LABELS["home_region"])

    class Meta:
        model = Organization
        fields = ["home_region"]

    def search(self, queryset, name, value):
        return queryset.filter(name__icontains=value) | queryset.filter(slug__icontains=value)
