"""Sections this app adds to the organization page (registered in apps.py ready())."""
from __future__ import annotations

import datetime

from django.utils import timezone

from portal import access
from portal.engagement.cycle_filter import in_active_cycle
from workloads import usage
from workloads.models import CapacityReservation, Workload


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
