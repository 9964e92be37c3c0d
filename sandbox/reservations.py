"""Demo reservations on the embedded endpoint: every reservation in force that the demo recorded is registered
there as AWS would hold it (``sandbox.aws.control``), with the instances the demo's clusters run in it, so the
cross-check (``reservation_checks``, which beat runs) reads AWS's answer instead of "AWS does not know it". One
is deliberately under-used: AWS counts fewer instances running in Minato Medical's ODCR than the portal holds on
it (its cluster runs partly outside the reservation), so the flag shows. The seed then runs the check once, as
beat would. Without the endpoint nothing is registered. Idempotent: registering again replaces the same records
(the endpoint forgets them when it stops)."""
from __future__ import annotations

from django.conf import settings
from django.utils import timezone

from clusters.accounting import reservation_checks
from clusters.choices import ClusterState
from clusters.launches import capacity
from clusters.models import Cluster
from sandbox.aws import control
from workloads.models import CapacityReservation

# Reservation id → instances AWS reports running in it, where that is fewer than the portal holds.
UNDER_USED = {"cr-0a1b2c3d4e5f60006": 4}
_GONE = (ClusterState.FAILED, ClusterState.DELETED)


def running(reservation: CapacityReservation, held: dict[str, int]) -> int:
    """Instances AWS reports running in the reservation: the demo clusters on it, under-used where named."""
    count = held.get(reservation.reservation_id, 0)
    return min(reservation.count, UNDER_USED.get(reservation.reservation_id, count))


def _planned(organization_ids) -> dict[str, int]:
    """Instances of the clusters launched into each reservation, those still launching included (AWS runs the
    instances a launch asks for; the portal counts them held once the cluster is ready)."""
    planned: dict[str, int] = {}
    for params, nodes in (Cluster.objects.filter(organization_id__in=list(organization_ids))
                          .exclude(state__in=_GONE).values_list("parameters", "node_count")):
        wired = (params or {}).get("cluster") or {} if isinstance(params, dict) else {}
        for name in capacity.PARAMETER_NAMES:
            if wired.get(name):
                planned[wired[name]] = planned.get(wired[name], 0) + nodes
    return planned


def seed(context: dict) -> dict:
    if not settings.AWS_ENDPOINT_URL:
        return context
    today = timezone.localdate()
    reservations = list(CapacityReservation.objects.filter(start__lte=today, end__gte=today)
                        .select_related("organization").order_by("organization__name", "reservation_id"))
    planned = _planned({r.organization_id for r in reservations})
    for reservation in reservations:
        control.register_reservation(
            settings.AWS_ENDPOINT_URL, account_id=reservation.organization.aws_account_id,
            region=reservation.region, reservation_id=reservation.reservation_id, kind=reservation.kind,
            instance_type=reservation.instance_type_name, availability_zone=reservation.availability_zone,
            count=reservation.count, in_use=running(reservation, planned), days=(reservation.end - today).days + 1)
    checks = []
    for organization_id in sorted({r.organization_id for r in reservations}):
        checks += reservation_checks.check_organization(organization_id)
    context["reservation_checks"] = checks
    return context
