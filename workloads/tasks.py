"""Scheduled work of the workloads app: warnings before quotas and reservations end, cost from Cost Explorer."""
from __future__ import annotations

import datetime
import logging

from celery import shared_task
from django.db import IntegrityError, transaction
from django.utils import timezone

from portal.core import aws, jobs, timeline
from portal.core.choices import Severity, TimelineKind
from portal.core.models import Organization
from portal.core.notifications import Event, notify
from portal.core.stored_text import message
from workloads import spend, timeline_texts
from workloads.choices import EXPIRY_THRESHOLDS
from workloads.models import CapacityReservation, ExpiryWarning, InstanceQuota

logger = logging.getLogger(__name__)
TASK_NAME = "workloads.warn_expiring"


def _threshold(days_left: int) -> int | None:
    """The tightest threshold reached: 3 days left → 7 (then 1 when a day is left)."""
    reached = [t for t in EXPIRY_THRESHOLDS if days_left <= t]
    return min(reached) if reached else None


def warn_expiring(today: datetime.date | None = None) -> list[str]:
    """Warn once per threshold (14, 7, 1 days) before a quota or reservation ends. Returns the titles sent.

    A run that missed days sends only the tightest threshold reached, and marks the wider ones as sent.
    """
    today = today or timezone.localdate()
    horizon = today + datetime.timedelta(days=max(EXPIRY_THRESHOLDS))
    sent = []
    sources = (
        ("quota", InstanceQuota.objects.filter(end__gte=today, end__lte=horizon).select_related("organization")),
        ("reservation", CapacityReservation.objects.filter(end__gte=today, end__lte=horizon).select_related("organization")),
    )
    for kind, rows in sources:
        rows = list(rows)
        done = set(ExpiryWarning.objects.filter(kind=kind, object_id__in=[r.pk for r in rows])
                   .values_list("object_id", "threshold_days", "ends_on"))
        for row in rows:
            days_left = (row.end - today).days
            threshold = _threshold(days_left)
            if threshold is None or (row.pk, threshold, row.end) in done:
                continue
            title = _warn(kind, row, days_left, threshold, today)
            if title:
                sent.append(title)
    return sent


def _warn(kind: str, row, days_left: int, threshold: int, today) -> str | None:
    what = str(row) if kind == "quota" else f"{row.reservation_id} ({row.count} × {row.instance_type_name}, {row.availability_zone})"
    said = timeline_texts.ends_in(kind, days_left, what)
    title = said.english()
    # High reaches a channel left at its default minimum; the last day is critical.
    severity = Severity.CRITICAL if threshold == min(EXPIRY_THRESHOLDS) else Severity.HIGH
    try:
        with transaction.atomic():
            for t in EXPIRY_THRESHOLDS:
                if t >= threshold:
                    ExpiryWarning.objects.get_or_create(kind=kind, object_id=row.pk, threshold_days=t, ends_on=row.end)
            timeline.record(row.organization_id, TimelineKind.QUOTA, said, source=row, severity=severity,
                            tags=["expiry", f"{threshold}d"], body=message(timeline_texts.ENDS_ON, day=str(row.end)))
            notify(Event(kind="quota_expiry", title=title, organization_id=row.organization_id, severity=severity,
                         url=row.get_absolute_url(), extra={"threshold_days": threshold, "ends_on": row.end.isoformat()}))
    except IntegrityError:  # another run sent it at the same moment
        return None
    logger.info("expiry warning: %s (%s)", title, row.organization.slug)
    return title


@shared_task(name=TASK_NAME)
def warn_expiring_task() -> int:
    """Daily (django-celery-beat, created by migration 0003): send the due expiry warnings."""
    return len(warn_expiring())


# Cost from Cost Explorer (workloads/spend.py): one task per organization, sent daily by beat.
COST_RETRIES = 5


@shared_task(name="workloads.spend.fetch_costs", bind=True, acks_late=True, max_retries=COST_RETRIES)
def fetch_costs_task(self, organization_id: int) -> int:
    """Fetch one organization's recent days; throttling and other transient failures retry with backoff."""
    last_try = self.request.retries >= COST_RETRIES
    try:
        return spend.fetch(organization_id, record_retryable=last_try)
    except aws.AwsError as exc:
        if exc.retryable and not last_try:
            raise self.retry(exc=exc, countdown=60 * 2 ** self.request.retries) from exc
        return 0


@shared_task(name="workloads.spend.fetch_all_costs")
def fetch_all_costs_task() -> int:
    """Daily: one fetch per organization that has an AWS account."""
    ids = list(Organization.objects.exclude(aws_account_id="").values_list("pk", flat=True))
    for pk in ids:
        jobs.send(fetch_costs_task, pk)
    return len(ids)
