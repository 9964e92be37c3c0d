"""Filters of the clusters app."""
import django_filters
from django.utils.translation import gettext_lazy as _

from clusters.choices import ClusterState
from clusters.models import Cluster, LaunchJob, StackEvent
from portal.core.cycle_filter import CycleFilterMixin
from portal.core.forms import RestrictedFilterSet


class ClusterFilterSet(CycleFilterMixin, RestrictedFilterSet):
    organization = django_filters.CharFilter(field_name="organization__slug", label=_("Organization (slug)"))
    state = django_filters.ChoiceFilter(choices=ClusterState.choices)
    q = django_filters.CharFilter(field_name="name", lookup_expr="icontains", label=_("Search"))

    class Meta:
        model = Cluster
        fields = ["organization", "state", "region", "instance_type"]


class LaunchJobFilterSet(RestrictedFilterSet):
    class Meta:
        model = LaunchJob
        fields = ["cluster", "kind", "status"]


class StackEventFilterSet(RestrictedFilterSet):
    cluster = django_filters.NumberFilter(field_name="stack__cluster", label=_("Cluster"))

    class Meta:
        model = StackEvent
        fields = ["stack", "status"]
