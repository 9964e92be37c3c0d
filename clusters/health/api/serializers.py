"""API serializers of cluster health."""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import translation
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from clusters.health.choices import RunVerdict, WorkKind, WorkState
from clusters.health.faults import links
from clusters.health.ingest import service as services
from clusters.health.models import (
    AgentWorkItem,
    GpuFault,
    HealthPush,
    HealthReport,
    NodeHealth,
    ValidationJob,
    ValidationRun,
    check_same_organization,
)
from clusters.health.readers import nccl, reason_texts
from clusters.health.validation import service as validation
from clusters.models import Cluster
from portal.core import access
from workloads.interactions.models import Interaction


class HealthReportSerializer(serializers.ModelSerializer):
    class Meta:
        model = HealthReport
        fields = ["id", "cluster", "received_at", "source", "instance_type", "node_count", "gpus_expected",
                  "gpus_seen", "samples", "uncorrectable_remapped_rows", "correctable_remapped_rows", "xid_errors",
                  "row_remap_failures", "thermal_violations", "missing_gpus", "healthy_gpu_share", "nodes_healthy",
                  "nodes_degraded", "nodes_reset_gpu", "nodes_reboot", "nodes_replace", "fault_count"]


class HealthPushSerializer(serializers.ModelSerializer):
    """A pushed scrape and where it stands; ``report`` once done, ``error`` when failed or superseded."""

    push = serializers.IntegerField(source="pk", read_only=True)
    # The API's name since it was made; the model calls it ``claims`` (how many times a worker claimed the push).
    attempts = serializers.IntegerField(source="claims", read_only=True, min_value=0)

    class Meta:
        model = HealthPush
        fields = ["push", "cluster", "received_at", "status", "scope", "declared_nodes", "compressed_bytes",
                  "text_bytes", "started_at", "finished_at", "attempts", "error", "report", "superseded_by"]


class NodeHealthSerializer(serializers.ModelSerializer):
    reasons = serializers.SerializerMethodField(help_text="Why the node has its verdict, in English, one line each.")

    class Meta:
        model = NodeHealth
        fields = ["hostname", "verdict", "reasons", "expected_gpus", "gpus_seen", "missing_gpus", "efa_devices_seen",
                  "model", "cluster", "seen_at"]

    def get_reasons(self, node) -> list[str]:
        """The stored reasons (codes with parameters, or an older row's English) as English lines."""
        with translation.override("en"):
            return [reason_texts.shown(r) for r in node.reasons or []]


class HealthReportDetailSerializer(HealthReportSerializer):
    summary = serializers.JSONField(read_only=True, help_text="Faults, panels and verdict counts of the report.")

    class Meta(HealthReportSerializer.Meta):
        fields = [*HealthReportSerializer.Meta.fields, "summary"]


class VisibleInteractionField(serializers.PrimaryKeyRelatedField):
    """Interactions the caller may see (an invisible one is "does not exist", never a hint)."""

    def get_queryset(self):
        request = self.context.get("request")
        if request is None:
            return Interaction.objects.none()
        return Interaction.objects.restrict(request.user)  # restrict: the choices of a related field, not a lookup


class GpuFaultSerializer(serializers.ModelSerializer):
    """A fault; only ``interaction`` is writable (PATCH, lead SAs of the organization). The linked
    interaction's id and summary are shown only to users who may see that interaction."""

    open = serializers.BooleanField(source="is_open", read_only=True)
    interaction = VisibleInteractionField(required=False, allow_null=True,
                                          help_text="The support interaction following this fault (null to unlink).")
    interaction_summary = serializers.SerializerMethodField()

    class Meta:
        model = GpuFault
        fields = ["id", "cluster", "hostname", "gpu", "device", "uuid", "kind", "xid", "severity", "verdict", "meaning",
                  "action", "value", "pod", "first_seen", "last_seen", "absent_reports", "cleared_at", "open",
                  "interaction", "interaction_summary", "evidence"]
        read_only_fields = [f for f in fields if f not in ("interaction", "interaction_summary")]

    def _link(self, fault):
        request = self.context.get("request")
        return links.visible_link(fault, request.user if request else None)

    def to_representation(self, instance):
        data = super().to_representation(instance)
        link = self._link(instance)
        data["interaction"] = link[0] if link else None
        return data

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_interaction_summary(self, fault) -> str | None:
        link = self._link(fault)
        return link[1] if link else None

    def validate_interaction(self, interaction):
        if interaction is not None and self.instance is not None:
            try:
                check_same_organization(self.instance.cluster.organization_id, interaction)
            except DjangoValidationError as exc:
                raise serializers.ValidationError(exc.message_dict["interaction"]) from None
        return interaction

    def update(self, instance, validated_data):
        if "interaction" not in validated_data:
            return instance
        return links.link(instance, validated_data["interaction"], self.context["request"].user)


