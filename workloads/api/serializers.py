"""API serializers. Validation runs the models' clean(), so the API refuses exactly what the forms refuse."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from portal.core.choices import REGION_CODES
from portal.core.models import Organization
from workloads import usage, validators
from workloads.models import CapacityReservation, InstanceQuota, QuotaChangeRequest, Workload


class ComponentSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="A key of the vocabulary, or 'other' (then give a label).")
    version = serializers.CharField(allow_blank=True, required=False, default="")
    label = serializers.CharField(allow_blank=True, required=False)


class InstanceTypeFieldMixin(serializers.Serializer):
    """The API calls it ``instance_type`` like EC2 does (the model field is ``instance_type_name``)."""

    instance_type = serializers.CharField(source="instance_type_name", max_length=32)
    # A plain string here: the region vocabulary is already the schema's HomeRegionEnum, and one choice set
    # with two names is ambiguous for client generators. The model's validators check it.
    region = serializers.CharField(max_length=32, help_text="One of " + ", ".join(sorted(REGION_CODES)) + ".")


class ModelCleanMixin:
    """Run the model's full_clean() on the would-be instance; its errors become a 400 with field errors."""

    clean_exclude: tuple[str, ...] = ()
    derived_fields: tuple[str, ...] = ()  # fields clean() fills in, kept in the validated data

    def validate(self, attrs):
        attrs = super().validate(attrs)
        model = self.Meta.model
        instance = self.instance if self.instance is not None else model()
        originals = {k: getattr(instance, k) for k in attrs if hasattr(instance, k)} if self.instance is not None else {}
        for key, value in attrs.items():
            setattr(instance, key, value)
        try:
            instance.full_clean(exclude=list(self.clean_exclude), validate_unique=True)
        except DjangoValidationError as exc:
            for key, value in originals.items():
                setattr(instance, key, value)
            raise serializers.ValidationError(serializers.as_serializer_error(exc))
        for key in self.derived_fields:
            attrs[key] = getattr(instance, key)
        for key, value in originals.items():
            setattr(instance, key, value)
        return attrs


class OrganizationField(serializers.SlugRelatedField):
    def __init__(self, **kwargs):
        super().__init__(slug_field="slug", queryset=Organization.objects.all(), **kwargs)

    def get_queryset(self):
        request = self.context.get("request")
        return Organization.objects.restrict(request.user) if request else Organization.objects.none()


class VisibleQuotaField(serializers.PrimaryKeyRelatedField):
    """Only quotas the caller may see can be named, so an id never reveals another organization's quota."""

    def get_queryset(self):
        request = self.context.get("request")
        return InstanceQuota.objects.restrict(request.user) if request else InstanceQuota.objects.none()


class WorkloadSerializer(ModelCleanMixin, serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="workloads-api:workload-detail")
    organization = OrganizationField()
    frameworks = ComponentSerializer(many=True, required=False)
    software = ComponentSerializer(many=True, required=False)
    target_languages = serializers.ListField(child=serializers.CharField(), required=False)
    lead_sa = serializers.PrimaryKeyRelatedField(queryset=get_user_model().objects.all(), allow_null=True, required=False)
    # A method field: a dotted source's default is skipped in a PATCH's answer (DRF), which then lacks the field.
    lead_sa_name = serializers.SerializerMethodField()

    class Meta:
        model = Workload
        fields = ["id", "url", "organization", "name", "description", "model_family", "architecture",
                  "architecture_other", "parameters_billions", "modality", "target_languages", "training_stage",
                  "frameworks", "software", "orchestrator", "orchestrator_other", "target_instance_type",
                  "target_instance_count", "fsx_lustre_size_gib", "fsx_lustre_throughput", "s3_bucket", "s3_prefix",
                  "data_repository_path", "openzfs_home_gib", "status", "lead_sa", "lead_sa_name", "created", "updated"]
        read_only_fields = ["created", "updated"]

    def get_lead_sa_name(self, workload) -> str | None:
        return workload.lead_sa.display_name if workload.lead_sa_id else None

    def validate(self, attrs):
        for key in ("frameworks", "software"):
            if key in attrs:
                attrs[key] = [{k: v for k, v in dict(item).items() if k != "label" or v} for item in attrs[key]]
        return super().validate(attrs)


class InstanceQuotaSerializer(ModelCleanMixin, InstanceTypeFieldMixin, serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="workloads-api:instancequota-detail")
    organization = OrganizationField()
    used = serializers.SerializerMethodField(help_text="Instances held today by the organization's clusters of this type and region.")

    class Meta:
        model = InstanceQuota
        fields = ["id", "url", "organization", "instance_type", "region", "count", "used", "start", "end", "notes",
                  "created", "updated"]
        read_only_fields = ["created", "updated"]

    def get_used(self, obj) -> int:
        held = self.context.get("held")
        if held is None:
            return usage.held_for(obj.organization_id, obj.instance_type_name, obj.region)
        return held.get((obj.organization_id, validators.base_instance_type(obj.instance_type_name), obj.region), 0)


class CapacityReservationSerializer(ModelCleanMixin, InstanceTypeFieldMixin, serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="workloads-api:capacityreservation-detail")
    organization = OrganizationField()
    quota = VisibleQuotaField(required=False, allow_null=True, help_text="The quota this reservation backs.")

    class Meta:
        model = CapacityReservation
        fields = ["id", "url", "organization", "reservation_id", "kind", "instance_type", "count", "region",
                  "availability_zone", "start", "end", "quota", "notes", "created", "updated"]
        read_only_fields = ["created", "updated"]


class QuotaChangeRequestSerializer(ModelCleanMixin, InstanceTypeFieldMixin, serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="workloads-api:quotachangerequest-detail")
    organization = OrganizationField()
    quota = VisibleQuotaField(required=False, allow_null=True, help_text="The quota to change; empty for a new quota.")
    instance_type = serializers.CharField(source="instance_type_name", max_length=32, required=False, allow_blank=True,
                                          help_text="Taken from the quota when one is given.")
    region = serializers.CharField(max_length=32, required=False, allow_blank=True,
                                   help_text="Taken from the quota when one is given.")

    class Meta:
        model = QuotaChangeRequest
        fields = ["id", "url", "organization", "quota", "instance_type", "region", "current_count", "requested_count",
                  "start", "end", "justification", "status", "requested_by", "decided_by", "decided_at",
                  "decision_comment", "created"]
        read_only_fields = ["current_count", "status", "requested_by", "decided_by", "decided_at", "decision_comment",
                            "created"]

    derived_fields = ("instance_type_name", "region", "current_count", "start", "end")


class DecisionSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["approve", "reject"])
    comment = serializers.CharField(allow_blank=True, required=False, default="")
