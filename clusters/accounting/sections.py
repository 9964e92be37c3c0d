"""The accounting sections of shared pages: an organization's accelerator-hours waterfall (its page), the idle
clusters of the organizations a lead SA leads (the lead home), a cluster's own figures (its page, a tag)."""
from __future__ import annotations

import datetime

from django.utils import timezone

from clusters.accounting import forecast, idle, reservation_checks, services, thresholds
from clusters.accounting.models import AccountingSettings
from clusters.models import Cluster
from portal.core import access
from portal.core.models import Organization

WINDOW_DAYS = 28


def window(now: datetime.datetime | None = None) -> tuple[datetime.datetime, datetime.datetime]:
    """The last WINDOW_DAYS program days up to now."""
    now = now or timezone.now()
    return services.midnight(timezone.localdate(now) - datetime.timedelta(days=WINDOW_DAYS - 1)), now


def organization_section(request, organization) -> dict:
    """The waterfall (reserved → held → healthy → busy) of the last four weeks, each cluster's share, the idle
    clusters and the forecast of the reservations and quotas in force."""
    start, end = window()
    figures = services.organization_figures([organization.pk], start, end).get(organization.pk)
    clusters = list(Cluster.objects.restrict(request.user).filter(organization=organization).order_by("name"))
    per_cluster = services.cluster_figures([c.pk for c in clusters], start, end)
    limits = thresholds.for_organization(organization.pk)
    return {
        "days": WINDOW_DAYS,
        "figures": figures,
        "clusters": [(c, per_cluster[c.pk]) for c in clusters if c.pk in per_cluster],
        "idle": list(idle.open_notices([organization.pk])),
        "forecast": forecast.forecast([organization.pk]).get(organization.pk),
        "thresholds": limits,
        "idle_share": f"{round(limits.idle_busy_share * 100)} %",  # "10 %", not the stored 0.10
        "can_set": access.can_in_organization(request.user, access.CHANGE, AccountingSettings, organization.pk),
        "checks": reservation_checks.for_organizations([organization.pk]),
    }


def lead_idle_section(request) -> dict:
    """Idle capacity in the organizations the signed-in lead SA leads."""
    led = access.led_organizations(request.user)
    ids = Organization.objects.restrict(request.user).filter(pk__in=led).values_list("pk", flat=True)
    return {"idle": list(idle.open_notices(ids))}


def cluster_section(cluster) -> dict:
    """The cluster page's figures (the page restricted the cluster already)."""
    start, end = window()
    return {"days": WINDOW_DAYS, "figures": services.cluster_figures([cluster.pk], start, end).get(cluster.pk)}
