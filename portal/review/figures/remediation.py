"""Node remediation in the week: actions proposed, actions that ended with a healthy node, and the mean time from
a fault's first sight to the report that found its node healthy. Two queries, whatever the number of actions.
:func:`healed` is that mean over any span, per organization too (the report to the funder reads it per quarter)."""
from __future__ import annotations

import datetime

from django.db.models import Avg, Count, DurationField, ExpressionWrapper, F, Q

from clusters.remediation.models import RemediationAction
from portal.review.figures.scope import Scope


def remediation_figures(scope: Scope) -> dict:
    actions = RemediationAction.objects.restrict(scope.user)
    week = actions.filter(proposed_at__gte=scope.week_start_at).aggregate(
        proposed=Count("pk", filter=~Q(state="refused")), refused=Count("pk", filter=Q(state="refused")))
    done = healed(actions, scope.week_start_at)
    return {"week": {"proposed": week["proposed"], "refused": week["refused"], "healed": done["healed"],
                     "fault_to_healthy_hours": done["fault_to_healthy_hours"]}}


def _hours(mean: datetime.timedelta | None) -> float | None:
    return None if mean is None else round(mean.total_seconds() / 3600, 1)


def healed(actions, since: datetime.datetime, until: datetime.datetime | None = None, *, by_org: bool = False) -> dict:
    """Actions that ended with a healthy node from ``since`` (to ``until``), and the mean hours from the fault's
    first sight to it; with ``by_org``, also per organization (``by_org``: {id: {healed, fault_to_healthy_hours}})."""
    done = actions.filter(state="done", finished_at__gte=since, fault_seen_at__isnull=False)
    if until is not None:
        done = done.filter(finished_at__lt=until)
    took = ExpressionWrapper(F("finished_at") - F("fault_seen_at"), output_field=DurationField())
    total = done.aggregate(done=Count("pk"), mean=Avg(took))
    found = {"healed": total["done"], "fault_to_healthy_hours": _hours(total["mean"])}
    if by_org:
        found["by_org"] = {r["organization_id"]: {"healed": r["done"], "fault_to_healthy_hours": _hours(r["mean"])}
                           for r in done.values("organization_id").annotate(done=Count("pk"), mean=Avg(took)).order_by()}
    return found
