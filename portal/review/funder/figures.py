"""The figures of a report to the funder, for one period, as JSON values (what issuing stores).

Nothing is counted here a second way: the accelerator-hours, goodput and cost are the overview's
(``portal.review.figures.capacity``, over a window that is the report's period), GPU incidents and the time to a
healthy node come from the review's health and remediation figures, milestones and trained models from
``portal.engagement.outcomes``, support and enablement from the counting the cycle report uses
(``portal.engagement.cycles.support_and_enablement``)."""
from __future__ import annotations

import datetime

from django.utils import timezone

from clusters.accounting import services as accounting
from clusters.remediation.models import RemediationAction
from portal.core.models import Cycle, Organization
from portal.engagement import cycles, outcomes
from portal.review.figures.capacity import capacity_figures, organization_columns
from portal.review.figures.health import faults_between
from portal.review.figures.organizations import organization_rows
from portal.review.figures.remediation import healed
from portal.review.figures.scope import Scope
from workloads.enablement.models import EnablementSession

HOURS = ("gpu_hours_reserved", "gpu_hours_held", "gpu_hours_healthy", "gpu_hours_busy")
COUNTS = ("faults", "critical", "healed", "milestones_reached", "models", "released", "interactions", "resolved",
          "escalations", "sessions", "attendees")


def period_end_at(last_day: datetime.date) -> datetime.datetime:
    """The first instant after the period (program midnight after its last day)."""
    return accounting.midnight(last_day + datetime.timedelta(days=1))


def as_of(report, now: datetime.datetime | None = None) -> datetime.datetime:
    """The date of the data: the period's end, or now while the period runs."""
    now = now or timezone.now()
    return min(now, period_end_at(report.period_end))


def compute(report, user, organization_ids: list[int], now: datetime.datetime | None = None) -> dict:
    """The report's figures for the organizations ``organization_ids`` (its parts) and the program, read as
    ``user`` sees them (the program manager who issues it)."""
    data_date = as_of(report, now)
    since = accounting.midnight(report.period_start)
    # The overview's window ends at ``now`` and counts the days back from its day: the period's days.
    last = timezone.localtime(data_date - datetime.timedelta(microseconds=1))
    scope = Scope(user=user, now=last, window=max(1, (last.date() - report.period_start).days + 1))
    organization_rows(scope)
    capacity = capacity_figures(scope)
    faults = faults_between(user, since, data_date)
    remediation = healed(RemediationAction.objects.restrict(user), since, data_date, by_org=True)
    cycle = report.program_cycle or Cycle.objects.filter(status="active").first()
    outcome_rows = {row["slug"]: row for row in outcomes.figures(user, cycle)} if cycle else {}
    sessions = EnablementSession.objects.filter(date__gte=report.period_start, date__lte=report.period_end)
    activity = cycles.support_and_enablement(organization_ids, report.period_start, report.period_end, sessions)
    start, end = report.period_start.isoformat(), report.period_end.isoformat()
    organizations = {}
    for org in Organization.objects.filter(pk__in=organization_ids).order_by("name"):
        outcome = outcome_rows.get(org.slug, {"milestones": {}, "models": []})
        reached = {k: day for k, day in outcome["milestones"].items() if start <= day <= end}
        models = outcome["models"]
        row = {
            "name": org.name, "slug": org.slug,
            **organization_columns(capacity["by_org"].get(org.pk)),
            "faults": faults.get(org.pk, {}).get("faults", 0),
            "critical": faults.get(org.pk, {}).get("critical", 0),
            **remediation["by_org"].get(org.pk, {"healed": 0, "fault_to_healthy_hours": None}),
            "milestones": reached, "milestones_reached": len(reached),
            "models": models, "models_count": len(models),
            "released": sum(1 for m in models if m.get("released_on") and start <= m["released_on"] <= end),
            **activity["by_org"].get(org.pk, {}),
        }
        organizations[org.slug] = row
    program_hours = capacity["program"]
    program = {
        "gpu_hours_reserved": program_hours.get("reserved", 0.0), "gpu_hours_held": program_hours.get("held", 0.0),
        "gpu_hours_healthy": program_hours.get("healthy", 0.0), "gpu_hours_busy": program_hours.get("busy", 0.0),
        "goodput": program_hours.get("goodput"), "cost_usd": program_hours.get("cost_usd"),
        "cost_per_busy_gpu_hour": program_hours.get("cost_per_busy_gpu_hour"),
        "cost_from": program_hours.get("cost_from"), "cost_to": program_hours.get("cost_to"),
        "fault_to_healthy_hours": remediation["fault_to_healthy_hours"], "healed": remediation["healed"],
        "faults": sum(r["faults"] for r in organizations.values()),
        "critical": sum(r["critical"] for r in organizations.values()),
        "milestones_reached": sum(r["milestones_reached"] for r in organizations.values()),
        "models": sum(r["models_count"] for r in organizations.values()),
        "released": sum(r["released"] for r in organizations.values()),
        "interactions": sum(r["interactions"] for r in organizations.values()),
        "resolved": sum(r["resolved"] for r in organizations.values()),
        "escalations": sum(r["escalations"] for r in organizations.values()),
        "sessions": activity["program"]["sessions"], "satisfaction": activity["program"]["satisfaction"],
        "organizations": len(organizations),
    }
    return {
        "period": {"start": start, "end": end},
        "as_of": data_date.isoformat(),
        "cycle": str(cycle or ""),
        "program": program,
        "per_week": [{k: w[k] for k in ("week", "reserved", "held", "healthy", "busy", "goodput")}
                     for w in capacity["per_week"] if w["week"] <= end and _sunday(w["week"]) >= start],
        "organizations": organizations,
    }


def _sunday(monday: str) -> str:
    return (datetime.date.fromisoformat(monday) + datetime.timedelta(days=6)).isoformat()
