from django.contrib import admin

from portal.audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: the trail is appended by the portal and purged by its retention, never edited."""

    list_display = ("occurred_at", "kind", "actor_name", "organization", "ip_address", "method", "outcome")
    list_filter = ("kind", "organization")
    search_fields = ("actor_name", "method", "target")
    date_hierarchy = "occurred_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
