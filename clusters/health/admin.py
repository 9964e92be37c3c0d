from django.contrib import admin

from clusters.health.models import ClusterHealthConfig, GpuFault, HealthReport, ValidationRun


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
