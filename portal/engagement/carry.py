"""What is live at a cycle boundary: what moves into the next cycle, and what is left to wind down.

When the next cycle starts, the organizations that continue keep what still runs: their clusters not yet deleted
(running, launching, or failed and still to retry or tear down; with them the clusters' health, validations and
faults, which reach their cycle through the cluster), the quotas and capacity reservations still in force on the
new cycle's first day, and the models they are still training. Those
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
from django.utils import timezone

from clusters.accounting.models import RequestState, ReservationRequest
from clusters.choices import ClusterState
from clusters.models import Cluster
from portal.core.choices import CarryKind, CycleStatus
from portal.core.models import Cycle, CycleCarry
from portal.engagement.models import TrainedModel
from workloads.interactions.models import Interaction
from workloads.models import CapacityReservation, InstanceQuota


def _models():
    return {CarryKind.CLUSTER: Cluster, CarryKind.QUOTA: InstanceQuota, CarryKind.RESERVATION: CapacityReservation,
            CarryKind.TRAINED_MODEL: TrainedModel, CarryKind.RESERVATION_REQUEST: ReservationRequest}


def lessons_of(cycle: Cycle) -> str:
    """The lessons learned recorded during ``cycle`` by its organizations, as Markdown bullets (the next cycle
    starts with them)."""
    qs = Interaction.objects.filter(organization__participations__cycle=cycle).exclude(lesson="")
    if cycle.starts_on:
        qs = qs.filter(occurred_at__date__gte=cycle.starts_on)
    if cycle.ends_on:
        qs = qs.filter(occurred_at__date__lte=cycle.ends_on)
    rows = qs.select_related("organization").order_by("occurred_at", "id")
    return "\n".join(f"- **{i.organization.name}**, {i.summary}: {i.lesson.strip()}" for i in rows)


def live_filter(kind: str, day: datetime.date) -> Q:
    """Which rows of ``kind`` are still live on ``day``: one definition for the carry-over, its summary and the
    wind-down list."""
    if kind == CarryKind.CLUSTER:  # running, launching, deleting, or failed (still to retry or tear down)
        return ~Q(state=ClusterState.DELETED)
    if kind in (CarryKind.QUOTA, CarryKind.RESERVATION):
        return Q(end__gte=day)
    if kind == CarryKind.RESERVATION_REQUEST:  # an award's request not declined, for capacity still to come
        return Q(end__gte=day) & ~Q(state=RequestState.DECLINED)
    return Q(released_on__isnull=True)


def live(cycles: Cycle | Iterable, day: datetime.date, *, orphans: bool = False) -> dict[str, QuerySet]:
    """The live rows of ``cycles`` (one cycle or several) on ``day``, by kind (unevaluated querysets); with
    ``orphans``, also the rows of no cycle (written before the program had cycles), which the active cycle shows
    as its own."""
    ids = [cycles.pk] if isinstance(cycles, Cycle) else [c.pk if isinstance(c, Cycle) else c for c in cycles]
    where = Q(cycle_id__in=ids) | Q(cycle__isnull=True) if orphans else Q(cycle_id__in=ids)
    return {kind: model._default_manager.filter(live_filter(kind, day), where) for kind, model in _models().items()}


@dataclass
class Summary:
    """What starting the next cycle will do (or did): who continues, who leaves, what moves, what winds down."""

    continuing: list = field(default_factory=list)
    leaving: list = field(default_factory=list)
    carried: dict[str, list] = field(default_factory=dict)
    wind_down: dict[str, list] = field(default_factory=dict)
    lessons: int = 0

    @property
    def carried_lines(self) -> list[tuple[str, list]]:
        """(what, rows) per kind, in words: "3 clusters not deleted", "1 quota in force"."""
        return [(phrase(kind, len(rows)), rows) for kind, rows in self.carried.items()]

    @property
    def wind_down_lines(self) -> list[tuple[str, str, list]]:
        """(kind, what, rows) per kind left to wind down, in words: "1 quota in force"."""
        return [(kind, phrase(kind, len(rows)), rows) for kind, rows in self.wind_down.items() if rows]

    @property
    def wind_down_total(self) -> int:
        return sum(len(rows) for rows in self.wind_down.values())


PHRASES = {CarryKind.CLUSTER: ("cluster", "clusters", "not deleted"), CarryKind.QUOTA: ("quota", "quotas", "in force"),
           CarryKind.RESERVATION: ("capacity reservation", "capacity reservations", "in force"),
           CarryKind.TRAINED_MODEL: ("model", "models", "still in training"),
           CarryKind.RESERVATION_REQUEST: ("reservation request", "reservation requests", "of an award")}


def phrase(kind: str, n: int) -> str:
    one, many, state = PHRASES[kind]
    return f"{n} {one if n == 1 else many} {state}"


def summary(current: Cycle, continuing_ids: Iterable[int], day: datetime.date) -> Summary:
    """What starting the next cycle on ``day`` with ``continuing_ids`` carries and leaves behind, as things stand."""
    continuing_ids = set(continuing_ids)
    orgs = [p.organization for p in current.participations.select_related("organization")]
    result = Summary(continuing=[o for o in orgs if o.pk in continuing_ids],
                     leaving=[o for o in orgs if o.pk not in continuing_ids])
    for kind, qs in live(current, day, orphans=current.status == CycleStatus.ACTIVE).items():
        rows = list(qs.select_related("organization").order_by("organization__name", "pk"))
        result.carried[kind] = [r for r in rows if r.organization_id in continuing_ids]
        result.wind_down[kind] = [r for r in rows if r.organization_id not in continuing_ids]
    result.lessons = len([line for line in lessons_of(current).splitlines() if line.strip()])
    return result


def carry_over(old: Cycle, new: Cycle, continuing_ids: Iterable[int], *, orphans: bool = True,
               user=None) -> dict[str, int]:
    """Move the continuing organizations' live rows from ``old`` into ``new`` (inside the switching transaction),
    recording each move. Rows of no cycle (from before the program had cycles) were the ending cycle's: they are
    given to it first, so the leaving organizations' stay in it, to wind down, and the rest is judged like every
    row (``orphans=False`` when ``old`` was not the cycle in force).
    Quotas and reservations keep a change history (django-simple-history): each one moved gets a history record
    saying so, by ``user`` (the program manager who started the cycle; none when beat switched it).
    Answers how many rows of each kind moved."""
    day = new.starts_on
    continuing_ids = list(continuing_ids)
    moved: dict[str, int] = {}
    if orphans:  # rows of no cycle were the ending cycle's: its history, or live rows that move on below
        for model in _models().values():
            model._default_manager.filter(cycle__isnull=True).update(cycle=old)
    for kind, qs in live(old, day).items():
        rows = list(qs.filter(organization_id__in=continuing_ids).values_list("pk", "organization_id"))
        CycleCarry.objects.bulk_create([CycleCarry(cycle=new, from_cycle=old, kind=kind, object_id=pk,
                                                   organization_id=org) for pk, org in rows])
        qs.model._default_manager.filter(pk__in=[pk for pk, _ in rows]).update(cycle=new)
        if kind in (CarryKind.QUOTA, CarryKind.RESERVATION, CarryKind.RESERVATION_REQUEST) and rows:
            _record_history(qs.model, [pk for pk, _ in rows], old, new, user)
        moved[kind] = len(rows)
    return moved


def _record_history(model, ids: list[int], old: Cycle, new: Cycle, user) -> None:
    """One history record per moved row (one ``INSERT``), as a save would have written it, with the reason."""
    reason = f"Carried over from {old.name} into {new.name}"[:100]
    model.history.bulk_history_create(list(model._default_manager.filter(pk__in=ids)), update=True,
                                      default_user=user if getattr(user, "is_authenticated", False) else None,
                                      default_change_reason=reason)


def wind_down(user, day: datetime.date | None = None, *, organization=None) -> dict[str, list]:
    """What archived cycles still hold, as ``user`` may see it: the leaving organizations' running clusters,
    quotas and reservations in force (of one ``organization`` when given). Empty lists once everything has
    ended."""
    day = day or timezone.localdate()
    archived = Cycle.objects.filter(status=CycleStatus.ARCHIVED).values_list("pk", flat=True)
    found = {}
    for kind, qs in live(list(archived), day).items():
        if kind == CarryKind.TRAINED_MODEL:  # a model is an outcome, not a resource to end
            continue
        if organization is not None:
            qs = qs.filter(organization=organization)
        found[kind] = list(qs.restrict(user).select_related("organization", "cycle").order_by("organization__name", "pk"))
    return found


def wind_down_rows(user, *, organization=None) -> list[tuple[str, list]]:
    """What archived cycles still hold (the leaving organizations'), as the user may see it, by kind, as the
    pages list it (the cycles pages and the program overview): (label, items) with each row's link and state."""
    found = []
    for kind, rows in wind_down(user, organization=organization).items():
        if not rows:
            continue
        if kind == CarryKind.CLUSTER:
            items = [{"row": r, "what": f"{r.name}: {r.node_count} × {r.instance_type}", "state": r.get_state_display(),
                      "url": r.get_absolute_url()} for r in rows]
        elif kind == CarryKind.RESERVATION_REQUEST:
            items = [{"row": r, "what": str(r), "state": r.get_state_display(), "url": r.get_absolute_url()}
                     for r in rows]
        else:  # quotas and reservations: the quota page, on the cycle they belong to
            items = [{"row": r, "what": str(r), "state": f"ends {r.end:%Y-%m-%d}",
                      "url": f"{r.get_absolute_url()}&cycle={r.cycle_id}"} for r in rows]
        found.append((CarryKind(kind).label, items))
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
