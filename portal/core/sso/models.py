"""Identity providers, the e-mail domains each owns, and the people linked to them."""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from portal.core.model_fields import HttpsURLField
from portal.core.querysets import RestrictedQuerySet


class Protocol(models.TextChoices):
    OIDC = "oidc", _("OpenID Connect")
    SAML = "saml", _("SAML 2.0")


class IdentityProvider(models.Model):
    """An OpenID Connect or SAML 2.0 provider. With an organization, it signs in that organization's people as its
    customers; without one, it is the program's own and signs in AWS staff whose accounts the portal already holds.
    OpenID Connect uses the issuer and the client; SAML the IdP's entity id, single sign-on URL and signing
    certificate (``portal/core/sso/saml.py``)."""

    organization = models.ForeignKey("portal.Organization", null=True, blank=True, on_delete=models.CASCADE,
                                     related_name="identity_providers")
    name = models.CharField(max_length=100)
    protocol = models.CharField(max_length=8, choices=Protocol.choices, default=Protocol.OIDC)
    issuer = HttpsURLField(blank=True, help_text=_("The provider's issuer; its discovery document is read from "
                                                   "<issuer>/.well-known/openid-configuration."))
    client_id = models.CharField(max_length=200, blank=True)
    client_secret = models.CharField(max_length=500, blank=True)
    saml_entity_id = models.CharField(max_length=500, blank=True,
                                      help_text=_("SAML: the identity provider's entity id (its Issuer)."))
    saml_sso_url = HttpsURLField(blank=True, help_text=_("SAML: the identity provider's single sign-on URL "
                                                         "(HTTP-Redirect binding)."))
    saml_certificate = models.TextField(blank=True, help_text=_("SAML: the identity provider's signing "
                                                                "certificate (PEM)."))
    enabled = models.BooleanField(default=True)
    passwords_allowed = models.BooleanField(
        default=True, help_text=_("Whether the organization's customers may still sign in with a password."))

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = _("identity provider")
        verbose_name_plural = _("identity providers")

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("sso:provider_list")

    @property
    def slug(self) -> str:
        return f"idp-{self.pk}"

    @property
    def method(self) -> str:
        """How the audit trail names a sign-in through this provider (``oidc:Name`` or ``saml:Name``)."""
        return f"{self.protocol}:{self.name}"[:120]


class SeenAssertion(models.Model):
    """A SAML assertion id the portal has accepted, kept until the assertion expires: the same id is refused a
    second time (a replayed response), across processes."""

    provider = models.ForeignKey(IdentityProvider, on_delete=models.CASCADE, related_name="+")
    assertion_id = models.CharField(max_length=255)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["provider", "assertion_id"], name="sso_assertion_once")]
        verbose_name = _("seen SAML assertion")
        verbose_name_plural = _("seen SAML assertions")

    def __str__(self) -> str:
        return self.assertion_id


class IdentityDomain(models.Model):
    """An e-mail domain a provider owns: one provider per domain, so no two organizations claim one."""

    provider = models.ForeignKey(IdentityProvider, on_delete=models.CASCADE, related_name="domains")
    domain = models.CharField(max_length=253, unique=True,
                              error_messages={"unique": _("Another identity provider already owns this domain.")})

    class Meta:
        ordering = ["domain"]
        verbose_name = _("e-mail domain")
        verbose_name_plural = _("e-mail domains")

    def __str__(self) -> str:
        return self.domain

    def save(self, *args, **kwargs):
        self.domain = (self.domain or "").strip().lower().lstrip("@")
        super().save(*args, **kwargs)

    def clean(self) -> None:
        self.domain = (self.domain or "").strip().lower().lstrip("@")
        if "." not in self.domain or "@" in self.domain or " " in self.domain:
            raise ValidationError({"domain": _("Give a domain such as example.co.jp.")})


class ExternalIdentity(models.Model):
    """A person as a provider knows them (its ``sub``), with the refresh token the portal uses to learn that the
    provider no longer knows them."""

    provider = models.ForeignKey(IdentityProvider, on_delete=models.CASCADE, related_name="identities")
    subject = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="external_identities")
    refresh_token = models.TextField(blank=True)
    signed_in_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    removed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["provider", "subject"], name="sso_identity_once")]
        verbose_name = _("external identity")
        verbose_name_plural = _("external identities")

    def __str__(self) -> str:
        return f"{self.provider}: {self.subject}"


class IdentityProviderChange(models.Model):
    """One save of an organization's provider, as it was made: who, when, and each field before and after (the
    client secret only as "changed"). Written by ``registration.record_change``; never edited."""

    provider = models.ForeignKey(IdentityProvider, on_delete=models.CASCADE, related_name="changes")
    changed_at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    actor_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=16, choices=[("registered", _("Registered")), ("changed", _("Changed")),
                                                      ("disabled", _("Disabled")), ("enabled", _("Enabled"))])
    # {field: [before, after]}; the secret is ["", "changed"] when it was replaced.
    changes = models.JSONField(default=dict)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-changed_at", "-id"]
        verbose_name = _("identity provider change")
        verbose_name_plural = _("identity provider changes")

    def __str__(self) -> str:
        return f"{self.provider}: {self.action} {self.changed_at:%Y-%m-%d %H:%M}"
