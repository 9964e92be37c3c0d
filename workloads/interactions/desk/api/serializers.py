"""Serializers of interactions (with their history and escalation) and the challenge taxonomy."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import serializers

from portal.core import access, provider_errors
from portal.core.models import EscalationTarget
from workloads.interactions.models import ChallengeTag, Interaction, InteractionComment
from workloads.models import Workload


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


class ChallengeTagSerializer(serializers.ModelSerializer):
    class Meta:
        model = ChallengeTag
        fields = ["slug", "name", "description"]
