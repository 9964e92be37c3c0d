"""Cost per organization and day, fetched from Cost Explorer through the organization's role.

``GetCostAndUsage`` is asked for DAILY UnblendedCost grouped by SERVICE and filtered to the
organization's linked account, page by page (``NextPageToken``). Throttling is retried by botocore
(standard mode, exponential backoff with jitter) and, once its attempts are spent, by the Celery task
with a growing countdown. Every day Cost Explorer reports replaces that day's rows in one
transaction (its recent days are estimates that it revises); days it does not report are left as
they were. The readers at the bottom are what other areas (capacity accounting, the review) call.
"""
from __future__ import annotations

import datetime
import logging
from collections import defaultdict
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.html import strip_tags

from portal.core import aws
from portal.core.models import Organization
from workloads.models import CostDay, CostFetch
from workloads.models.spend import CostFetchStatus

logger = logging.getLogger(__name__)
# Cost Explorer's API has one endpoint, in us-east-1, whatever the account's home region.
COST_EXPLORER_REGION = "us-east-1"
METRIC = "UnblendedCost"
# AWS's error codes, in the portal's vocabulary (portal/core/provider_errors.py COST_FAILURES).
REASONS = {
    "AccessDenied": "access_denied", "AccessDeniedException": "access_denied", "UnauthorizedOperation": "access_denied",
    "NoRole": "access_denied",
    "DataUnavailableException": "not_enabled", "BillExpirationException": "not_enabled",
    "LimitExceededException": "throttling",
}


def request(organization: Organization, start: datetime.date, end: datetime.date) -> dict:
    """The GetCostAndUsage parameters for ``organization`` over [start, end) (without a page token)."""
    return {
        "TimePeriod": {"Start": start.isoformat(), "End": end.isoformat()},
        "Granularity": "DAILY",
        "Metrics": [METRIC],
        "GroupBy": [{"Type": "DIMENSION", "Key": "SERVICE"}],
        "Filter": {"Dimensions": {"Key": "LINKED_ACCOUNT", "Values": [organization.aws_account_id]}},
    }


def default_window(today: datetime.date | None = None) -> tuple[datetime.date, datetime.date]:
    """The days a scheduled fetch asks for: the last ``SPEND_FETCH_DAYS`` full days, today excluded."""
    today = today or timezone.localdate()
    return today - datetime.timedelta(days=settings.SPEND_FETCH_DAYS), today


def parse_results(pages: list[dict]) -> dict[datetime.date, dict[str, Decimal]]:
    """Each reported day's amount per service, summed over pages (a day's groups may span two pages)."""
    days: dict[datetime.date, dict[str, Decimal]] = {}
    for page in pages:
        for result in page.get("ResultsByTime") or []:
            day = datetime.date.fromisoformat(result["TimePeriod"]["Start"])
            services = days.setdefault(day, defaultdict(Decimal))
            for group in result.get("Groups") or []:
                amount = (group.get("Metrics") or {}).get(METRIC) or {}
                service = ((group.get("Keys") or ["Unknown"])[0] or "Unknown")[:200]
                services[service] += Decimal(str(amount.get("Amount") or "0"))
    return {day: dict(services) for day, services in days.items()}


def _pages(organization: Organization, start: datetime.date, end: datetime.date) -> list[dict]:
    client = aws.client("ce", organization=organization, region=COST_EXPLORER_REGION)
    params = request(organization, start, end)
    pages = []
    while True:
        page = client.get_cost_and_usage(**params)
        pages.append(page)
        token = page.get("NextPageToken")
        if not token:
            return pages
        params = {**params, "NextPageToken": token}


def store(organization_id: int, days: dict[datetime.date, dict[str, Decimal]]) -> int:
    """Replace the rows of every day in ``days`` (one transaction); returns the rows written."""
    now = timezone.now()
    rows = [CostDay(organization_id=organization_id, day=day, service=service, amount_usd=amount, fetched_at=now)
            for day, services in sorted(days.items()) for service, amount in sorted(services.items())]
    with transaction.atomic():
        CostDay.objects.filter(organization_id=organization_id, day__in=list(days)).delete()
        CostDay.objects.bulk_create(rows)
    return len(rows)


