"""Node remediation in the week: actions proposed, actions that ended with a healthy node, and the mean time from
a fault's first sight to the report that found its node healthy. Two queries, whatever the number of actions."""
from __future__ import annotations

from django.db.models import Avg, Count, DurationField, ExpressionWrapper, F, Q

from clusters.remediation.models import RemediationAction
from portal.review.figures.scope import Scope


def remediation_figures(scope: Scope) -> dict:
    actions = RemediationAction.objects.restrict(scope.user)
    week = actions.filter(proposed_at__gte=scope.week_start_at).aggregate(
        proposed=Count("pk", filter=~Q(state="refused")), refused=Count("pk", filter=Q(state="refused")))
    healed = actions.filter(state="done", finished_at__gte=scope.week_start_at, fault_seen_at__isnull=False).aggregate(
        done=Count("pk"), mean=Avg(ExpressionWrapper(F("finished_at") - F("fault_seen_at"), output_field=DurationField())))
    mean = healed["mean"]
    return {"week": {"proposed": week["proposed"], "refused": week["refused"], "healed": healed["done"],
                     "fault_to_healthy_hours": None if mean is None else round(mean.total_seconds() / 3600, 1)}}
