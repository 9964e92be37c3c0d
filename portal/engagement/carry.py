"""What is live at a cycle boundary: what moves into the next cycle, and what is left to wind down.

When the next cycle starts, the organizations that continue keep what still runs: their running clusters (and with
them the clusters' health, validations and faults, which reach their cycle through the cluster), the quotas and
capacity reservations still in force on the new cycle's first day, and the models they are still training. Those
rows move into the new cycle (one ``UPDATE`` per kind) and a ``CycleCarry`` row remembers where each came from, so
the old cycle's report still counts them. Everything else stays where it happened: milestones, released models,
finished clusters, ended quotas, weekly reviews (and timeline entries, which belong to no cycle).

What the organizations that do not continue still hold stays in the archived cycle, read-only, and is listed as
"to wind down" (``wind_down``) until it ends: their clusters can still be torn down (``access.TEAR_DOWN``).
"""
from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Q, QuerySet

from portal.engagement.choices import CarryKind, CycleStatus
from portal.engagement.models import Cycle, CycleCarry, TrainedModel


def _models():
    from clusters.models import Cluster
    from workloads.models import CapacityReservation, InstanceQuota

    return {CarryKind.CLUSTER: Cluster, CarryKind.QUOTA: InstanceQuota, CarryKind.RESERVATION: CapacityReservation,
            CarryKind.TRAINED_MODEL: TrainedModel}


def live_filter(kind: str, day: datetime.date) -> Q:
    """Which rows of ``kind`` are still live on ``day``: one definition for the carry-over, its summary and the
    wind-down list."""
    if kind == CarryKind.CLUSTER:
        from clusters.models import HOLDING_STATES

        return Q(state__in=HOLDING_STATES)
    if kind in (CarryKind.QUOTA, CarryKind.RESERVATION):
        return Q(end__gte=day)
    return Q(released_on__isnull=True)


def live(cycles: Cycle | Iterable, day: datetime.date) -> dict[str, QuerySet]:
    """The live rows of ``cycles`` (one cycle or several) on ``day``, by kind (unevaluated querysets)."""
    ids = [cycles.pk] if isinstance(cycles, Cycle) else [c.pk if isinstance(c, Cycle) else c for c in cycles]
    return {kind: model._default_manager.filter(live_filter(kind, day), cycle_id__in=ids)
            for kind, model in _models().items()}


@dataclass
class Summary:
    """What starting the next cycle will do (or did): who continues, who leaves, what moves, what winds down."""

    continuing: list = field(default_factory=list)
    leaving: list = field(default_factory=list)
    carried: dict[str, list] = field(default_factory=dict)
    wind_down: dict[str, list] = field(default_factory=dict)
    lessons: int = 0

    @property
    def carried_counts(self) -> list[tuple[str, int]]:
        return [(CarryKind(k).label, len(rows)) for k, rows in self.carried.items()]

    @property
    def wind_down_total(self) -> int:
        return sum(len(rows) for rows in self.wind_down.values())


def summary(current: Cycle, continuing_ids: Iterable[int], day: datetime.date) -> Summary:
    """What starting the next cycle on ``day`` with ``continuing_ids`` carries and leaves behind, as things stand."""
    from portal.engagement.cycles import lessons_of

    continuing_ids = set(continuing_ids)
    orgs = [p.organization for p in current.participations.select_related("organization")]
    result = Summary(continuing=[o for o in orgs if o.pk in continuing_ids],
                     leaving=[o for o in orgs if o.pk not in continuing_ids])
    for kind, qs in live(current, day).items():
        rows = list(qs.select_related("organization").order_by("organization__name", "pk"))
        result.carried[kind] = [r for r in rows if r.organization_id in continuing_ids]
        result.wind_down[kind] = [r for r in rows if r.organization_id not in continuing_ids]
    result.lessons = len([line for line in lessons_of(current).splitlines() if line.strip()])
    return result


def carry_over(old: Cycle, new: Cycle, continuing_ids: Iterable[int]) -> dict[str, int]:
    """Move the continuing organizations' live rows from ``old`` into ``new`` (inside the switching transaction),
    recording each move. Answers how many rows of each kind moved."""
    day = new.starts_on
    moved: dict[str, int] = {}
    for kind, qs in live(old, day).items():
        rows = list(qs.filter(organization_id__in=list(continuing_ids)).values_list("pk", "organization_id"))
        CycleCarry.objects.bulk_create([CycleCarry(cycle=new, from_cycle=old, kind=kind, object_id=pk,
                                                   organization_id=org) for pk, org in rows])
        qs.model._default_manager.filter(pk__in=[pk for pk, _ in rows]).update(cycle=new)
        moved[kind] = len(rows)
    return moved


def wind_down(user, day: datetime.date | None = None) -> dict[str, list]:
    """What archived cycles still hold, as ``user`` may see it: the leaving organizations' running clusters,
    quotas and reservations in force. Empty lists once everything has ended."""
    from django.utils import timezone

    day = day or timezone.localdate()
    archived = Cycle.objects.filter(status=CycleStatus.ARCHIVED).values_list("pk", flat=True)
    found = {}
    for kind, qs in live(list(archived), day).items():
        if kind == CarryKind.TRAINED_MODEL:  # a model is an outcome, not a resource to end
            continue
        found[kind] = list(qs.restrict(user).select_related("organization", "cycle").order_by("organization__name", "pk"))
    return found


def carried_from(kind: str, ids: Iterable[int], into: Cycle | int | None) -> dict[int, Cycle]:
    """The cycle each of ``ids`` was carried from into ``into`` (for the "carried over" labels)."""
    ids = list(ids)
    if into is None or not ids:
        return {}
    rows = CycleCarry.objects.filter(cycle=into, kind=kind, object_id__in=ids).select_related("from_cycle")
    return {r.object_id: r.from_cycle for r in rows}


def carried_out_ids(kind: str, cycle: Cycle) -> QuerySet:
    """The ids of the rows of ``kind`` that were ``cycle``'s and moved on to the next (a subquery)."""
    return CycleCarry.objects.filter(from_cycle=cycle, kind=kind).values("object_id")


def carried_in_ids(kind: str, cycle: Cycle) -> QuerySet:
    return CycleCarry.objects.filter(cycle=cycle, kind=kind).values("object_id")
