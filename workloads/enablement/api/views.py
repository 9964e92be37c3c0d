"""API for enablement sessions (read-only, with their scores) and attendance (recorded by lead SAs and program
managers)."""
from __future__ import annotations

from rest_framework import mixins, viewsets

from portal.core.api.base import IdempotentCreateMixin, PortalReadOnlyViewSet, PortalViewSetMixin
from workloads.enablement.api.serializers import EnablementAttendanceSerializer, EnablementSessionSerializer
from workloads.enablement.filtersets import EnablementAttendanceFilterSet, EnablementSessionFilterSet
from workloads.enablement.models import EnablementAttendance, EnablementSession
from workloads.enablement.views import with_scores


class EnablementSessionViewSet(PortalReadOnlyViewSet):
    queryset = EnablementSession.objects.prefetch_related("audience")
    serializer_class = EnablementSessionSerializer
    filterset_class = EnablementSessionFilterSet

    def get_queryset(self):
        return with_scores(super().get_queryset()).order_by("-date", "-id")


class EnablementAttendanceViewSet(PortalViewSetMixin, IdempotentCreateMixin, mixins.CreateModelMixin, mixins.ListModelMixin,
                                  mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    queryset = EnablementAttendance.objects.select_related("organization")
    serializer_class = EnablementAttendanceSerializer
    filterset_class = EnablementAttendanceFilterSet
