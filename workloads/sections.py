"""Sections this app adds to the organization page (registered in apps.py ready())."""
from __future__ import annotations

import datetime
from decimal import Decimal

from django.db.models import Sum
from django.utils import timezone

from portal.core import access, provider_errors
from portal.core.cycle_filter import in_active_cycle
from workloads import usage
from workloads.models import CapacityReservation, CostDay, CostFetch, Workload


def workloads_section(request, organization) -> dict:
    user = request.user
    return {
        "workloads": Workload.objects.restrict(user).filter(organization=organization).select_related("lead_sa"),
        "can_add": access.can_in_organization(user, access.CHANGE, Workload, organization.pk),
    }


def quotas_section(request, organization) -> dict:
    user = request.user
    day = timezone.localdate()
    return {
        "usage_rows": usage.usage_rows(user, organization, day),
        "expiring": in_active_cycle(CapacityReservation.objects.restrict(user).filter(
            organization=organization, end__gte=day, end__lte=day + datetime.timedelta(days=14))),
    }


COST_SECTION_DAYS = 14


def cost_section(request, organization) -> dict:
    """The last two weeks of Cost Explorer's figures, per day and per service, and how the last fetch went."""
    user = request.user
    end = timezone.localdate()
    start = end - datetime.timedelta(days=COST_SECTION_DAYS)
    rows = CostDay.objects.restrict(user).filter(organization=organization, day__gte=start, day__lt=end)
    by_day = rows.order_by("-day").values("day").annotate(total=Sum("amount_usd"))
    by_service = rows.order_by().values("service").annotate(total=Sum("amount_usd")).order_by("-total", "service")
    fetch = CostFetch.objects.restrict(user).filter(organization=organization).first()
    return {
        "days": list(by_day),
        "services": list(by_service[:6]),
        "total": sum((row["total"] for row in by_day), Decimal(0)),
        "fetch": fetch,
        "fetch_error": provider_errors.cost_fetch_error(fetch, user),
        "window_days": COST_SECTION_DAYS,
    }
