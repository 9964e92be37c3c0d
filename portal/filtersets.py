"""Filters for the program core."""
import django_filters
from django.utils.translation import gettext_lazy as _

from portal.models import Organization


class OrganizationFilterSet(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label=_("Search"))

    class Meta:
        model = Organization
        fields = ["home_region"]

    def search(self, queryset, name, value):
        return queryset.filter(name__icontains=value) | queryset.filter(slug__icontains=value)
