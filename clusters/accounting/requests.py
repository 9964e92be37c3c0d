"""Reservation requests: what an award asks the program to reserve, and the program manager's answer.

The award (``portal.engagement.calls.services.award``) calls :func:`create_for_award` inside its transaction,
under the call's and the applications' row locks, with one line per awarded capacity line. Each request is keyed
by the line it comes from (``award_key``, unique): the same award saved again, or a second program manager
awarding at the same moment, finds the key taken and writes nothing more (``ON CONFLICT DO NOTHING``).

A pending request is fulfilled by recording the reservation the program bought (a ``CapacityReservation`` of the
organization, backing the awarded quota, in the request's cycle: the accounting counts it as reserved from then
on and the reservation checks ask AWS about it) or declined with a note. Both are compare-and-set from pending
under the request's row lock, so a form posted twice, or two program managers at once, decide it once.
"""
from __future__ import annotations

import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from clusters.accounting.models import RequestState, ReservationRequest
from portal.core import timeline
from portal.core.choices import TimelineKind
from workloads.choices import ReservationKind
from workloads.models import CapacityReservation


class RequestError(Exception):
    """The request was decided already, or the reservation given does not fit it."""


def award_key(application_id: int, index: int) -> str:
    return f"calls.application:{application_id}:{index}"


def create_for_award(organization, cycle, awarded_by: str, lines: list[tuple[str, dict, object]]) -> int:
    """One request per awarded line (``(award_key, line, quota)``; the line has ``instance_type``, ``region``,
    ``count``, ``weeks``, ``start`` and the offering's ``source``, ``offering_id`` and ``upfront_fee``). Lines
    whose key is taken already are skipped. Answers how many were made."""
    taken = set(ReservationRequest.objects.filter(award_key__in=[key for key, _line, _quota in lines])
                .values_list("award_key", flat=True))
    rows = []
    for key, line, quota in lines:
        if key in taken:
            continue
        start = line["start"]
        rows.append(ReservationRequest(
            organization=organization, cycle=cycle, award_key=key, awarded_by=awarded_by[:200],
            instance_type_name=line["instance_type"], region=line["region"], count=line["count"],
            weeks=line["weeks"], start=start, end=start + datetime.timedelta(days=7 * line["weeks"] - 1),
            offering_kind=line.get("source") or "", offering_id=line.get("offering_id") or "",
            upfront_fee=str(line.get("upfront_fee") or "")[:32], quota=quota))
    ReservationRequest.objects.bulk_create(rows, ignore_conflicts=True)  # the unique key has the last word
    stored = list(ReservationRequest.objects.filter(award_key__in=[r.award_key for r in rows]))
    ReservationRequest.history.bulk_history_create(stored, default_change_reason="Requested by an award")
    return len(stored)


def _locked(request: ReservationRequest) -> ReservationRequest:
    locked = (ReservationRequest.objects.select_for_update(of=("self",)).select_related("organization", "quota")
              .get(pk=request.pk))
    if locked.state != RequestState.PENDING:
        raise RequestError(gettext("This request was decided already (%(state)s).")
                           % {"state": locked.get_state_display()})
    return locked


def fulfil(request: ReservationRequest, user, reservation_id: str, availability_zone: str,
           note: str = "") -> CapacityReservation:
    """Record the reservation bought for ``request``: a capacity reservation of its organization for its type,
    region, instances and dates, backing the awarded quota, in the request's cycle."""
    with transaction.atomic():
        request = _locked(request)
        kind = request.offering_kind or ReservationKind.CAPACITY_BLOCK
        reservation = CapacityReservation(
            organization=request.organization, cycle_id=request.cycle_id, reservation_id=reservation_id.strip(),
            kind=kind, instance_type_name=request.instance_type_name, count=request.count, region=request.region,
            availability_zone=availability_zone.strip(), start=request.start, end=request.end,
            quota=request.quota, notes=f"Bought for {request.awarded_by} (offering {request.offering_id or 'none'})")
        reservation.full_clean(exclude=["cycle"])
        reservation._history_user = user
        reservation.save()
        request.state, request.reservation = RequestState.FULFILLED, reservation
        _decided(request, user, note, "Fulfilled")
        timeline.record(request.organization_id, TimelineKind.QUOTA,
                        gettext("Reservation %(reservation)s recorded for %(request)s")
                        % {"reservation": reservation.reservation_id, "request": request},
                        source=reservation, visibility="shared", actor=user)
    return reservation


def decline(request: ReservationRequest, user, note: str) -> ReservationRequest:
    """The program will not reserve it (the quota stays as awarded); the note says why."""
    if not (note or "").strip():
        raise RequestError(gettext("Say why the reservation is not requested."))
    with transaction.atomic():
        request = _locked(request)
        request.state = RequestState.DECLINED
        _decided(request, user, note, "Declined")
        timeline.record(request.organization_id, TimelineKind.QUOTA,
                        gettext("The reservation of %(request)s will not be requested") % {"request": request},
                        source=request, visibility="shared", actor=user)
    return request


def _decided(request: ReservationRequest, user, note: str, reason: str) -> None:
    request.note, request.decided_by, request.decided_at = (note or "").strip(), user, timezone.now()
    request._history_user, request._change_reason = user, reason
    request.save(update_fields=["state", "reservation", "note", "decided_by", "decided_at", "updated"])


def validation_text(exc: ValidationError) -> str:
    return " ".join(exc.messages)
