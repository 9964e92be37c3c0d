"""Admin of interactions."""
from django.contrib import admin

from workloads.interactions.models import Interaction


@admin.register(Interaction)
class InteractionAdmin(admin.ModelAdmin):
    """Listed for staff to find and correct a row; new interactions come through the portal's form, which records
    their history, timeline entry and notifications (the admin's add form would skip them)."""

    list_display = ("summary", "organization", "kind", "status", "severity", "visibility", "owner", "occurred_at")
    list_filter = ("kind", "status", "severity", "visibility", "organization")
    search_fields = ("summary", "support_case_id")
    raw_id_fields = ("owner", "workload")
    filter_horizontal = ()

    def has_add_permission(self, request) -> bool:
        return False
