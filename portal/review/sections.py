"""Sections this app adds to other pages (registered in apps.py ready()):

- the organization page: the status a customer opens — clusters with state and health, validation, the readiness
  checklist, open support interactions shared with them, the next reservation expiry;
- the lead SA's home: what is open and ageing, launches in flight, new faults, for the organizations they lead.

Every queryset goes through the policy, so a customer sees only shared interactions of their organization.
"""
from __future__ import annotations

import datetime

from django.db.models import Count, Max, Min, Q
from django.utils import timezone
from django.utils.translation import gettext

from clusters.health import current
from clusters.health.models import ClusterHealthState, GpuFault, ValidationRun
from clusters.models import Cluster
from portal.core import access
from portal.core.choices import OPEN_STATUSES, worst_verdict
from portal.core.cycle_filter import in_active_cycle
from portal.core.models import Organization
from portal.review.figures.health import verdict_text
from workloads.interactions import services as interactions
from workloads.interactions.models import Interaction
from workloads.models import CapacityReservation

LEAD_LIST_LIMIT = 20


def status_section(request, organization) -> dict:
    user = request.user
    today = timezone.localdate()
    # The active cycle's figures (a past cycle's rows are browsed on the lists with ?cycle=).
    clusters = list(in_active_cycle(Cluster.objects.restrict(user).filter(organization=organization))
                    .exclude(state="deleted").order_by("name"))
    _annotate_health(user, clusters)
    return {
        "clusters": clusters,
        "open_interactions": interactions.open_summary(user, organization),
        "next_expiry": in_active_cycle(CapacityReservation.objects.restrict(user).filter(
            organization=organization, end__gte=today)).order_by("end").first(),
        # Clusters with open faults come first on the page, not only in the table below.
        "problems": [c for c in clusters if getattr(c, "health_verdict", None) not in (None, gettext("healthy"))],
    }


def _annotate_health(user, clusters: list) -> None:
    """Set ``health_verdict``, ``last_report`` and ``validation`` on each cluster: three queries in all."""
    ids = [c.pk for c in clusters]
    faults: dict[int, dict] = {}
    for r in (GpuFault.objects.restrict(user).filter(cluster_id__in=ids, cleared_at__isnull=True)
              .values("cluster_id", "verdict").annotate(n=Count("id")).order_by()):
        entry = faults.setdefault(r["cluster_id"], {"n": 0, "worst": None})
        entry["n"] += r["n"]
        entry["worst"] = worst_verdict([entry["worst"], r["verdict"]])
    # The last report of each cluster is kept on its current health (no aggregate over every report).
    reports = dict(ClusterHealthState.objects.restrict(user).filter(cluster_id__in=ids, last_report__isnull=False)
                   .values_list("cluster_id", "last_report_at"))
    silent = current.not_reporting(ids)
    runs = {r["cluster_id"]: r for r in ValidationRun.objects.restrict(user).filter(cluster_id__in=ids)
            .values("cluster_id").annotate(passed=Count("id", filter=Q(verdict="pass")), n=Count("id"),
                                           last=Max("uploaded_at")).order_by()}
    for c in clusters:
        f = faults.get(c.pk, {"n": 0, "worst": None})
        c.health_verdict = verdict_text(f["n"], f["worst"], c.pk in reports)
        if silent.get(c.pk):
            c.health_verdict = f"{c.health_verdict or gettext('no report yet')} · {current.nodes_text(silent[c.pk])}"
        c.last_report = reports.get(c.pk)
        run = runs.get(c.pk)
        c.validation = None if run is None else (gettext("validated") if run["passed"] else gettext("not passed yet"))


def _led(request):
    """The organizations the signed-in user leads (the lead SA's home lists them)."""
    led = access.led_organizations(request.user)
    return Organization.objects.restrict(request.user).filter(pk__in=led)


def lead_open_section(request) -> dict:
    """Per organization led: open interactions, how many are high or critical, the oldest one's age. (The
    interactions app lists the open interactions themselves on the same page.)"""
    user = request.user
    organizations = _led(request)
    now = timezone.now()
    qs = Interaction.objects.restrict(user).filter(organization__in=organizations, status__in=OPEN_STATUSES)
    per_org = list(qs.values("organization__name", "organization__slug").annotate(
        n=Count("id"), oldest=Min("occurred_at"), urgent=Count("id", filter=Q(severity__in=("high", "critical"))))
        .order_by("oldest"))
    for row in per_org:
        row["age_days"] = max(0, (now - row["oldest"]).days)
    return {"per_org": per_org}


def lead_launches_section(request) -> dict:
    """Clusters being launched (scheduled or creating) and launches that failed in the last 7 days (one query)."""
    since = timezone.now() - datetime.timedelta(days=7)
    rows = list(Cluster.objects.restrict(request.user).filter(organization__in=_led(request))
                .filter(Q(state__in=("scheduled", "creating")) | Q(state="failed", updated__gte=since))
                .select_related("organization").order_by("-updated")[:2 * LEAD_LIST_LIMIT])
    return {
        "in_flight": sorted((c for c in rows if c.state != "failed"), key=lambda c: c.created)[:LEAD_LIST_LIMIT],
        "failed": [c for c in rows if c.state == "failed"][:LEAD_LIST_LIMIT],
    }


def lead_faults_section(request) -> dict:
    """GPU faults first seen in the last 7 days."""
    since = timezone.now() - datetime.timedelta(days=7)
    faults = (GpuFault.objects.restrict(request.user).filter(cluster__organization__in=_led(request),
                                                             first_seen__gte=since)
              .select_related("cluster__organization").order_by("-first_seen")[:LEAD_LIST_LIMIT])
    return {"faults": list(faults)}
