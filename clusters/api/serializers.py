from django.core.exceptions import PermissionDenied
from rest_framework import exceptions, serializers

from clusters.blueprints import catalog, cfn
from clusters.launches import service as launch
from clusters.models import Blueprint, Cluster, LaunchJob, Stack, StackEvent
from portal.core import provider_errors
from portal.core.choices import REGION_CODES
from portal.core.models import Organization


class BlueprintSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="clusters-api:blueprint-detail", lookup_field="slug")
    description = serializers.SerializerMethodField()
    parameters = serializers.SerializerMethodField()
    outputs = serializers.SerializerMethodField()
    resources = serializers.SerializerMethodField()

    class Meta:
        model = Blueprint
        fields = ["id", "url", "slug", "kind", "title", "summary", "description", "version", "content_hash",
                  "parameters", "outputs", "resources"]
        read_only_fields = fields

    def _entry(self, obj):
        return catalog.entries().get(obj.slug)

    def get_description(self, obj) -> str:
        entry = self._entry(obj)
        return entry.description if entry else ""

    def get_parameters(self, obj) -> list[dict]:
        entry = self._entry(obj)
        return [{"name": p.name, "type": p.type, "description": p.description, "default": p.default,
                 "allowed_values": list(p.allowed_values), "min_value": p.min_value, "max_value": p.max_value,
                 "no_echo": p.no_echo, "required": p.required} for p in (entry.parameters if entry else ())]

    def get_outputs(self, obj) -> list[dict]:
        entry = self._entry(obj)
        return [{"name": o.name, "description": o.description, "exported": o.exported}
                for o in (entry.outputs if entry else ())]

    def get_resources(self, obj) -> dict[str, int]:
        return cfn.resources_summary(catalog.template(obj.slug)) if self._entry(obj) else {}


class StackSerializer(serializers.ModelSerializer):
    blueprint = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Stack
        fields = ["id", "role", "order", "blueprint", "content_hash", "stack_name", "stack_id", "status",
                  "status_reason", "outputs", "resources_total", "resources_done"]
        read_only_fields = fields


class ClusterSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="clusters-api:cluster-detail")
    organization = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    # Null for a cluster launched from a template that is not a catalog blueprint: the schema says so.
    blueprint = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    stacks = StackSerializer(many=True, read_only=True)
    region = serializers.CharField(read_only=True)

    class Meta:
        model = Cluster
        fields = ["id", "url", "organization", "name", "blueprint", "full_stack", "orchestrator", "region",
                  "instance_type", "node_count", "state", "stack_status", "error_message", "failure_reason",
                  "launch_id", "parameters", "outputs", "stacks", "created", "updated"]
        read_only_fields = fields

    def to_representation(self, instance):
        data = super().to_representation(instance)
        request = self.context.get("request")
        for stack in data.get("stacks") or []:  # CloudFormation's reasons are AWS's words too
            provider_errors.redact(stack, request, instance.organization_id,
                                   {"status_reason": provider_errors.STACK_REASON})
        return provider_errors.redact(data, request, instance.organization_id,
                                      {"error_message": provider_errors.cluster_failure(instance.failure_reason)})


def refusal_errors(refusal: launch.LaunchRefused) -> dict:
    """The service's refusal as the API's error body: parameter errors under ``parameters``, the
    quota's figures under ``quota``, ``quota_left``, ``quota_total``, ``requested``."""
    body: dict = {}
    for key, message in refusal.errors.items():
        if "__" in key:
            body.setdefault("parameters", {})[key] = message
        else:
            body[key] = message
    if refusal.quota is not None:
        body.update(quota=refusal.quota.message, quota_left=refusal.quota.left, quota_total=refusal.quota.quota,
                    requested=refusal.quota.requested)
    return body


class LaunchSerializer(serializers.Serializer):
    """What a launch request carries; ``parameters`` is keyed by stack role (network, storage, cluster).
    Every rule is the launch service's (``clusters.launches.service.check``), the same as the form's."""

    organization = serializers.SlugRelatedField(slug_field="slug", queryset=Organization.objects.all())
    name = serializers.RegexField(r"^[a-z][a-z0-9-]{0,39}$", max_length=40)
    blueprint = serializers.CharField()
    full_stack = serializers.BooleanField(default=False)
    region = serializers.CharField(required=False)
    parameters = serializers.DictField(child=serializers.DictField(child=serializers.CharField(allow_blank=True)),
                                       default=dict)

    def validate_blueprint(self, value: str) -> str:
        if value not in catalog.entries():
            raise serializers.ValidationError(f"No blueprint named {value!r}.")
        return value

    def validate_region(self, value: str) -> str:
        if value not in REGION_CODES:
            raise serializers.ValidationError(f"{value!r} is not a program region.")
        return value

    def launch_request(self, data: dict, key: str = "") -> launch.LaunchRequest:
        return launch.LaunchRequest(
            organization=data["organization"], name=data["name"], blueprint=data["blueprint"],
            region=data.get("region") or data["organization"].home_region,
            parameters={role: dict(values) for role, values in data["parameters"].items()},
            full_stack=data["full_stack"], user=self.context["request"].user, key=key)

    def validate(self, data):
        try:
            checked = launch.check(self.launch_request(data))
        except PermissionDenied as exc:
            raise exceptions.PermissionDenied(str(exc)) from exc
        except launch.LaunchRefused as refusal:
            raise serializers.ValidationError(refusal_errors(refusal)) from refusal
        data.setdefault("region", data["organization"].home_region)
        data["parameters"] = checked.parameters
        return data


class LaunchJobSerializer(serializers.ModelSerializer):
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    dispatched = serializers.BooleanField(read_only=True)

    class Meta:
        model = LaunchJob
        fields = ["id", "cluster", "kind", "status", "requested_by", "created", "started", "finished", "log",
                  "error", "dispatched", "attempts", "polls"]
        read_only_fields = fields

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data = provider_errors.redact(data, self.context.get("request"), instance.cluster.organization_id,
                                      {"error": provider_errors.JOB_FAILED, "log": ""})
        return data


class StackEventSerializer(serializers.ModelSerializer):
    cluster = serializers.IntegerField(source="stack.cluster_id", read_only=True)
    stack_name = serializers.CharField(source="stack.stack_name", read_only=True)

    class Meta:
        model = StackEvent
        fields = ["id", "cluster", "stack", "stack_name", "event_id", "timestamp", "logical_id", "physical_id",
                  "resource_type", "status", "reason"]
        read_only_fields = fields

    def to_representation(self, instance):
        data = super().to_representation(instance)
        return provider_errors.redact(data, self.context.get("request"), instance.stack.cluster.organization_id,
                                      {"reason": provider_errors.STACK_REASON})




class ClusterConfigSerializer(serializers.Serializer):
    cluster = serializers.IntegerField()
    filename = serializers.CharField()
    config = serializers.CharField(help_text="The ParallelCluster 3 configuration (YAML).")

