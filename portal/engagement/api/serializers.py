"""Serializers of the engagement API."""
from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from portal.core.models import Cycle, EscalationTarget, Organization, active_cycle_id
from portal.engagement.choices import TRANSITIONS
from portal.engagement.models import Escalation, Milestone, TrainedModel
from workloads.interactions.models import Interaction


class EscalationTargetSerializer(serializers.ModelSerializer):
    class Meta:
        model = EscalationTarget
        fields = ["id", "slug", "name", "kind", "description"]


class EscalationSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="engagement-api:escalation-detail")
    target = serializers.SlugRelatedField(slug_field="slug", queryset=EscalationTarget.objects.all())
    assignee = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    organization = serializers.SlugRelatedField(source="interaction.organization", slug_field="slug", read_only=True)
    question = serializers.CharField(max_length=20000)
    age_hours = serializers.SerializerMethodField()

    class Meta:
        model = Escalation
        fields = ["id", "url", "interaction", "organization", "target", "assignee", "state", "question", "answer",
                  "requested_by", "requested_at", "accepted_at", "answered_at", "closed_at", "state_changed_at",
                  "age_hours"]
        read_only_fields = ["state", "answer", "requested_at", "accepted_at", "answered_at", "closed_at",
                            "state_changed_at"]

    def get_fields(self):
        fields = super().get_fields()
        request = self.context.get("request")
        if request is not None:
            # Only interactions the caller may see can be named (no hint that others exist).
            fields["interaction"].queryset = Interaction.objects.restrict(request.user)
        return fields

    def get_age_hours(self, obj) -> float:
        return round(obj.age.total_seconds() / 3600, 1)

    def validate(self, attrs):
        if self.instance is not None:
            raise serializers.ValidationError("An escalation changes through its transitions only.")
        interaction = attrs["interaction"]
        if not interaction.is_open:
            raise serializers.ValidationError({"interaction": "Only open interactions can be escalated."})
        if not attrs["question"].strip():
            raise serializers.ValidationError({"question": "An escalation needs a question."})
        return attrs


class TransitionSerializer(serializers.Serializer):
    transition = serializers.ChoiceField(choices=sorted(TRANSITIONS))
    answer = serializers.CharField(max_length=20000, required=False, allow_blank=True)




class _OwnOrganizationMixin:
    """Only organizations the caller may see can be named (no hint that others exist)."""

    def get_fields(self):
        fields = super().get_fields()
        request = self.context.get("request")
        if request is not None:
            fields["organization"].queryset = Organization.objects.restrict(request.user)
        return fields


class MilestoneSerializer(_OwnOrganizationMixin, serializers.ModelSerializer):
    organization = serializers.SlugRelatedField(slug_field="slug", queryset=Organization.objects.all())

    class Meta:
        model = Milestone
        fields = ["id", "organization", "kind", "reached_on", "note", "updated"]
        read_only_fields = ["updated"]

    def validate(self, attrs):
        if self.instance is not None and "organization" in attrs and attrs["organization"] != self.instance.organization:
            raise serializers.ValidationError({"organization": "A milestone stays in its organization."})
        org = attrs.get("organization") or getattr(self.instance, "organization", None)
        kind = attrs.get("kind") or getattr(self.instance, "kind", None)
        cycle_id = self.instance.cycle_id if self.instance is not None else active_cycle_id()
        clash = Milestone.objects.filter(organization=org, kind=kind, cycle_id=cycle_id)
        if self.instance is not None:
            clash = clash.exclude(pk=self.instance.pk)
        if clash.exists():
            raise serializers.ValidationError({"kind": "This milestone is already recorded for the cycle."})
        return attrs


class TrainedModelSerializer(_OwnOrganizationMixin, serializers.ModelSerializer):
    organization = serializers.SlugRelatedField(slug_field="slug", queryset=Organization.objects.all())

    class Meta:
        model = TrainedModel
        fields = ["id", "organization", "name", "parameters_billions", "modality", "tokens_billions", "instance_type",
                  "instance_count", "release_url", "released_on", "notes", "created", "updated"]
        read_only_fields = ["created", "updated"]

    def validate(self, attrs):
        if self.instance is not None and "organization" in attrs and attrs["organization"] != self.instance.organization:
            raise serializers.ValidationError({"organization": "A model stays in its organization."})
        instance = TrainedModel(**{**({f: getattr(self.instance, f) for f in self.Meta.fields if f not in (
            "id", "created", "updated")} if self.instance else {}), **attrs})
        try:
            instance.clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc
        return attrs


class CycleSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="engagement-api:cycle-detail")
    blueprints = serializers.SlugRelatedField(many=True, slug_field="slug", read_only=True)

    class Meta:
        model = Cycle
        fields = ["id", "url", "number", "name", "status", "starts_on", "ends_on", "blueprints"]


class StartNextCycleSerializer(serializers.Serializer):
    continuing = serializers.SlugRelatedField(many=True, slug_field="slug", queryset=Organization.objects.all(),
                                              help_text="Slugs of the organizations that continue.")
    name = serializers.CharField(max_length=100, required=False, allow_blank=True)
    starts_on = serializers.DateField(required=False, allow_null=True)
    confirm = serializers.BooleanField(
        required=False, default=False,
        help_text="Without it (or false) nothing starts: the answer (200) says what starting would do, as the "
                  "page's summary does; true starts (or schedules) the next cycle (201).")


class CarriedCountsSerializer(serializers.Serializer):
    cluster = serializers.IntegerField()
    quota = serializers.IntegerField()
    reservation = serializers.IntegerField()
    trained_model = serializers.IntegerField()
    award_request = serializers.IntegerField(help_text="Reservation requests of awards not yet ended nor declined.")


class CycleStartSummarySerializer(serializers.Serializer):
    """What starting the next cycle would do (nothing has started): who continues and leaves, how many live rows of
    each kind move into it and how many stay to wind down, and the lessons learned carried over."""

    confirm_required = serializers.BooleanField()
    starts_on = serializers.DateField()
    at_once = serializers.BooleanField(help_text="True: the switch happens when confirmed; false: it is scheduled.")
    continuing = serializers.ListField(child=serializers.SlugField())
    leaving = serializers.ListField(child=serializers.SlugField())
    carried = CarriedCountsSerializer()
    wind_down = CarriedCountsSerializer()
    lessons = serializers.IntegerField()

    @staticmethod
    def of(summary, starts_on, at_once: bool) -> dict:
        return {"confirm_required": True, "starts_on": starts_on, "at_once": at_once,
                "continuing": [o.slug for o in summary.continuing], "leaving": [o.slug for o in summary.leaving],
                "carried": {k: len(v) for k, v in summary.carried.items()},
                "wind_down": {k: len(v) for k, v in summary.wind_down.items()}, "lessons": summary.lessons}
