from django.contrib import admin

from clusters.health.models import ClusterHealthConfig, GpuFault, HealthReport, ValidationJob, ValidationRun


@admin.register(HealthReport)
class HealthReportAdmin(admin.ModelAdmin):
    list_display = ("cluster", "received_at", "source", "node_count", "xid_errors", "missing_gpus", "healthy_gpu_share")
    list_filter = ("source",)
    exclude = ("state",)


@admin.register(GpuFault)
class GpuFaultAdmin(admin.ModelAdmin):
    list_display = ("cluster", "hostname", "gpu", "device", "kind", "xid", "severity", "first_seen", "cleared_at")
    list_filter = ("severity", "kind")
    search_fields = ("hostname", "uuid")


@admin.register(ValidationRun)
class ValidationRunAdmin(admin.ModelAdmin):
    list_display = ("cluster", "uploaded_at", "collective", "nodes", "plateau_busbw", "transport", "verdict")
    list_filter = ("verdict", "collective", "transport")


@admin.register(ClusterHealthConfig)
class ClusterHealthConfigAdmin(admin.ModelAdmin):
    list_display = ("cluster", "pull_enabled", "pull_url", "auth_kind", "token_hint", "last_pull_at")
    exclude = ("token_hash", "secret")


@admin.register(ValidationJob)
class ValidationJobAdmin(admin.ModelAdmin):
    """Read-only: a validation is started, followed, cancelled and timed out by ``clusters.health.validation.service``
    (compare-and-set on its state, a leased worker), so the admin neither adds nor edits one. The upload token's
    hash is never shown."""

    list_display = ("pk", "cluster", "mode", "state", "verdict", "created_at", "requested_by", "cancelled_by",
                    "failure_reason")
    list_filter = ("state", "mode", "verdict", "failure_reason")
    search_fields = ("cluster__name", "slurm_job_id", "command_id", "key")
    list_select_related = ("cluster", "requested_by", "cancelled_by")
    exclude = ("token_hash",)
    raw_id_fields = ("cluster", "requested_by", "cancelled_by")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
