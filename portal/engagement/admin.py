from django.contrib import admin

from portal.engagement.models import Escalation, EscalationTarget, Specialist


class SpecialistInline(admin.TabularInline):
    model = Specialist
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(EscalationTarget)
class EscalationTargetAdmin(admin.ModelAdmin):
    """Targets come from portal/engagement/targets.py; staff manage who answers for each team here."""

    list_display = ("name", "slug", "kind")
    readonly_fields = ("slug",)
    inlines = [SpecialistInline]


@admin.register(Escalation)
class EscalationAdmin(admin.ModelAdmin):
    list_display = ("interaction", "target", "state", "assignee", "requested_at")
    list_filter = ("state", "target")
    raw_id_fields = ("interaction", "assignee", "requested_by")
