"""Cross-checking the reservations the portal records with what AWS says of them, through the organization's role.

ODCRs and Capacity Blocks are asked with EC2's ``GetCapacityReservationUsage`` (its ``TotalInstanceCount`` and
``AvailableInstanceCount``), training plans with SageMaker's ``DescribeTrainingPlan`` (``TotalInstanceCount`` and
``InUseInstanceCount``), each in the reservation's region. The portal's own count is the instances of its
clusters up (ready or deleting) that were launched into the reservation (``clusters.launches.capacity``'s parameter). A
reservation AWS reports with fewer instances in use than the portal counts held is **flagged**: the portal
accounts held capacity that AWS does not see used (the cluster runs outside it, or the recorded id is wrong).

Throttling is retried by botocore (standard mode) and then by the task with a growing countdown; any failure is
recorded on the reservation's check in the portal's words (``status="failed"``) and leaves the figures of the
last good check in place.
"""
from __future__ import annotations

import logging
from collections import defaultdict

from django.utils import timezone
from django.utils.html import strip_tags

from clusters.accounting.compute import UP_STATES
from clusters.accounting.models import CheckStatus, ReservationCheck
from clusters.launches import capacity
from clusters.models import Cluster
from portal.core import aws
from portal.core.models import Organization
from workloads.choices import ReservationKind
from workloads.models import CapacityReservation

logger = logging.getLogger(__name__)
REASONS = {"AccessDenied": "access_denied", "AccessDeniedException": "access_denied",
           "UnauthorizedOperation": "access_denied", "NoRole": "access_denied",
           "InvalidCapacityReservationId.NotFound": "not_found", "ResourceNotFound": "not_found",
           "ValidationException": "not_found", "RequestLimitExceeded": "throttling"}


def in_force(organization_id: int):
    today = timezone.localdate()
    return CapacityReservation.objects.filter(organization_id=organization_id, start__lte=today, end__gte=today)


def held_by_reservation(organization_ids) -> dict[str, int]:
    """Instances of the organizations' clusters up now, per reservation id (or training plan ARN) they were
    launched into. One query."""
    held: dict[str, int] = defaultdict(int)
    names = capacity.PARAMETER_NAMES
    for params, nodes in (Cluster.objects.filter(organization_id__in=list(organization_ids), state__in=UP_STATES)
                          .values_list("parameters", "node_count")):
        wired = (params or {}).get("cluster") or {} if isinstance(params, dict) else {}
        for name in names:
            if wired.get(name):
                held[wired[name]] += nodes
    return dict(held)


def ask(organization: Organization, reservation: CapacityReservation) -> tuple[str, int, int]:
    """AWS's (state, total instances, instances in use) of one reservation. Raises ``AwsError``."""
    try:
        if reservation.kind == ReservationKind.TRAINING_PLAN:
            client = aws.client("sagemaker", organization=organization, region=reservation.region)
            plan = client.describe_training_plan(TrainingPlanName=reservation.reservation_id.rsplit("/", 1)[-1])
            return (plan.get("Status") or "", int(plan.get("TotalInstanceCount") or 0),
                    int(plan.get("InUseInstanceCount") or 0))
        client = aws.client("ec2", organization=organization, region=reservation.region)
        usage = client.get_capacity_reservation_usage(CapacityReservationId=reservation.reservation_id)
        total = int(usage.get("TotalInstanceCount") or 0)
        return usage.get("State") or "", total, total - int(usage.get("AvailableInstanceCount") or 0)
    except aws.AWS_EXCEPTIONS as exc:
        raise aws.translate(exc) from exc


def failure_reason(error: aws.AwsError) -> str:
    if error.code in REASONS:
        return REASONS[error.code]
    return "throttling" if error.retryable and "throttl" in error.code.lower() else "error"


def check_organization(organization_id: int, *, record_retryable: bool = True) -> list[ReservationCheck]:
    """Ask AWS about each of the organization's reservations in force and store the answers. Raises the first
    retryable ``AwsError`` after every reservation was tried (the task retries later); a retryable failure is
    recorded only when ``record_retryable`` (the last try), so a passing slowdown leaves the last good check."""
    organization = Organization.objects.get(pk=organization_id)
    reservations = list(in_force(organization_id))
    held = held_by_reservation([organization_id])
    now = timezone.now()
    checks, retry = [], None
    for reservation in reservations:
        portal_held = held.get(reservation.reservation_id, 0)
        try:
            state, total, in_use = ask(organization, reservation)
        except aws.AwsError as error:
            logger.info("reservation %s of organization %s: %s", reservation.reservation_id, organization_id, error)
            if error.retryable:
                retry = retry or error
                if not record_retryable:
                    continue
            values = {"checked_at": now, "status": CheckStatus.FAILED, "failure_reason": failure_reason(error),
                      "error": " ".join(strip_tags(str(error)).split())[:2000], "portal_held": portal_held}
        else:
            values = {"checked_at": now, "status": CheckStatus.OK, "failure_reason": "", "error": "",
                      "aws_state": state[:32], "aws_total": total, "aws_in_use": max(0, in_use),
                      "portal_held": portal_held, "flagged": portal_held > max(0, in_use)}
        check, _ = ReservationCheck.objects.update_or_create(
            reservation=reservation, defaults={"organization_id": organization_id, **values})
        checks.append(check)
    if retry is not None:
        raise retry
    return checks


def for_organizations(organization_ids) -> dict[int, list[ReservationCheck]]:
    """The checks of the organizations' reservations in force, per organization (one query)."""
    today = timezone.localdate()
    found: dict[int, list[ReservationCheck]] = defaultdict(list)
    for check in (ReservationCheck.objects.filter(organization_id__in=list(organization_ids),
                                                  reservation__start__lte=today, reservation__end__gte=today)
                  .select_related("reservation").order_by("reservation__end", "reservation__reservation_id")):
        found[check.organization_id].append(check)
    return dict(found)


def flagged(organization_ids, today) -> list[ReservationCheck]:
    """The flagged checks of the organizations' reservations in force ``today`` (one query)."""
    return list(ReservationCheck.objects.filter(organization_id__in=list(organization_ids), flagged=True,
                                                reservation__start__lte=today, reservation__end__gte=today)
                .select_related("reservation", "organization").order_by("organization__name", "reservation__end"))
