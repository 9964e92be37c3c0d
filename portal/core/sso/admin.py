from django.contrib import admin

from portal.core.sso.models import ExternalIdentity, IdentityDomain, IdentityProvider


class IdentityDomainInline(admin.TabularInline):
    model = IdentityDomain
    extra = 1


@admin.register(IdentityProvider)
class IdentityProviderAdmin(admin.ModelAdmin):
    """Staff register each organization's provider (and the program's, with no organization)."""

    list_display = ("name", "organization", "protocol", "issuer", "saml_entity_id", "enabled", "passwords_allowed")
    list_filter = ("protocol", "enabled", "passwords_allowed")
    inlines = [IdentityDomainInline]


@admin.register(ExternalIdentity)
class ExternalIdentityAdmin(admin.ModelAdmin):
    list_display = ("provider", "subject", "user", "signed_in_at", "checked_at", "removed_at")
    list_filter = ("provider",)
    readonly_fields = ("provider", "subject", "user", "signed_in_at", "checked_at", "removed_at")
    exclude = ("refresh_token",)

    def has_add_permission(self, request):
        return False
