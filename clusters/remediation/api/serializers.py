"""Remediation API shapes: an action with its steps and faults; the provider's text only for lead SAs and staff."""
from __future__ import annotations

from rest_framework import serializers

from clusters.models import Cluster
from clusters.remediation import failure
from clusters.remediation.choices import ActionKind
from clusters.remediation.models import RemediationAction, RemediationPolicyChange, RemediationStep
from clusters.remediation.rules import policy_for
from portal.core import access, provider_errors


class RemediationStepSerializer(serializers.ModelSerializer):
    class Meta:
        model = RemediationStep
        fields = ["at", "name", "status", "summary", "detail"]


class RemediationActionSerializer(serializers.ModelSerializer):
    steps = RemediationStepSerializer(many=True, read_only=True)
    faults = serializers.SerializerMethodField()

    class Meta:
        model = RemediationAction
        fields = ["id", "organization", "cluster", "kind", "nodes", "state", "reason", "automatic", "refused_rule",
                  "refusal", "repeats", "error", "failure_reason", "provider_nodes", "proposed_by", "approved_by",
                  "proposed_at", "approved_at", "started_at", "executed_at", "finished_at", "escalation",
                  "steps", "faults"]
        read_only_fields = fields

    def get_faults(self, obj) -> list[dict]:
        return [{"fault": row.fault_id, "outcome": row.outcome} for row in obj.fault_rows.all()]

    def to_representation(self, instance):
        data = super().to_representation(instance)
        request = self.context.get("request")
        cooldowns = self.context.setdefault("cooldowns", {})  # one policy read per organization, not per row
        if instance.state == "failed" and instance.organization_id not in cooldowns:
            cooldowns[instance.organization_id] = policy_for(instance.organization_id).cooldown_hours
        words = (failure.told(instance, cooldowns.get(instance.organization_id))
                 or provider_errors.remediation_failure(instance.failure_reason))
        data = provider_errors.redact(data, request, instance.organization_id, {"error": words})
        if request is None or not access.sees_internal(request.user, instance.organization_id):
            data["provider_nodes"] = {}
            for step in data["steps"]:
                step["detail"] = ""
        return data


class ProposeSerializer(serializers.Serializer):
    cluster = serializers.PrimaryKeyRelatedField(queryset=Cluster.objects.all())
    nodes = serializers.ListField(child=serializers.CharField(max_length=255), min_length=1, max_length=100)
    kind = serializers.ChoiceField(choices=ActionKind.choices)
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")


class DeclineSerializer(serializers.Serializer):
    why = serializers.CharField(required=False, allow_blank=True, max_length=250, default="")


class RemediationPolicyChangeSerializer(serializers.ModelSerializer):
    """A change of an organization's consent waiting for (or answered by) a customer engineer."""

    class Meta:
        model = RemediationPolicyChange
        fields = ["id", "organization", "mode", "automatic_kinds", "max_nodes", "cooldown_hours", "before", "widens",
                  "state", "proposed_by", "proposed_at", "decided_by", "decided_at", "why"]
        read_only_fields = fields
