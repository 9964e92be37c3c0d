"""Clusters and blueprints in the admin, for staff to find a row. Clusters are launched and deleted through the
pipeline and blueprints synced from their files, so the admin adds neither."""
from django.contrib import admin

from clusters.models import Blueprint, Cluster


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ("name", "organization", "state", "instance_type", "node_count", "region", "created")
    list_filter = ("state", "instance_type", "organization")
    search_fields = ("name",)
    raw_id_fields = ("created_by",)

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(Blueprint)
class BlueprintAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "kind", "version", "synced")
    search_fields = ("title", "slug")

    def has_add_permission(self, request) -> bool:
        return False
