"""Program cycles: the active cycle, starting the next one (at once or on a later day), and a cycle's report.

Starting the next cycle happens in one transaction under a lock on the active cycle's row: the next one is created
(planned, with its organizations), and when its start date has come the active cycle is archived, the next one made
active (a partial unique constraint allows one active cycle) and what is live carried over (``carry``). Two program
managers pressing the button at once start one cycle, not two: the second waits for the lock, then finds the
cycle it would follow archived (or the next number taken) and is refused. A later start date leaves the next cycle
planned; the periodic ``engagement.switch_cycles`` task (``switch_due``) switches on that day.
"""
from __future__ import annotations

import datetime

from django.db import transaction
from django.db.models import Avg, Count, Q
from django.utils import timezone
from django.utils.translation import gettext

from clusters.models import Cluster
from portal.core import signals
from portal.core.choices import CarryKind, CycleStatus
from portal.core.models import Cycle, CycleParticipation, active_cycle
from portal.engagement import carry
from portal.engagement.choices import MilestoneKind
from portal.engagement.models import Milestone, TrainedModel
from workloads.enablement.models import EnablementAttendance, EnablementSession
from workloads.interactions.models import Interaction


class CycleError(Exception):
    """The next cycle cannot start (no active cycle, no organization continues, a bad date)."""


def active() -> Cycle | None:
    return active_cycle()


def next_name(current: Cycle) -> str:
    """The next cycle's name when none is given: the current one's with the next number ("GENIAC Cycle 3" →
    "GENIAC Cycle 4"), or "Cycle <number>"."""
    number = str(current.number)
    if current.name.endswith(number) and not current.name[:-len(number)][-1:].isdigit():
        return f"{current.name[:-len(number)]}{current.number + 1}"
    return f"Cycle {current.number + 1}"


def start_next(user, *, continuing: list[int], name: str = "", starts_on: datetime.date | None = None,
               today: datetime.date | None = None) -> Cycle:
    """Start the next cycle with the continuing organizations (ids), their lead SAs and the active cycle's
    blueprints. Starting today (or earlier) switches at once (``switch``); a later start date schedules the
    switch: the next cycle is kept planned, with its organizations, and ``switch_due`` makes it active that day."""
    today = today or timezone.localdate()
    starts_on = starts_on or today
    with transaction.atomic():
        current = Cycle.objects.select_for_update().filter(status=CycleStatus.ACTIVE).first()
        if current is None:
            raise CycleError(gettext("There is no active cycle to follow (another program manager may just have "
                                     "started the next one)."))
        if current.starts_on and starts_on < current.starts_on:
            raise CycleError(gettext("The next cycle cannot start before the current one."))
        participations = list(current.participations.filter(organization_id__in=continuing)
                              .select_related("organization").prefetch_related("lead_sas"))
        if not participations:
            raise CycleError(gettext("Choose at least one organization that continues."))
        if len(participations) != len(set(continuing)):
            raise CycleError(gettext("Some of the organizations chosen do not take part in the current cycle."))
        number = current.number + 1
        name = name.strip() or next_name(current)
        taken = Cycle.objects.filter(Q(number=number) | Q(name=name)).first()
        if taken is not None and taken.status == CycleStatus.PLANNED and taken.starts_on:
            raise CycleError(gettext("%(cycle)s is already scheduled to start on %(day)s.")
                             % {"cycle": taken.name, "day": f"{taken.starts_on:%Y-%m-%d}"})
        if taken is not None:
            raise CycleError(gettext("A cycle numbered %(number)s or named “%(name)s” already exists.")
                             % {"number": number, "name": name})
        nxt = Cycle.objects.create(number=number, name=name, status=CycleStatus.PLANNED, starts_on=starts_on)
        nxt.blueprints.set(current.blueprints.all())
        for old in participations:
            new = CycleParticipation.objects.create(cycle=nxt, organization=old.organization)
            new.lead_sas.set(old.lead_sas.all())
        if starts_on <= today:
            switch(current, nxt, today=today, user=user)
    return nxt


def switch(current: Cycle, nxt: Cycle, *, today: datetime.date | None = None, user=None) -> dict[str, int]:
    """Archive ``current`` (ending the day before ``nxt`` starts), make ``nxt`` active with the lessons learned,
    and carry the continuing organizations' live rows over. Inside the caller's transaction, both rows locked."""
    today = today or timezone.localdate()
    lessons = carry.lessons_of(current)
    if current.lessons_carried:
        lessons = f"{current.lessons_carried}\n{lessons}".strip()
    current.status = CycleStatus.ARCHIVED
    current.ends_on = current.ends_on or max((nxt.starts_on or today) - datetime.timedelta(days=1),
                                             current.starts_on or today)
    current.save(update_fields=["status", "ends_on"])
    nxt.status, nxt.lessons_carried = CycleStatus.ACTIVE, lessons
    nxt.starts_on = nxt.starts_on or today
    nxt.save(update_fields=["status", "lessons_carried", "starts_on"])
    moved = carry.carry_over(current, nxt, nxt.participations.values_list("organization_id", flat=True), user=user)
    # What stays in the archived cycle is read-only from now on: its open work that nobody could close any more
    # (remediation waiting for consent, validations) is closed with it (docs/DECISIONS.md, "Open work of an
    # archived cycle").
    signals.cycle_archived.send(sender=Cycle, cycle=current, actor=user)
    return moved