class VisibleClusterField(serializers.PrimaryKeyRelatedField):
    """Clusters where the caller may make a ``model`` row (validation runs by default)."""

    model = ValidationRun

    def get_queryset(self):
        request = self.context.get("request")
        if request is None:
            return Cluster.objects.none()
        ids = access.organization_ids(request.user, access.CHANGE, self.model)
        qs = Cluster.objects.restrict(request.user).select_related("organization")  # restrict: a field's choices
        return qs if ids is None else qs.filter(organization_id__in=ids)


class ValidationRunSerializer(serializers.ModelSerializer):
    cluster = VisibleClusterField()
    file = serializers.FileField(write_only=True, required=False, help_text="nccl-tests output (multipart).")
    text = serializers.CharField(write_only=True, required=False, trim_whitespace=False,
                                 help_text="nccl-tests output, when not sent as a file.")
    collective = serializers.ChoiceField(choices=nccl.COLLECTIVES, required=False, allow_blank=True,
                                         help_text="Read from the output when left out.")
    nodes = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=10000)
    uploaded_by = serializers.StringRelatedField(allow_null=True)

    class Meta:
        model = ValidationRun
        fields = ["id", "cluster", "uploaded_by", "uploaded_at", "collective", "instance_type", "nodes", "ranks", "hosts",
                  "rows", "plateau_busbw", "peak_busbw", "avg_busbw", "large_message_busbw", "expected_busbw",
                  "transport", "nccl_version", "ofi_version", "verdict", "diagnosis", "result", "notes", "file", "text"]
        read_only_fields = ["uploaded_by", "uploaded_at", "instance_type", "ranks", "hosts", "rows", "plateau_busbw",
                            "peak_busbw", "avg_busbw", "large_message_busbw", "expected_busbw", "transport", "nccl_version",
                            "ofi_version", "verdict", "diagnosis", "result"]

    def validate(self, attrs):
        upload, text = attrs.pop("file", None), attrs.pop("text", None)
        if upload is not None and text:
            raise serializers.ValidationError({"file": "Send the output as a file or as text, not both."})
        if upload is not None:
            limit = settings.HEALTH_VALIDATION_MAX_BYTES
            if upload.size > limit:
                raise serializers.ValidationError({"file": f"The file is over {limit:,} bytes."})
            raw = upload.read()
        elif text:
            raw = text
        else:
            raise serializers.ValidationError({"text": "Send the nccl-tests output as a file or as text."})
        try:
            result = services.parse_validation(attrs["cluster"], raw, attrs.get("collective"), attrs.get("nodes"))
        except (nccl.NcclParseError, services.TooLarge) as exc:
            raise serializers.ValidationError({"file" if upload is not None else "text": str(exc)}) from None
        attrs["_raw"], attrs["_result"] = raw, result
        return attrs

    def create(self, validated_data):
        request = self.context["request"]
        return services.store_validation(validated_data["cluster"], validated_data["_raw"], validated_data["_result"],
                                         user=request.user, notes=validated_data.get("notes", ""))


class TokenSerializer(serializers.Serializer):
    cluster = serializers.IntegerField()
    token = serializers.CharField(help_text="Shown once: keep it in the exporter's configuration.")


@extend_schema_field(serializers.IntegerField(help_text="The id of a ready Slurm cluster of the caller's organization."))
class ValidationClusterField(VisibleClusterField):
    """Clusters where the caller may start validations (a cluster's id in the schema)."""

    model = ValidationJob


