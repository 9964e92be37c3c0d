"""Health and validation: open GPU faults and the worst verdict per organization, which clusters report and
which nodes do not (from each cluster's current health, kept by ingestion), validation over ready clusters,
faults per week. Four queries, whatever the number of organizations."""
from __future__ import annotations

from django.db.models import Count, Q

from clusters.health import current
from clusters.health.models import ClusterHealthState, GpuFault, ValidationRun
from clusters.models import Cluster
from portal.core.choices import worst_verdict
from portal.review.figures.scope import Scope
from portal.review.figures.texts import health_of, validation_of, verdict_text  # noqa: F401 - verdict_text: imported from here


def _reporting(scope: Scope) -> tuple[set[int], dict[int, int]]:
    """Organizations with a cluster that reported, and nodes not reporting per organization: read from
    each cluster's current health (kept by ingestion), never an aggregate over every report."""
    reporting = set(ClusterHealthState.objects.restrict(scope.user).filter(last_report__isnull=False)
                    .values_list("cluster__organization_id", flat=True).distinct())
    return reporting, current.not_reporting_by_organization(Cluster.objects.restrict(scope.user))


def health_figures(scope: Scope) -> dict:
    """Open faults and the worst verdict per organization, validation over ready clusters, faults per week."""
    faults = GpuFault.objects.restrict(scope.user)
    mondays = scope.chart_mondays
    # Grouped by the week stored with each fault: one index, no per-week bounds compared row by row.
    counted = dict(faults.filter(first_week__gte=mondays[0]).values_list("first_week")
                   .annotate(n=Count("first_week")).order_by())  # the indexed column: an index-only scan
    per_week = [{"week": monday.isoformat(), "faults": counted.get(monday, 0)} for monday in mondays]
    this_week = sum(n for week, n in counted.items() if week >= scope.week_start)

    by_org: dict[int, dict] = {}
    for r in (faults.filter(cleared_at__isnull=True).values("cluster__organization_id", "verdict")
              .annotate(n=Count("id")).order_by()):
        entry = by_org.setdefault(r["cluster__organization_id"], {"open_faults": 0, "worst": None})
        entry["open_faults"] += r["n"]
        entry["worst"] = worst_verdict([entry["worst"], r["verdict"]])
    reporting, silent = _reporting(scope)
    # Validation is counted over the ready clusters: "1 of 2 ready clusters validated" says one is still to test.
    related = ValidationRun._meta.get_field("cluster").related_query_name()
    validated = 0
    for r in Cluster.objects.restrict(scope.user).filter(state="ready").values("organization_id").annotate(
        ready=Count("id", distinct=True),
        passed=Count("id", filter=Q(**{f"{related}__verdict": "pass"}), distinct=True),
    ).order_by():
        entry = by_org.setdefault(r["organization_id"], {"open_faults": 0, "worst": None})
        entry["validation_facts"] = {"passed": r["passed"], "ready": r["ready"]}
        entry["validation"] = validation_of(entry["validation_facts"])
        validated += r["passed"]
    for org_id in set(by_org) | reporting | set(silent):
        entry = by_org.setdefault(org_id, {"open_faults": 0, "worst": None})
        # The facts are stored; the sentence is written again in each reader's language (figures/texts.py).
        entry["health_facts"] = {"open_faults": entry["open_faults"], "worst": entry["worst"],
                                 "reporting": org_id in reporting, "not_reporting": silent.get(org_id, 0)}
        if org_id in silent:
            entry["not_reporting"] = silent[org_id]
        entry["verdict"] = health_of(entry["health_facts"])
    return {"by_org": by_org, "per_week": per_week, "week_faults": this_week,
            "validated_clusters": validated}


def faults_between(user, since, until) -> dict[int, dict]:
    """GPU faults first seen from ``since`` to before ``until``, per organization: how many, how many critical
    (one query; the report to the funder's incidents)."""
    return {r["cluster__organization_id"]: {"faults": r["n"], "critical": r["critical"]}
            for r in (GpuFault.objects.restrict(user).filter(first_seen__gte=since, first_seen__lt=until)
                      .values("cluster__organization_id")
                      .annotate(n=Count("id"), critical=Count("id", filter=Q(severity="critical"))).order_by())}