def scheduled() -> Cycle | None:
    """The next cycle, when a program manager scheduled it to start on a later day."""
    return Cycle.objects.filter(status=CycleStatus.PLANNED, starts_on__isnull=False).order_by("starts_on").first()


def _locked_scheduled(nxt: Cycle) -> tuple[Cycle, Cycle]:
    """Lock the active cycle and ``nxt``; ``nxt`` must still be the scheduled next cycle."""
    current = Cycle.objects.select_for_update().filter(status=CycleStatus.ACTIVE).first()
    nxt = Cycle.objects.select_for_update().filter(pk=nxt.pk).first()
    if nxt is None or nxt.status != CycleStatus.PLANNED or nxt.starts_on is None or current is None:
        raise CycleError("This cycle is no longer scheduled (it may just have started, or been cancelled).")
    return current, nxt


def reschedule(user, nxt: Cycle, starts_on: datetime.date, *, today: datetime.date | None = None) -> Cycle:
    """Move the scheduled switch to ``starts_on``; today (or earlier) switches at once, as starting would.
    The change is kept in the cycle's history (who and when, the dates before and after)."""
    today = today or timezone.localdate()
    with transaction.atomic():
        current, nxt = _locked_scheduled(nxt)
        if current.starts_on and starts_on < current.starts_on:
            raise CycleError("The next cycle cannot start before the current one.")
        before = nxt.starts_on
        nxt.starts_on = starts_on
        nxt._history_user = user
        nxt._change_reason = f"Start moved from {before:%Y-%m-%d} to {starts_on:%Y-%m-%d}"
        nxt.save(update_fields=["starts_on"])
        if starts_on <= today:
            switch(current, nxt, today=today, user=user)
    return nxt


def cancel_scheduled(user, nxt: Cycle) -> Cycle:
    """Cancel the scheduled switch: the planned cycle and its organizations are removed (nothing had moved into
    it yet); the active cycle goes on. The cycle's history keeps who cancelled it and when. Answers the active
    cycle."""
    with transaction.atomic():
        current, nxt = _locked_scheduled(nxt)
        nxt._history_user = user
        nxt._change_reason = f"Scheduled start on {nxt.starts_on:%Y-%m-%d} cancelled"
        nxt.delete()
    return current


SCHEDULE_REASONS = ("Start moved from", "Scheduled start on")


def schedule_changes(limit: int = 10) -> list:
    """The latest moves and cancellations of scheduled starts (from the cycles' history, cancelled cycles
    included), newest first, with who made them."""
    where = Q()
    for reason in SCHEDULE_REASONS:
        where |= Q(history_change_reason__startswith=reason)
    return list(Cycle.history.filter(where).select_related("history_user").order_by("-history_date", "-history_id")[:limit])


def switch_due(today: datetime.date | None = None) -> Cycle | None:
    """The periodic switch: a scheduled cycle whose start date has come becomes active (once: both rows are
    locked, and a second run finds nothing planned that is due)."""
    today = today or timezone.localdate()
    with transaction.atomic():
        current = Cycle.objects.select_for_update().filter(status=CycleStatus.ACTIVE).first()
        nxt = (Cycle.objects.select_for_update().filter(status=CycleStatus.PLANNED, starts_on__lte=today)
               .order_by("starts_on").first())
        if current is None or nxt is None or nxt.number <= current.number:
            return None
        switch(current, nxt, today=today)
    return nxt


