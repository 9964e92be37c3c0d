"""Sections this app adds to other pages (registered in apps.py ready()):

- the organization page: the status a customer opens — clusters with state and health, validation, the readiness
  checklist, open support interactions shared with them, the next reservation expiry;
- the lead SA's home: what is open and ageing, launches in flight, new faults, for the organizations they lead.

Every queryset goes through the policy, so a customer sees only shared interactions of their organization.
"""
from __future__ import annotations

import datetime

from django.db.models import Count, Min, Q
from django.utils import timezone

from portal.review.figures import OPEN_STATUSES, health_model, interaction_model, model_or_none

LEAD_LIST_LIMIT = 20


def status_section(request, organization) -> dict:
    user = request.user
    Cluster = model_or_none("clusters", "Cluster")
    Reservation = model_or_none("workloads", "CapacityReservation")
    Interaction = interaction_model()
    today = timezone.localdate()
    clusters = list(Cluster.objects.restrict(user).filter(organization=organization).exclude(state="deleted")
                    .order_by("name")) if Cluster else []
    ctx = {
        "clusters": clusters,
        "interactions_available": Interaction is not None,
        "open_interactions": Interaction.objects.restrict(user).filter(
            organization=organization, status__in=OPEN_STATUSES).aggregate(
            n=Count("id"), oldest=Min("occurred_at"), urgent=Count("id", filter=Q(severity__in=("high", "critical"))))
        if Interaction else None,
        "next_expiry": Reservation.objects.restrict(user).filter(organization=organization, end__gte=today)
        .order_by("end").first() if Reservation else None,
        "health_available": health_model("GpuFault") is not None,
        "readiness": _readiness(user, organization),
        "validation": _validation(user, organization),
    }
    return ctx


def _readiness(user, organization) -> list | None:
    """The readiness checklist of the health app, when it offers one (``health.readiness.checklist``)."""
    try:
        from health import readiness  # type: ignore[import-not-found]
    except ImportError:
        return None
    checklist = getattr(readiness, "checklist", None)
    return checklist(organization, user) if callable(checklist) else None


def _validation(user, organization) -> list:
    ValidationRun = health_model("ValidationRun")
    if ValidationRun is None or "verdict" not in {f.name for f in ValidationRun._meta.get_fields()}:
        return []
    return list(ValidationRun.objects.restrict(user).filter(cluster__organization=organization)
                .select_related("cluster").order_by("-pk")[:10])


def _led(request):
    """The organizations the signed-in user leads (the lead SA's home lists them)."""
    from portal import access
    from portal.models import Organization

    led = access._roles(request.user).get(access.LEAD_SA, frozenset())
    return Organization.objects.restrict(request.user).filter(pk__in=led)


def lead_open_section(request) -> dict:
    """Per organization led: open interactions, how many are high or critical, the oldest one's age. (The
    interactions app lists the open interactions themselves on the same page.)"""
    Interaction = interaction_model()
    if Interaction is None:
        return {"available": False}
    user = request.user
    organizations = _led(request)
    now = timezone.now()
    qs = Interaction.objects.restrict(user).filter(organization__in=organizations, status__in=OPEN_STATUSES)
    per_org = list(qs.values("organization__name", "organization__slug").annotate(
        n=Count("id"), oldest=Min("occurred_at"), urgent=Count("id", filter=Q(severity__in=("high", "critical"))))
        .order_by("oldest"))
    for row in per_org:
        row["age_days"] = max(0, (now - row["oldest"]).days)
    return {"available": True, "per_org": per_org}


def lead_launches_section(request) -> dict:
    """Clusters being launched (scheduled or creating) and launches that failed in the last 7 days."""
    Cluster = model_or_none("clusters", "Cluster")
    since = timezone.now() - datetime.timedelta(days=7)
    qs = Cluster.objects.restrict(request.user).filter(organization__in=_led(request)).select_related("organization")
    return {
        "in_flight": list(qs.filter(state__in=("scheduled", "creating")).order_by("created")[:LEAD_LIST_LIMIT]),
        "failed": list(qs.filter(state="failed", updated__gte=since).order_by("-updated")[:LEAD_LIST_LIMIT]),
    }


def lead_faults_section(request) -> dict:
    """GPU faults first seen in the last 7 days (once the health app records them)."""
    GpuFault = health_model("GpuFault")
    if GpuFault is None or not {"cluster", "first_seen"} <= {f.name for f in GpuFault._meta.get_fields()}:
        return {"available": False}
    since = timezone.now() - datetime.timedelta(days=7)
    faults = (GpuFault.objects.restrict(request.user).filter(cluster__organization__in=_led(request),
                                                             first_seen__gte=since)
              .select_related("cluster__organization").order_by("-first_seen")[:LEAD_LIST_LIMIT])
    return {"available": True, "faults": list(faults)}


ORGANIZATION_SECTIONS = [("review/org_status_section.html", status_section)]
LEAD_SECTIONS = [
    ("review/htmx/lead_open.html", lead_open_section),
    ("review/htmx/lead_launches.html", lead_launches_section),
    ("review/htmx/lead_faults.html", lead_faults_section),
]
