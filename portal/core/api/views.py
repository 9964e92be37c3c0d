from django_filters import rest_framework as filters
from rest_framework.permissions import IsAuthenticated

from portal.core.api.base import PortalModelViewSet, PortalReadOnlyViewSet
from portal.core.api.serializers import MembershipSerializer, OrganizationSerializer, TimelineEntrySerializer
from portal.core.filter_fields import IsoDateTimeFilter
from portal.core.models import Membership, Organization, TimelineEntry
from portal.core.timeline_views import with_tag


class StaffWritesOnly(IsAuthenticated):
    """Organizations are created and changed by staff; everyone else reads what the policy shows."""

    def has_permission(self, request, view):
        if not super().has_permission(request, view):
            return False
        return request.method in ("GET", "HEAD", "OPTIONS") or request.user.is_staff


class OrganizationFilterSet(filters.FilterSet):
    class Meta:
        model = Organization
        fields = ["slug", "home_region"]


class OrganizationViewSet(PortalModelViewSet):
    queryset = Organization.objects.all()
    serializer_class = OrganizationSerializer
    filterset_class = OrganizationFilterSet
    permission_classes = [StaffWritesOnly]
    ordering_fields = ["name", "created"]


class MembershipViewSet(PortalReadOnlyViewSet):
    queryset = Membership.objects.select_related("user")
    serializer_class = MembershipSerializer
    filterset_fields = ["organization", "role"]


class TimelineEntryFilterSet(filters.FilterSet):
    since = IsoDateTimeFilter(field_name="occurred_at", lookup_expr="gte")
    until = IsoDateTimeFilter(field_name="occurred_at", lookup_expr="lte")
    tag = filters.CharFilter(method="filter_tag", label="Entries carrying this tag")

    class Meta:
        model = TimelineEntry
        fields = ["organization", "kind"]

    def filter_tag(self, queryset, name, value):
        return with_tag(queryset, value)


class TimelineEntryViewSet(PortalReadOnlyViewSet):
    queryset = TimelineEntry.objects.all()
    serializer_class = TimelineEntrySerializer
    filterset_class = TimelineEntryFilterSet
