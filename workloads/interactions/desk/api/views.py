"""API for interactions (with their history) and the challenge taxonomy."""
from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from portal.core import access, submissions
from portal.core.api.base import PortalModelViewSet
from workloads.interactions import services
from workloads.interactions.desk.api.serializers import (
    ChallengeTagSerializer,
    EscalateSerializer,
    InteractionCommentSerializer,
    InteractionSerializer,
)
from workloads.interactions.filtersets import InteractionFilterSet
from workloads.interactions.models import ChallengeTag, Interaction, InteractionComment


class InteractionViewSet(PortalModelViewSet):
    queryset = Interaction.objects.select_related("owner", "slack_thread").prefetch_related("tags")
    serializer_class = InteractionSerializer
    filterset_class = InteractionFilterSet
    ordering_fields = ["occurred_at", "last_activity_at", "severity"]
    http_method_names = ["get", "post", "put", "patch", "head", "options"]

    def perform_create(self, serializer):
        with transaction.atomic():
            instance = serializer.save(created_by=self.request.user)
            self._check_org(instance)
            services.created(instance, self.request.user)

    def perform_update(self, serializer):
        before = services.snapshot(serializer.instance)
        with transaction.atomic():
            instance = serializer.save()
            self._check_org(instance)
            services.changed(instance, before, self.request.user)

    @extend_schema(methods=["GET"], responses=InteractionCommentSerializer(many=True))
    @extend_schema(methods=["POST"], request=InteractionCommentSerializer, responses={201: InteractionCommentSerializer})
    @action(detail=True, methods=["get", "post"], serializer_class=InteractionCommentSerializer)
    @submissions.idempotent
    def history(self, request, pk=None):
        """The interaction's history (GET); add a comment (POST). Customers may comment on shared ones."""
        interaction = self.get_object()  # visible, or 404
        if request.method == "POST":
            if not access.can_in_organization(request.user, access.CHANGE, InteractionComment,
                                              interaction.organization_id):
                raise PermissionDenied("You may not comment here.")
            serializer = InteractionCommentSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            internal = serializer.validated_data.get("internal", False) and access.sees_internal(
                request.user, interaction.organization_id)
            with transaction.atomic():
                entry = services.comment(interaction, request.user, serializer.validated_data["body"], internal)
            return Response(InteractionCommentSerializer(entry).data, status=201)
        # restrict: the interaction's comments beside it, under the comments' own rule (a viewset has no ``visible``)
        rows = InteractionComment.objects.restrict(request.user).filter(interaction=interaction).select_related("author")
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(InteractionCommentSerializer(page, many=True).data)

    @extend_schema(request=EscalateSerializer, responses=InteractionSerializer)
    @action(detail=True, methods=["post"], serializer_class=EscalateSerializer)
    @submissions.idempotent
    def escalate(self, request, pk=None):
        """Escalate an open interaction (lead SAs of its organization)."""
        interaction = self.get_object()  # 404 if invisible, 403 if not changeable
        serializer = EscalateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if not interaction.is_open:
            raise serializers.ValidationError({"status": "Only open interactions can be escalated."})
        with transaction.atomic():
            services.escalate(interaction, request.user, serializer.validated_data["reason"],
                              serializer.validated_data.get("target"))
        return Response(InteractionSerializer(interaction, context={"request": request}).data)

    def check_object_permissions(self, request, obj):
        if self.action == "history":  # commenting is its own permission, checked above
            return viewsets.GenericViewSet.check_object_permissions(self, request, obj)
        return super().check_object_permissions(request, obj)


class ChallengeTagViewSet(viewsets.ReadOnlyModelViewSet):
    """The taxonomy is program-wide and holds nothing of any organization."""

    queryset = ChallengeTag.objects.all()
    serializer_class = ChallengeTagSerializer
    lookup_field = "slug"
    pagination_class = None
