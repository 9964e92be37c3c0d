from django import forms
from django.contrib import admin
from django.utils.translation import gettext

from portal.core.sso import saml
from portal.core.sso.forms import IdentityProviderForm
from portal.core.sso.models import ExternalIdentity, IdentityDomain, IdentityProvider, Protocol


class IdentityProviderAdminForm(forms.ModelForm):
    """The fields the provider's protocol needs (the organizations' pages check the same, and more)."""

    class Meta:
        model = IdentityProvider
        fields = IdentityProviderForm.Meta.fields
        labels = {**IdentityProviderForm.Meta.labels, "client_secret": IdentityProviderForm.base_fields["client_secret"].label}

    def clean(self):
        cleaned = super().clean()
        saml_provider = cleaned.get("protocol") == Protocol.SAML
        needed = ("saml_entity_id", "saml_sso_url", "saml_certificate") if saml_provider else \
            ("issuer", "client_id", "client_secret")
        for name in needed:
            if not cleaned.get(name) and not self.has_error(name):
                self.add_error(name, gettext("This field is required."))
        if saml_provider and cleaned.get("saml_certificate"):
            try:
                saml.certificate_body(cleaned["saml_certificate"])
            except ValueError:
                self.add_error("saml_certificate", gettext("The certificate is not a PEM X.509 certificate."))
        return cleaned


class IdentityDomainInline(admin.TabularInline):
    model = IdentityDomain
    extra = 1


@admin.register(IdentityProvider)
class IdentityProviderAdmin(admin.ModelAdmin):
    """Staff register each organization's provider (and the program's, with no organization)."""

    form = IdentityProviderAdminForm
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
