"""API of the engagement model: escalation targets and escalations with their transitions."""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from portal.core import access, submissions
from portal.core.api.base import PortalModelViewSet, PortalReadOnlyViewSet
from portal.core.models import Cycle, EscalationTarget
from portal.engagement import carry, cycles, services
from portal.engagement.api.serializers import (
    CycleSerializer,
    CycleStartSummarySerializer,
    EscalationSerializer,
    EscalationTargetSerializer,
    MilestoneSerializer,
    StartNextCycleSerializer,
    TrainedModelSerializer,
    TransitionSerializer,
)
from portal.engagement.filtersets import EscalationFilterSet
from portal.engagement.models import Escalation, Milestone, TrainedModel


class EscalationTargetViewSet(PortalReadOnlyViewSet):
    queryset = EscalationTarget.objects.all()
    serializer_class = EscalationTargetSerializer
    lookup_field = "slug"


class EscalationViewSet(PortalModelViewSet):
    """Escalations the caller may see (never a customer's). POST raises one on an interaction the caller may
    change; state changes go through ``transition``."""

    queryset = Escalation.objects.select_related("target", "assignee", "requested_by", "interaction__organization")
    serializer_class = EscalationSerializer
    filterset_class = EscalationFilterSet
    http_method_names = ["get", "post", "head", "options"]

    def organization_id_for(self, instance) -> int | None:
        return instance.interaction.organization_id

    def perform_create(self, serializer):
        data = serializer.validated_data
        interaction = data["interaction"]
        if not access.can(self.request.user, access.CHANGE, interaction):
            raise PermissionDenied("You may not escalate this interaction.")
        with transaction.atomic():
            serializer.instance = services.raise_escalation(interaction, self.request.user, data["target"],
                                                            data["question"])

    @extend_schema(request=TransitionSerializer, responses=EscalationSerializer)
    @action(detail=True, methods=["post"], serializer_class=TransitionSerializer)
    @submissions.idempotent
    def transition(self, request, pk=None):
        """Accept, release or answer (the target's specialists); follow up or close (the organization's lead
        SAs). 409 when the escalation is not in a state the transition leaves from."""
        escalation = self.get_object()  # 404 if invisible, 403 if not changeable
        serializer = TransitionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        name = serializer.validated_data["transition"]
        if not services.allowed_by_role(request.user, escalation, name):
            raise PermissionDenied("Your role may not take this transition.")
        try:
            with transaction.atomic():
                services.transition(escalation, request.user, name, serializer.validated_data.get("answer", ""))
        except services.TransitionError as exc:
            if name == "answer" and not serializer.validated_data.get("answer", "").strip():
                raise serializers.ValidationError({"answer": str(exc)}) from exc
            return Response({"detail": str(exc)}, status=409)
        return Response(EscalationSerializer(escalation, context={"request": request}).data)


class MilestoneViewSet(PortalModelViewSet):
    """Milestones per organization; customers record their own organization's."""

    queryset = Milestone.objects.select_related("organization")
    serializer_class = MilestoneSerializer
    filterset_fields = ["kind", "cycle"]

    def perform_create(self, serializer):
        with transaction.atomic():
            instance = serializer.save(updated_by=self.request.user)
            self._check_org(instance)

    def perform_update(self, serializer):
        with transaction.atomic():
            instance = serializer.save(updated_by=self.request.user)
            self._check_org(instance)


class TrainedModelViewSet(MilestoneViewSet):
    """Models trained per organization; customers record their own organization's."""

    queryset = TrainedModel.objects.select_related("organization")
    serializer_class = TrainedModelSerializer
    filterset_fields = ["modality", "instance_type", "cycle"]


class CycleViewSet(PortalReadOnlyViewSet):
    """Program cycles the caller's organizations took part in (program managers: all)."""

    queryset = Cycle.objects.prefetch_related("blueprints")
    serializer_class = CycleSerializer

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"])
    def report(self, request, pk=None):
        """The cycle report's figures (program managers and staff): outcomes, launches, support, satisfaction."""
        cycle = self.get_object()
        if not (access.is_program_manager(request.user) or access.is_staff(request.user)):
            raise PermissionDenied("The cycle report is for program managers.")
        return Response(cycles.report(cycle))

    @extend_schema(request=StartNextCycleSerializer, responses={200: CycleStartSummarySerializer, 201: CycleSerializer})
    @action(detail=False, methods=["post"], url_path="start-next", serializer_class=StartNextCycleSerializer)
    @submissions.idempotent
    def start_next(self, request):
        """Start the next cycle (program managers), in two steps as on the page: without ``confirm`` the answer
        (200) is the summary of what starting would do, and nothing starts; with ``"confirm": true`` today (or
        without ``starts_on``) archives the active cycle and carries what is live over at once (201); a later
        ``starts_on`` schedules the switch for that day (the answer's ``status`` is then "planned"). Send an
        ``Idempotency-Key`` to make a retried confirmation start one cycle."""
        current = cycles.active()
        if current is None or not access.can(request.user, access.CHANGE, current):
            raise PermissionDenied("Program managers start the next cycle.")
        serializer = StartNextCycleSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        continuing = [o.pk for o in data["continuing"]]
        if not data["confirm"]:
            if not continuing:
                raise serializers.ValidationError({"continuing": "Choose at least one organization that continues."})
            today = timezone.localdate()
            starts_on = data.get("starts_on") or today
            if current.starts_on and starts_on < current.starts_on:
                raise serializers.ValidationError({"starts_on": "The next cycle cannot start before the current one."})
            unknown = set(continuing) - set(current.participations.values_list("organization_id", flat=True))
            if unknown:
                raise serializers.ValidationError(
                    {"continuing": "Some of the organizations chosen do not take part in the current cycle."})
            summary = carry.summary(current, continuing, starts_on)
            return Response(CycleStartSummarySerializer.of(summary, starts_on, starts_on <= today))
        try:
            nxt = cycles.start_next(request.user, continuing=continuing,
                                    name=data.get("name", ""), starts_on=data.get("starts_on"))
        except cycles.CycleError as exc:
            raise serializers.ValidationError({"detail": str(exc)}) from exc
        return Response(CycleSerializer(nxt, context={"request": request}).data, status=201)
