"""Hourly: ask each provider about the people it signed in; those it no longer knows are signed out everywhere."""
from celery import shared_task

from portal.core.sso import services
from portal.core.sso.models import ExternalIdentity


@shared_task(name="sso.check_identities")
def check_identities() -> int:
    removed = 0
    for identity in ExternalIdentity.objects.select_related("provider", "user").filter(
            removed_at__isnull=True, provider__enabled=True).exclude(refresh_token=""):
        removed += not services.check_identity(identity)
    return removed
