"""Reports to the funder in the admin: an issued report and its parts are read-only here as everywhere (its
figures, narratives and hash are what was issued; a correction is a new version, made on its page)."""
from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from portal.review.funder.models import FunderReport, FunderReportComment, FunderReportPart

FROZEN = ("status", "figures", "data_as_of", "content_hash", "issued_at", "issued_by", "supersedes", "version")


@admin.register(FunderReport)
class FunderReportAdmin(SimpleHistoryAdmin):
    list_display = ("title", "version", "kind", "period_start", "period_end", "status", "issued_at")
    list_filter = ("kind", "status")
    raw_id_fields = ("program_cycle", "supersedes", "issued_by", "created_by")

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and not obj.is_draft:
            return [f.name for f in obj._meta.concrete_fields]
        return FROZEN


@admin.register(FunderReportPart)
class FunderReportPartAdmin(SimpleHistoryAdmin):
    list_display = ("report", "organization", "updated")
    raw_id_fields = ("report", "organization")
    readonly_fields = ("figures",)

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and not obj.report.is_draft:
            return [f.name for f in obj._meta.concrete_fields]
        return self.readonly_fields


@admin.register(FunderReportComment)
class FunderReportCommentAdmin(admin.ModelAdmin):
    list_display = ("part", "author", "created")
    raw_id_fields = ("part", "author")
