from rest_framework import serializers

from clusters import catalog, guards, launch
from clusters.models import Blueprint, Cluster, LaunchJob, Stack, StackEvent
from portal import access, provider_errors
from portal.choices import REGION_CODES
from portal.models import Organization


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
        from clusters import cfn

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
    blueprint = serializers.SlugRelatedField(slug_field="slug", read_only=True)
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
        return provider_errors.redact(data, self.context.get("request"), instance.organization_id,
                                      {"error_message": provider_errors.cluster_failure(instance.failure_reason)})


class LaunchSerializer(serializers.Serializer):
    """What a launch request carries; ``parameters`` is keyed by stack role (network, storage, cluster)."""

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

    def validate(self, data):
        user = self.context["request"].user
        org = data["organization"]
        if not access.can_in_organization(user, access.LAUNCH, Cluster, org.pk):
            from rest_framework.exceptions import PermissionDenied

            raise PermissionDenied("You do not lead this organization.")
        if Cluster.objects.filter(organization=org, name=data["name"]).exists():
            raise serializers.ValidationError({"name": f"{org.slug} already has a cluster named {data['name']}."})
        data.setdefault("region", org.home_region)
        plan = launch.plan(data["blueprint"], data["full_stack"])
        params = {role: dict(values) for role, values in data["parameters"].items()}
        unknown_roles = set(params) - {role for role, _ in plan.stacks}
        if unknown_roles:
            raise serializers.ValidationError({"parameters": f"no stack with role {', '.join(sorted(unknown_roles))} in this launch"})
        if catalog.entry(data["blueprint"]).kind in catalog.CLUSTER_KINDS:
            params.setdefault("cluster", {}).setdefault("ClusterName", data["name"])
        errors = launch.validate(plan, params)
        if errors:
            raise serializers.ValidationError({"parameters": errors})
        instance_type, count = launch.size_of(data["blueprint"], params)
        if instance_type:
            check = guards.check_quota(org, instance_type, data["region"], count)
            if not check.allowed:
                raise serializers.ValidationError({"quota": check.message, "quota_left": check.left,
                                                   "quota_total": check.quota, "requested": check.requested})
        data["parameters"] = params
        return data


class LaunchJobSerializer(serializers.ModelSerializer):
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

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




class ClusterConfigSerializer(serializers.Serializer):
    cluster = serializers.IntegerField()
    filename = serializers.CharField()
    config = serializers.CharField(help_text="The ParallelCluster 3 configuration (YAML).")
