"""One audit event: append-only (a saved event is never changed; only the retention purge deletes)."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from portal.core.querysets import RestrictedQuerySet


class AuditKind(models.TextChoices):
    SIGN_IN = "sign_in", _("Signed in")
    SIGN_IN_FAILED = "sign_in_failed", _("Sign-in refused")
    SIGN_OUT = "sign_out", _("Signed out")
    LOCKED_OUT = "locked_out", _("Locked out after failed sign-ins")
    SECOND_FACTOR = "second_factor", _("Second factor")
    TOKEN_CREATED = "token_created", _("API token created")
    TOKEN_USED = "token_used", _("API token used (first use of the day)")
    TOKEN_REVOKED = "token_revoked", _("API token revoked")
    EXPORT = "export", _("Data exported")
    AWS_ACTION = "aws_action", _("Action in a customer AWS account")
    IDENTITY_PROVIDER = "identity_provider", _("Identity provider registered or changed")
    ORG_ADMIN = "org_admin", _("Organization administrator designated or removed")


class AppendOnly(Exception):
    """An audit event may not be changed or deleted one by one."""


class AuditEvent(models.Model):
    occurred_at = models.DateTimeField(default=timezone.now, db_index=True)
    kind = models.CharField(max_length=32, choices=AuditKind.choices)
    # The person, and their name as it was (kept when the account is deleted); empty for the portal's own workers.
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    actor_name = models.CharField(max_length=150, blank=True)
    # The organization it concerns: a customer's sign-in, an export of its rows, an action in its account.
    # None: program-wide (AWS staff signing in, a refused sign-in of an unknown name): staff read those.
    organization = models.ForeignKey("portal.Organization", null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    ip_address = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=300, blank=True)
    # How: "password", an identity provider, the API token's prefix, the AWS operation ("ec2:RunInstances").
    method = models.CharField(max_length=120, blank=True)
    # What: the exported path, the resource acted on; the outcome ("ok" or AWS's error code).
    target = models.CharField(max_length=500, blank=True)
    outcome = models.CharField(max_length=120, blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-occurred_at", "-id"]
        indexes = [
            models.Index(fields=["organization", "-occurred_at"], name="audit_org_time"),
            models.Index(fields=["kind", "-occurred_at"], name="audit_kind_time"),
        ]
        verbose_name = _("audit event")
        verbose_name_plural = _("audit events")

    def __str__(self) -> str:
        return f"{self.occurred_at:%Y-%m-%d %H:%M} {self.get_kind_display()} {self.actor_name}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise AppendOnly("audit events are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("audit events are deleted only by the retention purge")
