"""API viewsets: reads and writes through the access policy (portal.core.api.base)."""
from __future__ import annotations

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from portal.core import access, submissions
from portal.core.api.base import PortalModelViewSet
from workloads import services, usage
from workloads.api.serializers import (
    CapacityReservationSerializer,
    DecisionSerializer,
    InstanceQuotaSerializer,
    QuotaChangeRequestSerializer,
    WorkloadSerializer,
)
from workloads.choices import RequestStatus
from workloads.filtersets import (
    CapacityReservationFilterSet,
    InstanceQuotaFilterSet,
    QuotaChangeRequestFilterSet,
    WorkloadFilterSet,
)
from workloads.models import CapacityReservation, InstanceQuota, QuotaChangeRequest, Workload

NO_DELETE = ["get", "post", "put", "patch", "head", "options"]


class WorkloadViewSet(PortalModelViewSet):
    """Workload records. Lead SAs of the organization create and change them; everyone else with access reads."""

    queryset = Workload.objects.select_related("organization", "lead_sa")
    serializer_class = WorkloadSerializer
    filterset_class = WorkloadFilterSet
    ordering_fields = ["name", "parameters_billions", "target_instance_count", "status", "updated"]
    http_method_names = NO_DELETE


class InstanceQuotaViewSet(PortalModelViewSet):
    """Instance quotas with what clusters hold today (``used``). Program managers change them."""

    queryset = InstanceQuota.objects.select_related("organization")
    serializer_class = InstanceQuotaSerializer
    filterset_class = InstanceQuotaFilterSet
    ordering_fields = ["instance_type_name", "region", "count", "end"]
    http_method_names = NO_DELETE

    def get_serializer_context(self):
        ctx = super().get_serializer_context()
        if self.action == "list":
            # One aggregated query for the whole page instead of one per quota.
            ctx["held"] = usage.held(access.organization_ids(self.request.user, access.VIEW, InstanceQuota))
        return ctx


class CapacityReservationViewSet(PortalModelViewSet):
    queryset = CapacityReservation.objects.select_related("organization")
    serializer_class = CapacityReservationSerializer
    filterset_class = CapacityReservationFilterSet
    ordering_fields = ["end", "start", "reservation_id", "count"]
    http_method_names = NO_DELETE


class QuotaChangeRequestViewSet(PortalModelViewSet):
    """Lead SAs ask for a quota change; program managers approve or reject it with ``decide``."""

    queryset = QuotaChangeRequest.objects.select_related("organization")
    serializer_class = QuotaChangeRequestSerializer
    filterset_class = QuotaChangeRequestFilterSet
    ordering_fields = ["created", "status"]
    http_method_names = NO_DELETE

    def perform_create(self, serializer):
        serializer.validated_data["requested_by"] = self.request.user
        super().perform_create(serializer)

    def perform_update(self, serializer):
        if serializer.instance.status != RequestStatus.PENDING:
            raise PermissionDenied("A decided request cannot be changed.")
        super().perform_update(serializer)

    def after_save(self, instance, created):
        services.after_submit(instance, self.request.user, created)

    @extend_schema(request=DecisionSerializer, responses=QuotaChangeRequestSerializer)
    @action(detail=True, methods=["post"])
    @submissions.idempotent
    def decide(self, request, pk=None):
        self.write_action = access.APPROVE  # the object check below asks for "approve", not "change"
        req = self.get_object()  # 404 when invisible, 403 when visible but not the caller's to decide
        decision = DecisionSerializer(data=request.data)
        decision.is_valid(raise_exception=True)
        try:
            req = services.decide(req, request.user, decision.validated_data["decision"] == "approve",
                                  decision.validated_data["comment"])
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc))
        except DjangoValidationError as exc:
            return Response(serializers.as_serializer_error(exc), status=status.HTTP_400_BAD_REQUEST)
        return Response(self.get_serializer(req).data)
