"""The retention purge: events older than ``AUDIT_RETENTION_DAYS`` are deleted, in one statement, daily."""
from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from portal.core.audit.models import AuditEvent


@shared_task(name="audit.purge")
def purge() -> int:
    cutoff = timezone.now() - timedelta(days=settings.AUDIT_RETENTION_DAYS)
    deleted, _ = AuditEvent.objects.filter(occurred_at__lt=cutoff).delete()
    return deleted
