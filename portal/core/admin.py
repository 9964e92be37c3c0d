from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from portal.core.factors import devices
from portal.core.models import (
    Cycle,
    CycleParticipation,
    EscalationTarget,
    Membership,
    NotificationDelivery,
    NotificationSetting,
    Organization,
    Specialist,
    TimelineEntry,
    User,
)


@admin.register(User)
class PortalUserAdmin(UserAdmin):
    fieldsets = UserAdmin.fieldsets + (("Program role", {"fields": ("is_program_manager",)}),)
    list_display = ("username", "email", "is_program_manager", "is_staff")
    actions = ["reset_second_factors"]

    @admin.action(description=_("Reset second factors (authenticators, passkeys, recovery codes)"))
    def reset_second_factors(self, request, queryset):
        for user in queryset:
            devices.reset(user)
        self.message_user(request, _("Second factors reset; each removal is on the audit trail."))


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "aws_account_id", "home_region")
    prepopulated_fields = {"slug": ("name",)}
    search_fields = ("name", "slug")
    inlines = [MembershipInline]


@admin.register(TimelineEntry)
class TimelineEntryAdmin(admin.ModelAdmin):
    list_display = ("occurred_at", "organization", "kind", "title", "visibility")
    list_filter = ("kind", "visibility", "organization")


@admin.register(NotificationSetting)
class NotificationSettingAdmin(admin.ModelAdmin):
    list_display = ("name", "organization", "min_severity", "include_internal", "enabled")
    list_filter = ("enabled", "min_severity")


@admin.register(NotificationDelivery)
class NotificationDeliveryAdmin(admin.ModelAdmin):
    list_display = ("created", "channel", "title", "status", "attempts", "error")
    list_filter = ("status", "channel")
    readonly_fields = [f.name for f in NotificationDelivery._meta.fields]


class SpecialistInline(admin.TabularInline):
    model = Specialist
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(EscalationTarget)
class EscalationTargetAdmin(admin.ModelAdmin):
    """Targets come from portal/core/escalation_targets.py; staff manage who answers for each team here."""

    list_display = ("name", "slug", "kind")
    readonly_fields = ("slug",)
    inlines = [SpecialistInline]


class ParticipationInline(admin.TabularInline):
    model = CycleParticipation
    extra = 0
    filter_horizontal = ["lead_sas"]


@admin.register(Cycle)
class CycleAdmin(SimpleHistoryAdmin):
    list_display = ("name", "number", "status", "starts_on", "ends_on")
    inlines = [ParticipationInline]
    filter_horizontal = ["blueprints"]
