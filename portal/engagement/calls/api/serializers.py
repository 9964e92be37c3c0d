"""Serializers of the call area. Lines and criteria are JSON, validated by the same code as the pages'."""
from __future__ import annotations

from django.core.exceptions import ValidationError
from rest_framework import serializers

from portal.api.base import PortalModelSerializer
from portal.engagement.calls import lines
from portal.engagement.calls.forms import parse_criteria
from portal.engagement.calls.models import Application, ApplicationVersion, Call, ReviewAssignment


def _lines(value):
    try:
        return lines.clean(value)
    except ValidationError as exc:
        raise serializers.ValidationError(exc.messages) from exc


class CallSerializer(PortalModelSerializer):
    offered_hours = serializers.SerializerMethodField()

    class Meta:
        model = Call
        fields = ["id", "title", "description", "status", "opens_on", "closes_on", "next_cycle_starts_on", "offer",
                  "offered_hours", "reservations_planned", "questions", "criteria", "cycle"]
        read_only_fields = ["cycle"]

    def get_offered_hours(self, obj) -> int:
        return lines.total_hours(obj.offer)

    def validate_offer(self, value):
        return _lines(value)

    def validate_criteria(self, value):
        if not isinstance(value, list) or not all(isinstance(c, dict) for c in value):
            raise serializers.ValidationError("Criteria are a list of {name, weight}.")
        try:
            return parse_criteria("\n".join(f"{c.get('name', '')}: {c.get('weight', '')}" for c in value))
        except ValidationError as exc:
            raise serializers.ValidationError(exc.messages) from exc


class ApplicationVersionSerializer(PortalModelSerializer):
    class Meta:
        model = ApplicationVersion
        fields = ["id", "number", "content", "content_hash", "submitted_at"]


class ApplicationSerializer(PortalModelSerializer):
    """Applicants write the draft's fields; status, record, award and decision are the services'."""

    class Meta:
        model = Application
        fields = ["id", "call", "organization", "status", "architecture", "parameters_billions", "tokens_billions",
                  "modality", "frameworks", "requested", "data_plan", "milestones_plan", "answers", "record",
                  "record_as_of", "awarded", "decision_note", "decided_at", "created", "updated"]
        read_only_fields = ["call", "organization", "status", "record", "record_as_of", "awarded", "decision_note",
                            "decided_at", "created", "updated"]

    def validate_requested(self, value):
        return _lines(value)


class StartApplicationSerializer(serializers.Serializer):
    call = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
    organization = serializers.SlugField()


class ReviewSerializer(PortalModelSerializer):
    application = serializers.PrimaryKeyRelatedField(read_only=True)

    class Meta:
        model = ReviewAssignment
        fields = ["id", "application", "scores", "comment", "summary", "submitted_at"]
        read_only_fields = ["submitted_at"]


class ConflictSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, max_length=2000)


class AwardSerializer(serializers.Serializer):
    """``decisions``: {application id: awarded lines}; an empty list declines."""

    decisions = serializers.DictField(child=serializers.ListField(child=serializers.DictField()))
    note = serializers.CharField(required=False, allow_blank=True)
