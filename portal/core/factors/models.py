"""A passkey (a WebAuthn credential) registered as a second factor. Only its public key is kept: the private key
never leaves the person's authenticator."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Passkey(models.Model):
    """Read only as the signed-in person's own (``user=request.user``) or by staff in the admin to reset it."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="passkeys")
    name = models.CharField(_("name"), max_length=100)
    # The credential id as the authenticator gave it (base64url), and its COSE public key.
    credential_id = models.CharField(max_length=1400, unique=True)
    public_key = models.BinaryField()
    # The authenticator's signature counter as last seen: a later assertion must carry a higher one (unless the
    # authenticator keeps none, and reports 0 every time).
    sign_count = models.PositiveBigIntegerField(default=0)
    transports = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("passkey")
        verbose_name_plural = _("passkeys")

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"


class TokenConfirmation(models.Model):
    """An API token its owner confirmed with a second factor in the browser (a passkey, or a code): for a while it
    counts as a recent second factor for protected API requests, as a confirmed session does. The way for a
    person whose only factor is a passkey (which an API client cannot present) to use the API without spending
    recovery codes."""

    token = models.OneToOneField("knox.AuthToken", on_delete=models.CASCADE, primary_key=True,
                                 related_name="confirmation")
    confirmed_at = models.DateTimeField(default=timezone.now)
    method = models.CharField(max_length=32, blank=True)

    class Meta:
        verbose_name = _("API token confirmation")
        verbose_name_plural = _("API token confirmations")

    def __str__(self) -> str:
        return f"{self.token_id[:8]} confirmed {self.confirmed_at:%Y-%m-%d %H:%M}"
