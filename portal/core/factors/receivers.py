"""A second factor removed (staff resetting a person's factors in the admin, or a person removing their own
passkey) goes on the audit trail."""
from __future__ import annotations

from django.db.models.signals import post_delete
from django.dispatch import receiver
from django_otp.plugins.otp_totp.models import TOTPDevice

from portal.core.audit.models import AuditKind
from portal.core.audit.recording import customer_organization_id, record
from portal.core.factors.models import Passkey


@receiver(post_delete, sender=TOTPDevice, dispatch_uid="factors_authenticator_removed")
def authenticator_removed(sender, instance, **kwargs):
    if instance.confirmed:
        record(AuditKind.SECOND_FACTOR, organization_id=customer_organization_id(instance.user),
               actor_name="", method="totp", target=f"authenticator of {instance.user.get_username()}",
               outcome="removed")


@receiver(post_delete, sender=Passkey, dispatch_uid="factors_passkey_removed")
def passkey_removed(sender, instance, **kwargs):
    """The person removing their own passkey, or staff resetting it in the admin (the actor is whoever asked)."""
    record(AuditKind.SECOND_FACTOR, organization_id=customer_organization_id(instance.user), actor_name="",
           method="passkey", target=f"passkey {instance.name} of {instance.user.get_username()}", outcome="removed")
