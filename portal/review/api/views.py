"""API of the weekly review: the overview figures (scoped) and the frozen reviews (program managers)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from portal.core import access
from portal.core.api.base import PortalReadOnlyViewSet
from portal.review import figures
from portal.review.api.serializers import OverviewSerializer, WeeklyReviewDetailSerializer, WeeklyReviewSerializer
from portal.review.filtersets import WeeklyReviewFilterSet
from portal.review.models import WeeklyReview


class OverviewView(APIView):
    """The program overview's figures. Program managers and staff get every organization; a lead SA gets the
    organizations they lead (the same figures, computed from the rows the policy lets them view). Customers
    are refused: their view is their organization's page."""

    @extend_schema(
        responses=OverviewSerializer,
        parameters=[OpenApiParameter("window", OpenApiTypes.INT, description="Heat-map window in days (1–365).")],
    )
    def get(self, request):
        user = request.user
        if not (access.is_program_manager(user) or access.is_staff(user) or access.led_organizations(user)):
            raise PermissionDenied("The overview is for program managers and lead solutions architects.")
        data = figures.overview(user, window=figures.clean_window(request.query_params.get("window")))
        return Response(OverviewSerializer(data).data)


class WeeklyReviewViewSet(PortalReadOnlyViewSet):
    """Frozen weekly reviews (program managers and staff): snapshot figures, notes, action items and what
    changed since the review before."""

    queryset = WeeklyReview.objects.select_related("frozen_by").prefetch_related("action_items__owner")
    serializer_class = WeeklyReviewSerializer
    filterset_class = WeeklyReviewFilterSet

    def get_serializer_class(self):
        return WeeklyReviewDetailSerializer if self.action == "retrieve" else WeeklyReviewSerializer