def report(cycle: Cycle) -> dict:
    """What a cycle achieved, per organization: outcomes, launches, support and satisfaction.

    History stays where it happened: a cluster launched in this cycle and carried into the next still counts here
    (and not there); a model still in training when the cycle ended is listed in both, labelled in the later one.
    A fixed number of queries whatever the number of organizations (grouped counts, then Python)."""
    orgs = list(cycle.participations.select_related("organization").order_by("organization__name"))
    ids = [p.organization_id for p in orgs]
    rows = {p.organization_id: {"organization": p.organization.name, "slug": p.organization.slug,
                                "milestones": {}, "models": [], "clusters": 0, "launch_failures": 0,
                                "interactions": 0, "resolved": 0, "escalations": 0, "satisfaction": None}
            for p in orgs}
    for m in Milestone.objects.filter(cycle=cycle, organization_id__in=ids):
        rows[m.organization_id]["milestones"][m.kind] = m.reached_on.isoformat()
    trained = list(TrainedModel.objects.filter(
        Q(cycle=cycle) | Q(pk__in=carry.carried_out_ids(CarryKind.TRAINED_MODEL, cycle)),
        organization_id__in=ids).order_by("name"))
    came_from = carry.carried_from(CarryKind.TRAINED_MODEL, [t.pk for t in trained], cycle)
    for t in trained:
        label = f" (carried over from {came_from[t.pk]})" if t.pk in came_from else ""
        rows[t.organization_id]["models"].append(
            f"{t.name} ({float(t.parameters_billions):g}B {t.get_modality_display()}, {t.instance_count} × {t.instance_type})"
            f"{label}")
    launched = (Cluster.objects.filter(Q(cycle=cycle) | Q(pk__in=carry.carried_out_ids(CarryKind.CLUSTER, cycle)))
                .exclude(pk__in=carry.carried_in_ids(CarryKind.CLUSTER, cycle)))
    for r in (launched.filter(organization_id__in=ids).values("organization_id")
              .annotate(n=Count("id"), failed=Count("id", filter=Q(state="failed"))).order_by()):
        rows[r["organization_id"]].update(clusters=r["n"], launch_failures=r["failed"])
    found = support_and_enablement(ids, cycle.starts_on, cycle.ends_on, EnablementSession.objects.filter(cycle=cycle))
    for oid, figures in found["by_org"].items():
        rows[oid].update({k: figures[k] for k in ("interactions", "resolved", "escalations", "satisfaction")})
    sessions = found["program"]
    table = list(rows.values())
    return {
        "cycle": {"number": cycle.number, "name": cycle.name, "status": cycle.get_status_display(),
                  "starts_on": cycle.starts_on.isoformat() if cycle.starts_on else "",
                  "ends_on": cycle.ends_on.isoformat() if cycle.ends_on else ""},
        "organizations": table,
        "totals": {
            "organizations": len(table),
            "models": sum(len(r["models"]) for r in table),
            "released": sum(1 for r in table if MilestoneKind.MODEL_RELEASED in r["milestones"]),
            "clusters": sum(r["clusters"] for r in table),
            "launch_failures": sum(r["launch_failures"] for r in table),
            "interactions": sum(r["interactions"] for r in table),
            "escalations": sum(r["escalations"] for r in table),
            "sessions": sessions["sessions"],
            "satisfaction": sessions["satisfaction"],
        },
    }


def support_and_enablement(ids, first_day: datetime.date | None, last_day: datetime.date | None, sessions) -> dict:
    """Support interactions (resolved, escalated) of the organizations ``ids`` that occurred in the days given
    (open-ended where None), and enablement delivered in ``sessions``: sessions per organization invited, and
    the satisfaction (CSAT, 1–5) its attendees gave; the program's sessions and mean satisfaction. The cycle report
    counts a cycle with it, the report to the funder a quarter. Four queries whatever the number of organizations."""
    by_org = {oid: {"interactions": 0, "resolved": 0, "escalations": 0, "sessions": 0, "attendees": 0,
                    "satisfaction": None} for oid in ids}
    support = Interaction.objects.filter(organization_id__in=ids)
    if first_day:
        support = support.filter(occurred_at__date__gte=first_day)
    if last_day:
        support = support.filter(occurred_at__date__lte=last_day)
    for r in (support.values("organization_id").annotate(
            n=Count("id", distinct=True), resolved=Count("id", filter=Q(status="resolved"), distinct=True),
            escalated=Count("escalations", distinct=True)).order_by()):
        by_org[r["organization_id"]].update(interactions=r["n"], resolved=r["resolved"], escalations=r["escalated"])
    for r in (sessions.filter(audience__in=ids).values("audience").annotate(n=Count("id", distinct=True)).order_by()):
        by_org[r["audience"]]["sessions"] = r["n"]
    for r in (EnablementAttendance.objects.filter(session__in=sessions, organization_id__in=ids)
              .values("organization_id").annotate(n=Count("id"), avg=Avg("satisfaction")).order_by()):
        by_org[r["organization_id"]].update(
            attendees=r["n"], satisfaction=round(float(r["avg"]), 2) if r["avg"] is not None else None)
    program = sessions.aggregate(n=Count("id", distinct=True), score=Avg("attendances__satisfaction"))
    return {"by_org": by_org, "program": {
        "sessions": program["n"],
        "satisfaction": round(float(program["score"]), 2) if program["score"] is not None else None}}
