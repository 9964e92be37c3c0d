"""The sign-in form: Django's, with one more answer: a right password refused because the person's organization
signs its people in through its identity provider says so, and where to go instead. And the form program
managers register an organization's identity provider with."""
from __future__ import annotations

import re

from django import forms
from django.contrib.auth.forms import AuthenticationForm, UsernameField
from django.core.exceptions import ValidationError
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from portal.core import access
from portal.core.models import Organization
from portal.core.sso import registration, saml
from portal.core.sso.backends import REFUSED_BY
from portal.core.sso.models import IdentityDomain, IdentityProvider, Protocol

DOMAIN = re.compile(r"^(?=.{4,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


class SignInForm(AuthenticationForm):
    username = UsernameField(label=_("Username"), widget=forms.TextInput(attrs={"autofocus": True}))
    refused_by = None

    def clean(self):
        try:
            return super().clean()
        except ValidationError:
            provider = getattr(self.request, REFUSED_BY, None)
            if provider is None:
                raise
            self.refused_by = provider
            raise ValidationError(
                gettext("%(organization)s signs its people in through its identity provider (%(provider)s), not "
                        "with a password: use \u201cContinue with your organization\u201d below with your work "
                        "address.") % {"organization": provider.organization.name, "provider": provider.name},
                code="password_turned_off") from None


class IdentityProviderForm(forms.ModelForm):
    """An organization's provider, OpenID Connect or SAML: the client secret is never shown back (left empty on an
    edit, it is kept); the e-mail domains are one per line, and a domain another provider owns is refused. A SAML
    provider's entity id, single sign-on URL and certificate may be given one by one or read from the IdP's
    metadata (pasted, or from its URL through the portal's client for user-given URLs)."""

    domains = forms.CharField(label=_("E-mail domains"), widget=forms.Textarea(attrs={"rows": 3}),
                              help_text=_("The domains whose addresses this provider signs in, one per line "
                                          "(e.g. example.co.jp)."))
    client_secret = forms.CharField(label=_("Client secret"), required=False,
                                    widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
                                    help_text=_("As the provider issued it. Left empty on a change, the stored one "
                                                "is kept."))

    saml_metadata_url = forms.URLField(
        label=_("SAML metadata URL"), required=False, assume_scheme="https",
        help_text=_("SAML: where the identity provider publishes its metadata; read on save, it fills the three "
                    "fields above."))
    saml_metadata_xml = forms.CharField(
        label=_("SAML metadata XML"), required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("SAML: or paste the identity provider's metadata; it fills the three fields above."))

    class Meta:
        model = IdentityProvider
        fields = ["organization", "name", "protocol", "issuer", "client_id", "client_secret", "saml_entity_id",
                  "saml_sso_url", "saml_certificate", "enabled", "passwords_allowed"]
        labels = {"organization": _("Organization"), "name": _("Name"), "protocol": _("Protocol"),
                  "issuer": _("Issuer"), "client_id": _("Client id"), "saml_entity_id": _("SAML IdP entity id"),
                  "saml_sso_url": _("SAML single sign-on URL"), "saml_certificate": _("SAML signing certificate"),
                  "enabled": _("Enabled"), "passwords_allowed": _("Passwords allowed")}
        widgets = {"saml_certificate": forms.Textarea(attrs={"rows": 4})}

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["organization"].required = True
        self.fields["organization"].empty_label = None
        organizations = Organization.objects.restrict(user, access.VIEW)
        writable = access.organization_ids(user, access.CHANGE, IdentityProvider)
        if writable is not None:  # an organization's administrator: their own organization only
            organizations = organizations.filter(pk__in=writable)
        self.fields["organization"].queryset = organizations
        self.fields["protocol"].required = False  # left out, a provider keeps its protocol (new: OpenID Connect)
        # As stored, before this form changes the instance: what the save's history compares with.
        self.before = registration.snapshot(self.instance)
        if self.instance.pk:
            self.initial["domains"] = "\n".join(self.before["domains"])
        self.stored_secret = self.instance.client_secret if self.instance.pk else ""
        self.discovery: dict | None = None

    def clean(self):
        """OpenID Connect: an enabled provider must answer its discovery document for this issuer (a real request,
        on save). SAML: the IdP's entity id, single sign-on URL and a readable signing certificate."""
        cleaned = super().clean()
        if cleaned.get("protocol") == Protocol.SAML:
            self._clean_saml(cleaned)
            return cleaned
        for name, message in (("issuer", gettext("Give the provider's issuer.")),
                              ("client_id", gettext("Give the client id the provider issued.")),
                              ("client_secret", gettext("Give the client secret the provider issued."))):
            if not cleaned.get(name) and not self.has_error(name):
                self.add_error(name, message)
        issuer = cleaned.get("issuer")
        if issuer and cleaned.get("enabled") and not self.has_error("issuer"):
            try:
                self.discovery = registration.check_discovery(issuer)
            except registration.DiscoveryFailed as exc:
                self.add_error("issuer", str(exc))
        return cleaned

    def _clean_saml(self, cleaned: dict) -> None:
        url, xml = cleaned.get("saml_metadata_url"), (cleaned.get("saml_metadata_xml") or "").strip()
        if url or xml:
            try:
                found = saml.read_metadata(url) if url else saml.parse_metadata(xml)
            except saml.MetadataRefused as exc:
                self.add_error("saml_metadata_url" if url else "saml_metadata_xml", str(exc))
                return
            cleaned.update(found)
            for name, value in found.items():
                setattr(self.instance, name, value)
        for name, message in (("saml_entity_id", gettext("Give the identity provider's entity id.")),
                              ("saml_sso_url", gettext("Give the identity provider's single sign-on URL.")),
                              ("saml_certificate", gettext("Give the identity provider's signing certificate."))):
            if not cleaned.get(name) and not self.has_error(name):
                self.add_error(name, message)
        if cleaned.get("saml_certificate"):
            try:
                saml.certificate_body(cleaned["saml_certificate"])
            except ValueError:
                self.add_error("saml_certificate", gettext("The certificate is not a PEM X.509 certificate."))

    def clean_protocol(self) -> str:
        return self.cleaned_data.get("protocol") or self.instance.protocol or Protocol.OIDC

    def clean_client_secret(self) -> str:
        return self.cleaned_data.get("client_secret") or self.stored_secret

    def clean_domains(self) -> list[str]:
        names = sorted({d.strip().lower().lstrip("@") for d in re.split(r"[\s,]+", self.cleaned_data["domains"])
                        if d.strip()})
        if not names:
            raise ValidationError(gettext("Give at least one e-mail domain."))
        bad = [d for d in names if not DOMAIN.match(d)]
        if bad:
            raise ValidationError(gettext("Not a domain: %(domains)s.") % {"domains": ", ".join(bad)})
        taken = IdentityDomain.objects.filter(domain__in=names)
        if self.instance.pk:
            taken = taken.exclude(provider=self.instance)
        if taken.exists():
            raise ValidationError(gettext("Another identity provider already owns %(domains)s.")
                                  % {"domains": ", ".join(taken.values_list("domain", flat=True))})
        return names

    def save_domains(self, provider: IdentityProvider) -> None:
        names = self.cleaned_data["domains"]
        provider.domains.exclude(domain__in=names).delete()
        for name in names:
            IdentityDomain.objects.get_or_create(provider=provider, domain=name)
