from django.contrib import admin
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

from portal.core.audit.models import AuditEvent


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


# Second factors: staff reset a person's factors (deleting them, recorded on the audit trail), and see nothing of
# their secrets: django-otp's own admin pages, which show an authenticator's key and QR code, are replaced.
for _model in (TOTPDevice, StaticDevice):
    if admin.site.is_registered(_model):
        admin.site.unregister(_model)


class FactorResetAdmin(admin.ModelAdmin):
    list_display = ("user", "name", "confirmed")
    list_filter = ("confirmed",)
    search_fields = ("user__username", "user__email")
    fields = ("user", "name", "confirmed")
    readonly_fields = ("user", "name", "confirmed")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


admin.site.register(TOTPDevice, FactorResetAdmin)
admin.site.register(StaticDevice, FactorResetAdmin)
