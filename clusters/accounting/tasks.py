"""The hourly accounting run (beat: "Account accelerator-hours"): closed hours, the roll-up, idle capacity; and
the reservation cross-check with AWS (beat: "Cross-check reservations with AWS"), one task per organization."""
from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from clusters.accounting import idle, reservation_checks, services
from portal.core import aws, jobs
from workloads.models import CapacityReservation

CHECK_RETRIES = 5


@shared_task(name="accounting.catch_up")
def catch_up() -> int:
    """Idempotent: a second run, or two at once, leaves the same rows and sends no second notice."""
    written = services.catch_up()
    idle.check()
    return written


@shared_task(name="accounting.check_reservations", bind=True, acks_late=True, max_retries=CHECK_RETRIES)
def check_reservations_task(self, organization_id: int) -> int:
    """Ask AWS about one organization's reservations in force; throttling retries with backoff."""
    last_try = self.request.retries >= CHECK_RETRIES
    try:
        return len(reservation_checks.check_organization(organization_id, record_retryable=last_try))
    except aws.AwsError as exc:
        if exc.retryable and not last_try:
            raise self.retry(exc=exc, countdown=60 * 2 ** self.request.retries) from exc
        return 0


@shared_task(name="accounting.check_all_reservations")
def check_all_reservations_task() -> int:
    """Every few hours: one check per organization with a reservation in force."""
    today = timezone.localdate()
    ids = sorted(set(CapacityReservation.objects.filter(start__lte=today, end__gte=today)
                     .values_list("organization_id", flat=True)))
    for pk in ids:
        jobs.send(check_reservations_task, pk)
    return len(ids)
