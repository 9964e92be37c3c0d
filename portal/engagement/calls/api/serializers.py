"""Serializers of the call area. Lines and criteria are JSON, validated by the same code as the pages'."""
from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from portal.core import instance_types
from portal.core.api.base import PortalModelSerializer
from portal.core.choices import REGION_CODES
from portal.engagement.calls import lines
from portal.engagement.calls.forms import parse_criteria
from portal.engagement.calls.models import Application, ApplicationVersion, Call, ReviewAssignment

# What a capacity line is, as the schema says it (``lines.clean`` checks the same): a catalogued instance type, a
# region the program uses, 1 to MAX_COUNT instances for 1 to MAX_WEEKS weeks.
LINE = {
    "type": "object",
    "properties": {
        "instance_type": {"type": "string", "enum": [t.name for t in instance_types.all_types()]},
        "region": {"type": "string", "enum": sorted(REGION_CODES)},
        "count": {"type": "integer", "minimum": 1, "maximum": lines.MAX_COUNT},
        "weeks": {"type": "integer", "minimum": 1, "maximum": lines.MAX_WEEKS},
    },
    "required": ["instance_type", "region", "count", "weeks"],
}
LINES = {"type": "array", "items": LINE}
MAX_WEIGHT = 1e300  # any weight stored as a JSON number
# A criterion: a name with something other than blanks, on one line, and a positive (finite) weight. The names
# differ (a rule across items, which the schema does not state).
CRITERION = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": "^[^\\x00\\n\\r\\v\\f\\x1c-\\x1e\\x85\\u2028\\u2029]*"
                                              "[^\\s\\x00][^\\x00\\n\\r\\v\\f\\x1c-\\x1e\\x85\\u2028\\u2029]*$"},
        "weight": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_WEIGHT},
    },
    "required": ["name", "weight"],
}


@extend_schema_field(LINES)
class LinesField(serializers.JSONField):
    """Capacity lines as JSON (a list of objects: not form-encodable)."""


@extend_schema_field({"type": "array", "items": CRITERION})
class CriteriaField(serializers.JSONField):
    """Review criteria as JSON: a list of {name, weight}."""


@extend_schema_field({"type": "object", "propertyNames": {"pattern": "^[0-9]{1,18}$"}, "additionalProperties": LINES})
class DecisionsField(serializers.DictField):
    """{application id: awarded lines}."""

    child = serializers.ListField(child=serializers.DictField())


def _lines(value):
    try:
        return lines.clean(value)
    except ValidationError as exc:
        raise serializers.ValidationError(exc.messages) from exc


class CallSerializer(PortalModelSerializer):
    offered_hours = serializers.SerializerMethodField()
    offer = LinesField(required=False)
    criteria = CriteriaField(required=False)

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
        for c in value:  # one line each in the text the pages' parser reads, with a finite number as weight
            name, weight = c.get("name", ""), c.get("weight")
            if not isinstance(name, str) or len(name.splitlines()) > 1:
                raise serializers.ValidationError("A criterion's name is text on one line.")
            if isinstance(weight, bool) or not isinstance(weight, int | float) or not weight <= MAX_WEIGHT:
                raise serializers.ValidationError("A criterion's weight is a number.")
        try:
            return parse_criteria("\n".join(f"{c.get('name', '')}: {c.get('weight', '')}" for c in value))
        except ValidationError as exc:
            raise serializers.ValidationError(exc.messages) from exc


class ApplicationVersionSerializer(PortalModelSerializer):
    content = serializers.JSONField(read_only=True)

    class Meta:
        model = ApplicationVersion
        fields = ["id", "number", "content", "content_hash", "submitted_at"]


class ApplicationSerializer(PortalModelSerializer):
    """Applicants write the draft's fields; status, record, award and decision are the services'."""

    requested = LinesField(required=False)
    awarded = LinesField(read_only=True)  # each line also names the offering AWS gave (source, offering_id)

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

    decisions = DecisionsField()
    note = serializers.CharField(required=False, allow_blank=True)


class AwardResultSerializer(serializers.Serializer):
    """What an award wrote: quotas and reservation requests made, applications awarded and declined."""

    quotas = serializers.IntegerField()
    reservation_requests = serializers.IntegerField()
    awarded = serializers.IntegerField()
    declined = serializers.IntegerField()
