from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from workloads.models import CapacityReservation, InstanceQuota, QuotaChangeRequest, Workload


@admin.register(Workload)
class WorkloadAdmin(SimpleHistoryAdmin):
    list_display = ("name", "organization", "architecture", "parameters_billions", "target_instance_type", "status")
    list_filter = ("status", "architecture", "orchestrator", "organization")
    search_fields = ("name", "model_family")


@admin.register(InstanceQuota)
class InstanceQuotaAdmin(SimpleHistoryAdmin):
    list_display = ("organization", "instance_type_name", "region", "count", "start", "end")
    list_filter = ("instance_type_name", "region", "organization")


@admin.register(CapacityReservation)
class CapacityReservationAdmin(SimpleHistoryAdmin):
    list_display = ("reservation_id", "organization", "kind", "instance_type_name", "count", "availability_zone", "end")
    list_filter = ("kind", "instance_type_name", "organization")
    search_fields = ("reservation_id",)


@admin.register(QuotaChangeRequest)
class QuotaChangeRequestAdmin(SimpleHistoryAdmin):
    list_display = ("organization", "instance_type_name", "current_count", "requested_count", "status", "created")
    list_filter = ("status", "organization")