class ValidationJobSerializer(serializers.ModelSerializer):
    """A validation job; ``error`` is the provider's text for lead SAs and staff, the portal's words otherwise."""

    requested_by = serializers.StringRelatedField(allow_null=True)
    cancelled_by = serializers.StringRelatedField(allow_null=True)
    # Empty until the job has a verdict (the schema says so: "" is one of its values).
    verdict = serializers.ChoiceField(choices=RunVerdict.choices, allow_blank=True, read_only=True)
    runs = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()
    outliers = serializers.SerializerMethodField()

    class Meta:
        model = ValidationJob
        fields = ["id", "cluster", "state", "mode", "collectives", "nodes", "verdict", "summary", "expected",
                  "received", "pairs", "outliers", "slow_nodes", "runs", "software_version", "nccl_version",
                  "ofi_version", "slurm_job_id", "requested_by", "created_at", "submitted_at", "finished_at",
                  "deadline", "failure_reason", "error", "cancelled_by", "cancelled_at"]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_runs(self, job):
        return sorted(r.pk for r in job.runs.all())

    @extend_schema_field(serializers.CharField())
    def get_error(self, job):
        request = self.context.get("request")
        return validation.shown_error(job, getattr(request, "user", None))

    @extend_schema_field(serializers.ListField(child=serializers.DictField()))
    def get_outliers(self, job):
        if job.mode != "pairwise" or not job.pairs:
            return []
        return [{"hosts": list(p.hosts), "busbw": p.busbw, "deviation": round(p.deviation, 4)}
                for p in validation.sweep_of(job).outliers]


class ValidationStartSerializer(serializers.Serializer):
    """What to validate: the cluster, the operations, the nodes (all when left out), and whether to sweep pairs."""

    cluster = ValidationClusterField()
    collectives = serializers.ListField(child=serializers.ChoiceField(choices=["all_reduce", "all_gather",
                                                                                "reduce_scatter", "alltoall"]),
                                        required=False, default=["all_reduce"], max_length=4)
    nodes = serializers.ListField(child=serializers.CharField(max_length=255), required=False, default=list,
                                  max_length=10000)
    pairwise = serializers.BooleanField(required=False, default=False)


class ValidationTrendPointSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    at = serializers.DateTimeField()
    plateau_busbw = serializers.FloatField()
    nodes = serializers.IntegerField(allow_null=True)
    verdict = serializers.CharField()
    nccl_version = serializers.CharField()
    ofi_version = serializers.CharField()


class ValidationTrendVersionSerializer(serializers.Serializer):
    nccl_version = serializers.CharField()
    ofi_version = serializers.CharField()
    runs = serializers.IntegerField()
    median = serializers.FloatField()
    change = serializers.FloatField(allow_null=True)
    regression = serializers.BooleanField()


class ValidationTrendSerializer(serializers.Serializer):
    cluster = serializers.IntegerField()
    collective = serializers.CharField()
    points = ValidationTrendPointSerializer(many=True)
    versions = ValidationTrendVersionSerializer(many=True)
    regression = serializers.BooleanField()


# The controller agent's routes (clusters/health/api/agent.py).
class AgentPollSerializer(serializers.Serializer):
    wait = serializers.FloatField(required=False, min_value=0, help_text="Seconds to wait for work (capped by the "
                                                                          "portal's AGENT_POLL_SECONDS).")
    version = serializers.CharField(required=False, allow_blank=True, max_length=32)


class AgentWorkItemSerializer(serializers.ModelSerializer):
    kind = serializers.ChoiceField(choices=WorkKind.choices)

    class Meta:
        model = AgentWorkItem
        fields = ["id", "kind", "payload", "comment", "attempts", "created_at"]


class AgentWorkSerializer(serializers.Serializer):
    items = AgentWorkItemSerializer(many=True)


class AgentResultSerializer(serializers.Serializer):
    exit_status = serializers.IntegerField(min_value=-1, max_value=255)
    stdout = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    stderr = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    ran = serializers.BooleanField(required=False, default=True,
                                   help_text="False when the agent could not run the item (its reason in stderr).")


class AgentAnsweredSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=WorkState.choices)
    applied = serializers.BooleanField(help_text="False for a repeat: the item had its result already.")
