"""A second factor removed (staff resetting a person's factors in the admin) goes on the audit trail."""
from __future__ import annotations

from django.db.models.signals import post_delete
from django.dispatch import receiver
from django_otp.plugins.otp_totp.models import TOTPDevice

from portal.audit.models import AuditKind
from portal.audit.recording import customer_organization_id, record


@receiver(post_delete, sender=TOTPDevice, dispatch_uid="factors_authenticator_removed")
def authenticator_removed(sender, instance, **kwargs):
    if instance.confirmed:
        record(AuditKind.SECOND_FACTOR, organization_id=customer_organization_id(instance.user),
               actor_name="", method="totp", target=f"authenticator of {instance.user.get_username()}",
               outcome="removed")