def _record(organization_id: int, start, end, *, days: int = 0, error: aws.AwsError | None = None) -> None:
    values = {"attempted_at": timezone.now(), "start": start, "end": end, "days": days,
              "status": CostFetchStatus.FAILED if error else CostFetchStatus.OK,
              "failure_reason": failure_reason(error) if error else "",
              # An endpoint may answer an error page: keep its words, not its markup.
              "error": " ".join(strip_tags(str(error)).split())[:2000] if error else ""}
    CostFetch.objects.update_or_create(organization_id=organization_id, defaults=values)


def failure_reason(error: aws.AwsError) -> str:
    if error.code in REASONS:
        return REASONS[error.code]
    return "throttling" if error.retryable and "throttl" in error.code.lower() else "error"


def fetch(organization_id: int, start: datetime.date | None = None, end: datetime.date | None = None, *,
          record_retryable: bool = True) -> int:
    """Fetch and store [start, end) for one organization; returns the days stored.

    Raises ``AwsError`` when AWS refuses; the failure is recorded first (a retryable one only when
    ``record_retryable``: the task leaves the last good state in place while it still retries).
    """
    organization = Organization.objects.get(pk=organization_id)
    if start is None or end is None:
        start, end = default_window()
    if not organization.aws_account_id:
        error = aws.AwsError("The organization has no AWS account id to filter Cost Explorer on.", code="NoAccount")
        _record(organization_id, start, end, error=error)
        raise error
    try:
        days = parse_results(_pages(organization, start, end))
    except aws.AwsError as exc:
        if record_retryable or not exc.retryable:
            _record(organization_id, start, end, error=exc)
        raise
    except aws.AWS_EXCEPTIONS as exc:
        error = aws.translate(exc)
        if record_retryable or not error.retryable:
            _record(organization_id, start, end, error=error)
        raise error from exc
    store(organization_id, days)
    _record(organization_id, start, end, days=len(days))
    logger.info("cost of organization %s: %d day(s) from %s to %s", organization_id, len(days), start, end)
    return len(days)


# Readers: sums over stored rows. Callers restrict the organizations to what their user may see.

def cost_by_organization(organization_ids, start: datetime.date, end: datetime.date) -> dict[int, Decimal]:
    """Total cost per organization over the days in [start, end); organizations without rows are absent."""
    rows = (CostDay.objects.filter(organization_id__in=list(organization_ids), day__gte=start, day__lt=end)
            .order_by().values("organization_id").annotate(total=Sum("amount_usd")))
    return {row["organization_id"]: row["total"] for row in rows}


def cost_by_day(organization_id: int, start: datetime.date, end: datetime.date) -> dict[datetime.date, Decimal]:
    """One organization's total cost per day over [start, end), oldest first; days without rows are absent."""
    rows = (CostDay.objects.filter(organization_id=organization_id, day__gte=start, day__lt=end)
            .order_by("day").values("day").annotate(total=Sum("amount_usd")))
    return {row["day"]: row["total"] for row in rows}


def cost_by_service(organization_id: int, start: datetime.date, end: datetime.date) -> list[tuple[str, Decimal]]:
    """One organization's cost per service over [start, end), largest first."""
    rows = (CostDay.objects.filter(organization_id=organization_id, day__gte=start, day__lt=end)
            .order_by().values("service").annotate(total=Sum("amount_usd")).order_by("-total", "service"))
    return [(row["service"], row["total"]) for row in rows]


def cost_by_organization_day(organization_ids, start: datetime.date,
                             end: datetime.date) -> dict[int, dict[datetime.date, Decimal]]:
    """Each organization's cost per day over [start, end) (one query): the days Cost Explorer reported, so a
    figure set against the cost (busy hours) can be taken over the same days."""
    rows = (CostDay.objects.filter(organization_id__in=list(organization_ids), day__gte=start, day__lt=end)
            .order_by().values("organization_id", "day").annotate(total=Sum("amount_usd")))
    found: dict[int, dict[datetime.date, Decimal]] = defaultdict(dict)
    for row in rows:
        found[row["organization_id"]][row["day"]] = row["total"]
    return dict(found)

