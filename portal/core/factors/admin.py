from django.contrib import admin

from portal.core.factors.models import Passkey


@admin.register(Passkey)
class PasskeyAdmin(admin.ModelAdmin):
    """Staff reset a person's passkeys by deleting them (recorded on the audit trail); nothing else is editable."""

    list_display = ("user", "name", "created_at", "last_used_at")
    search_fields = ("user__username", "user__email", "name")
    fields = ("user", "name", "created_at", "last_used_at")
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
