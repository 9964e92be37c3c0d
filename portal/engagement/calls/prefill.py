"""The organization's record of the current cycle, which a new application starts from.

Reviewers judge a request for the next cycle by what was done with the last award: the workload record (model,
size, instances), the accelerator-hours reserved → held → healthy → busy and the goodput (``clusters.accounting``'s
figures, the same the weekly review reads), GPU incidents and remediations, milestones and trained models. The
record is copied into the application (JSON, with the time it was taken) so a submitted version freezes it too;
the form offers the model fields pre-filled from the workload record. A fixed number of queries per organization.
"""
from __future__ import annotations

import datetime

from django.db.models import Count, Q
from django.utils import timezone

from clusters.accounting import services as accounting
from clusters.health.models import GpuFault
from clusters.remediation.models import RemediationAction
from portal.core.models import Cycle
from portal.engagement.models import Milestone, TrainedModel
from workloads.models import Workload


def _window(cycle: Cycle | None, now: datetime.datetime) -> tuple[datetime.datetime, datetime.datetime]:
    starts = cycle.starts_on if cycle is not None and cycle.starts_on else (now - datetime.timedelta(days=90)).date()
    start = timezone.make_aware(datetime.datetime.combine(starts, datetime.time()))
    return start, now


def _framework(entry) -> str:
    """A workload's framework entry ({"name", "version"}, or a plain name) as text: "megatron-lm 0.8.0"."""
    if isinstance(entry, dict):
        return " ".join(str(entry[k]) for k in ("name", "version") if entry.get(k))
    return str(entry)


def record(organization, cycle: Cycle | None, now: datetime.datetime | None = None) -> dict:
    """What ``organization`` did in ``cycle`` (the current one), as JSON-ready values."""
    now = now or timezone.now()
    start, end = _window(cycle, now)
    workload = Workload.objects.filter(organization=organization).order_by("-updated", "-id").first()
    figures = accounting.organization_figures([organization.pk], start, end).get(organization.pk) or {}
    faults = GpuFault.objects.filter(cluster__organization=organization, first_seen__gte=start)
    incidents = faults.aggregate(total=Count("id"), critical=Count("id", filter=Q(severity="critical")),
                                 open=Count("id", filter=Q(cleared_at__isnull=True)))
    remediations = dict(RemediationAction.objects.filter(organization=organization, proposed_at__gte=start)
                        .values_list("state").annotate(n=Count("id")).order_by())
    milestones = Milestone.objects.filter(organization=organization)
    models = TrainedModel.objects.filter(organization=organization)
    if cycle is not None:
        milestones, models = milestones.filter(cycle=cycle), models.filter(Q(cycle=cycle) | Q(released_on__isnull=True))
    return {
        "cycle": cycle.name if cycle is not None else "",
        "since": start.date().isoformat(),
        "workload": None if workload is None else {
            "name": workload.name, "model_family": workload.model_family,
            "architecture": workload.get_architecture_display(),
            "parameters_billions": float(workload.parameters_billions or 0), "modality": workload.modality,
            "frameworks": [_framework(f) for f in workload.frameworks or []], "instance_type": workload.target_instance_type,
            "instance_count": workload.target_instance_count},
        "hours": {k: round(figures.get(k, 0.0), 1) for k in ("reserved", "held", "healthy", "busy")},
        "goodput": figures.get("goodput"),
        "incidents": {k: incidents[k] for k in ("total", "critical", "open")},
        "remediations": {str(k): v for k, v in sorted(remediations.items())},
        "milestones": [{"kind": m.kind, "label": str(m.get_kind_display()), "reached_on": m.reached_on.isoformat()}
                       for m in milestones.order_by("reached_on")],
        "trained_models": [{"name": t.name, "parameters_billions": float(t.parameters_billions),
                            "instance_type": t.instance_type, "instance_count": t.instance_count,
                            "released_on": t.released_on.isoformat() if t.released_on else None}
                           for t in models.order_by("name")],
    }


def initial_fields(rec: dict) -> dict:
    """The application's model fields as the workload record has them (what the form starts from)."""
    workload = rec.get("workload") or {}
    if not workload:
        return {}
    return {"architecture": " ".join(p for p in (workload.get("model_family"), workload.get("architecture")) if p),
            "parameters_billions": workload.get("parameters_billions") or None,
            "frameworks": ", ".join(workload.get("frameworks") or []),
            "requested": [{"instance_type": workload["instance_type"], "region": "", "count": workload["instance_count"],
                           "weeks": 0}] if workload.get("instance_type") else []}
