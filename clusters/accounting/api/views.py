from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response

from clusters.accounting import requests
from clusters.accounting.api.serializers import (
    AccountingSettingsSerializer,
    ReservationCheckSerializer,
    ReservationRequestDeclineSerializer,
    ReservationRequestFulfilSerializer,
    ReservationRequestSerializer,
)
from clusters.accounting.models import AccountingSettings, ReservationCheck, ReservationRequest
from portal.core import access, submissions
from portal.core.api.base import PortalReadOnlyViewSet
from portal.core.generic import get_object


class ReservationCheckViewSet(PortalReadOnlyViewSet):
    """What AWS last said of each recorded reservation against the instances the portal counts held on it;
    ``flagged`` where AWS reports fewer in use than held. The error text is kept to the pages of lead SAs."""

    queryset = ReservationCheck.objects.select_related("reservation")
    serializer_class = ReservationCheckSerializer
    filterset_fields = ["organization", "flagged", "status"]


class AccountingSettingsViewSet(PortalReadOnlyViewSet):
    """Organizations' idle and stall thresholds where their lead SAs set them (defaults otherwise)."""

    queryset = AccountingSettings.objects.all()
    serializer_class = AccountingSettingsSerializer


class ReservationRequestViewSet(PortalReadOnlyViewSet):
    """What awards ask the program to reserve (an organization's people read their own; program managers all).
    ``fulfil`` records the reservation bought (a capacity reservation backing the awarded quota); ``decline``
    says why it is not requested. Each is decided once: a second answer is 409."""

    queryset = ReservationRequest.objects.select_related("reservation")
    serializer_class = ReservationRequestSerializer
    filterset_fields = ["organization", "state", "cycle"]

    def _managed(self, request, pk) -> ReservationRequest:
        return get_object(request, ReservationRequest.objects.all(), access.CHANGE,
                          "Only a program manager fulfils or declines a reservation request.", pk=pk)

    @extend_schema(request=ReservationRequestFulfilSerializer, responses=ReservationRequestSerializer)
    @action(detail=True, methods=["post"], serializer_class=ReservationRequestFulfilSerializer)
    @submissions.idempotent
    def fulfil(self, request, pk=None):
        found = self._managed(request, pk)
        body = ReservationRequestFulfilSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            requests.fulfil(found, request.user, body.validated_data["reservation_id"],
                            body.validated_data["availability_zone"], body.validated_data.get("note", ""))
        except requests.RequestError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except ValidationError as exc:
            raise serializers.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages) from exc
        found.refresh_from_db()
        return Response(ReservationRequestSerializer(found, context={"request": request}).data)

    @extend_schema(request=ReservationRequestDeclineSerializer, responses=ReservationRequestSerializer)
    @action(detail=True, methods=["post"], serializer_class=ReservationRequestDeclineSerializer)
    def decline(self, request, pk=None):
        found = self._managed(request, pk)
        body = ReservationRequestDeclineSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            found = requests.decline(found, request.user, body.validated_data["note"])
        except requests.RequestError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(ReservationRequestSerializer(found, context={"request": request}).data)
