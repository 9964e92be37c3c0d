"""API for interactions (with their history), enablement sessions and attendance."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from portal import access, provider_errors
from portal.api.base import PortalModelViewSet, PortalReadOnlyViewSet, PortalViewSetMixin
from portal.engagement.models import EscalationTarget
from portal.forms import RestrictedFilterSet
from workloads import services_interactions as services
from workloads.filtersets_interactions import InteractionFilterSet
from workloads.models import (
    ChallengeTag,
    EnablementAttendance,
    EnablementSession,
    Interaction,
    InteractionComment,
    Workload,
)
from workloads.views.enablement import with_scores


class InteractionSerializer(serializers.ModelSerializer):
    tags = serializers.SlugRelatedField(
        many=True, slug_field="slug", queryset=ChallengeTag.objects.all(), required=False,
        error_messages={"does_not_exist": "Unknown challenge tag “{value}”."},
    )
    owner = serializers.SlugRelatedField(
        slug_field="username", queryset=get_user_model().objects.all(), required=False, allow_null=True
    )
    url = serializers.HyperlinkedIdentityField(view_name="interactions-api:interaction-detail")
    age_hours = serializers.SerializerMethodField()
    first_response_hours = serializers.SerializerMethodField()
    slack_thread_url = serializers.SerializerMethodField(help_text="The Slack thread it was logged from, if any.")

    class Meta:
        model = Interaction
        fields = ["id", "url", "organization", "workload", "kind", "summary", "body", "occurred_at", "status", "severity",
                  "owner", "tags", "support_case_id", "resolution", "lesson", "visibility", "escalated_at",
                  "first_response_at", "resolved_at", "last_activity_at", "support_status", "sync_status",
                  "sync_error", "synced_at", "created", "updated", "age_hours", "first_response_hours", "slack_thread_url"]
        read_only_fields = ["escalated_at", "first_response_at", "resolved_at", "last_activity_at", "support_status",
                            "sync_status", "sync_error", "synced_at", "created", "updated"]

    def get_fields(self):
        fields = super().get_fields()
        request = self.context.get("request")
        if "workload" in fields and request is not None:
            # Only workloads the caller may see can be named (no hint that others exist).
            fields["workload"].queryset = Workload.objects.restrict(request.user)
        return fields

    def to_representation(self, instance):
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is not None and not access.sees_internal(request.user, instance.organization_id):
            data["escalated_at"] = None  # escalations are internal; customers never learn of them
        # AWS Support's raw error text is for lead SAs and staff; customers read the portal's words.
        return provider_errors.redact(data, request, instance.organization_id,
                                      {"sync_error": provider_errors.SUPPORT_SYNC_FAILED})

    def get_slack_thread_url(self, obj) -> str | None:
        thread = getattr(obj, "slack_thread", None)  # a missing one-to-one is an AttributeError too
        return thread.permalink if thread is not None else None

    def get_age_hours(self, obj) -> float:
        return round(obj.age.total_seconds() / 3600, 1)

    def get_first_response_hours(self, obj) -> float | None:
        delta = obj.first_response_time
        return None if delta is None else round(delta.total_seconds() / 3600, 1)

    def validate(self, attrs):
        org = attrs.get("organization") or getattr(self.instance, "organization", None)
        if self.instance is not None and "organization" in attrs and attrs["organization"] != self.instance.organization:
            raise serializers.ValidationError({"organization": "An interaction stays in its organization."})
        workload = attrs.get("workload")
        if workload is not None and org is not None and workload.organization_id != org.pk:
            raise serializers.ValidationError({"workload": "The workload belongs to another organization."})
        owner = attrs.get("owner")
        if owner is not None and org is not None and not owner.memberships.filter(
            organization=org, role="lead_sa"
        ).exists():
            raise serializers.ValidationError({"owner": "The owner must be a lead SA of the organization."})
        return attrs


class InteractionCommentSerializer(serializers.ModelSerializer):
    author = serializers.SlugRelatedField(slug_field="username", read_only=True)
    body = serializers.CharField(max_length=20000)

    class Meta:
        model = InteractionComment
        fields = ["id", "interaction", "kind", "author", "body", "old_value", "new_value", "internal", "created"]
        read_only_fields = ["interaction", "kind", "author", "old_value", "new_value", "created"]


class EscalateSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=5000)
    target = serializers.SlugRelatedField(
        slug_field="slug", queryset=EscalationTarget.objects.all(), required=False,
        help_text="The team asked (see /api/engagement/targets/); the account manager when omitted.",
    )


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
        rows = InteractionComment.objects.restrict(request.user).filter(interaction=interaction).select_related("author")
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(InteractionCommentSerializer(page, many=True).data)

    @extend_schema(request=EscalateSerializer, responses=InteractionSerializer)
    @action(detail=True, methods=["post"], serializer_class=EscalateSerializer)
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


class EnablementSessionSerializer(serializers.ModelSerializer):
    attendance_count = serializers.IntegerField(read_only=True)
    average_score = serializers.FloatField(read_only=True, allow_null=True)

    class Meta:
        model = EnablementSession
        fields = ["id", "kind", "topic", "description", "date", "audience", "attendance_count", "average_score"]


class EnablementSessionViewSet(PortalReadOnlyViewSet):
    queryset = EnablementSession.objects.prefetch_related("audience")
    serializer_class = EnablementSessionSerializer
    filterset_fields = ["kind", "date"]

    def get_queryset(self):
        return with_scores(super().get_queryset()).order_by("-date", "-id")


class EnablementAttendanceFilterSet(RestrictedFilterSet):
    class Meta:
        model = EnablementAttendance
        fields = ["session", "organization", "satisfaction"]


class EnablementAttendanceSerializer(serializers.ModelSerializer):
    class Meta:
        model = EnablementAttendance
        fields = ["id", "session", "organization", "attendee", "satisfaction", "comment"]

    def validate(self, attrs):
        session, org = attrs.get("session"), attrs.get("organization")
        if session and org and not session.audience.filter(pk=org.pk).exists():
            raise serializers.ValidationError({"organization": "This organization was not invited to the session."})
        return attrs


class EnablementAttendanceViewSet(PortalViewSetMixin, mixins.CreateModelMixin, mixins.ListModelMixin,
                                  mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    queryset = EnablementAttendance.objects.select_related("organization")
    serializer_class = EnablementAttendanceSerializer
    filterset_class = EnablementAttendanceFilterSet


class ChallengeTagSerializer(serializers.ModelSerializer):
    class Meta:
        model = ChallengeTag
        fields = ["slug", "name", "description"]


class ChallengeTagViewSet(viewsets.ReadOnlyModelViewSet):
    """The taxonomy is program-wide and holds nothing of any organization."""

    queryset = ChallengeTag.objects.all()
    serializer_class = ChallengeTagSerializer
    lookup_field = "slug"
    pagination_class = None
