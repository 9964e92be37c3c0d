"""Outcomes: recording milestones, and the figures the overview, the organization page and the review's PDF
show. Milestones of one organization are saved together, in one transaction, under a lock on the
organization row, so two people saving at once cannot leave a half-written set."""
from __future__ import annotations

import datetime

from django.db import transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils.translation import gettext, gettext_noop

from portal.core import timeline, versions
from portal.core.choices import CarryKind, TimelineKind, Visibility
from portal.core.cycle_filter import in_active_cycle
from portal.core.models import CycleCarry, Organization, active_cycle_id
from portal.core.stored_text import define, message
from portal.engagement.choices import MilestoneKind
from portal.engagement.models import Milestone, TrainedModel

MILESTONE_REACHED = define("outcomes.milestone_reached", gettext_noop("Milestone reached: %(milestone)s"),
                           {"milestone": lambda kind: str(MilestoneKind(kind).label)})

KINDS = [kind for kind, _label in MilestoneKind.choices]


def current(organization, user=None) -> dict[str, Milestone]:
    """The organization's milestones in the active cycle."""
    qs = Milestone.objects.filter(organization=organization) if user is None else \
        Milestone.objects.restrict(user).filter(organization=organization)
    return {m.kind: m for m in qs.filter(cycle_id=active_cycle_id())}


def dates_of(milestones: dict[str, Milestone]) -> dict[str, str | None]:
    """The milestone dates as plain values: what a milestones form's version is made of."""
    return {kind: milestones[kind].reached_on.isoformat() if kind in milestones else None for kind in KINDS}


def milestones_version(organization) -> str:
    return versions.values_token(dates_of(current(organization)))


def save_milestones(organization, user, dates: dict[str, datetime.date | None], version: str | None = None) -> list[str]:
    """Set (or clear) each milestone's date; answer the labels of the milestones newly reached.

    ``version`` (from :func:`milestones_version` when the form was shown): raises ``versions.Stale`` when the
    dates were changed since, checked under the organization's lock."""
    reached = []
    with transaction.atomic():
        Organization.objects.select_for_update().filter(pk=organization.pk).first()
        existing = current(organization)
        versions.require(version, dates_of(existing))
        for kind in KINDS:
            if kind not in dates:
                continue
            day, row = dates[kind], existing.get(kind)
            if day is None:
                if row is not None:
                    row.delete()
                continue
            if row is None:
                Milestone.objects.create(organization=organization, kind=kind, reached_on=day, updated_by=user)
                reached.append(kind)
            elif row.reached_on != day:
                row.reached_on, row.updated_by = day, user
                row.save(update_fields=["reached_on", "updated_by", "updated"])
        for kind in reached:
            timeline.record(organization, TimelineKind.NOTE, message(MILESTONE_REACHED, milestone=kind),
                            visibility=Visibility.SHARED, actor=user)
    return [str(MilestoneKind(kind).label) for kind in reached]


def figures(user, cycle=None) -> list[dict]:
    """One row per organization the user sees that has any outcome in ``cycle`` (the active one by default):
    milestone dates by kind, trained models, so one row never mixes two cycles' milestones. A model carried over
    from the cycle before (still in training when it ended) says so (``carried_from``); a past cycle also lists
    the models it carried on into the next.

    A fixed number of queries whatever the number of organizations (JSON-ready: a frozen review keeps them)."""
    rows: dict[int, dict] = {}

    def row_of(org) -> dict:
        return rows.setdefault(org.pk, {"organization": org.name, "slug": org.slug, "milestones": {}, "models": []})

    milestones = Milestone.objects.restrict(user).select_related("organization").order_by("reached_on", "id")
    trained = TrainedModel.objects.restrict(user).select_related("organization").order_by("name", "id")
    carries = CycleCarry.objects.filter(kind=CarryKind.TRAINED_MODEL)
    if cycle is None:  # the active cycle: a join, no query of its own
        milestones, trained = in_active_cycle(milestones), in_active_cycle(trained)
        shown = OuterRef("cycle_id")
    else:
        milestones = milestones.filter(cycle=cycle)
        trained = trained.filter(Q(cycle=cycle) | Q(pk__in=carries.filter(from_cycle=cycle).values("object_id")))
        shown = cycle.pk
    trained = trained.annotate(carried_from=Subquery(
        carries.filter(cycle_id=shown, object_id=OuterRef("pk")).values("from_cycle__name")[:1]))
    for m in milestones:
        row_of(m.organization)["milestones"][m.kind] = m.reached_on.isoformat()
    for t in trained:
        row_of(t.organization)["models"].append({
            "name": t.name, "parameters_billions": float(t.parameters_billions), "modality": t.get_modality_display(),
            "tokens_billions": float(t.tokens_billions) if t.tokens_billions is not None else None,
            "instance_type": t.instance_type, "instance_count": t.instance_count, "release_url": t.release_url,
            "released_on": t.released_on.isoformat() if t.released_on else None,
            "carried_from": t.carried_from or "",
        })
    for row in rows.values():
        done = [k for k in KINDS if k in row["milestones"]]
        row["latest"] = str(MilestoneKind(done[-1]).label) if done else ""
    return sorted(rows.values(), key=lambda r: r["organization"])


def models_label(models: list[dict]) -> str:
    """The trained models in the active language (the modality is stored as its English label, which the
    catalogue translates)."""
    def one(m: dict) -> str:
        text = (f"{m['name']} ({m['parameters_billions']:g}B {gettext(m['modality'])}, "
                f"{m['instance_count']} × {m['instance_type']})")
        if m.get("carried_from"):  # frozen reviews lack it
            text += ", " + gettext("carried over from %(carried_from)s") % {"carried_from": m["carried_from"]}
        return text

    return "; ".join(one(m) for m in models)
