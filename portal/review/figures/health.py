"""Health and validation: open GPU faults and the worst verdict per organization, which clusters report and
which nodes do not (from each cluster's current health, kept by ingestion), validation over ready clusters,
faults per week. Four queries, whatever the number of organizations."""
from __future__ import annotations

from django.db.models import Count, Q
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from clusters.health import current
from clusters.health.models import ClusterHealthState, GpuFault, ValidationRun
from clusters.models import Cluster
from portal.core.choices import worst_verdict
from portal.review.figures.scope import Scope

VERDICT_LABELS = {"degraded": _("degraded"), "reset_gpu": _("reset GPU"), "reboot": _("reboot node"),
                  "replace": _("replace node")}


def verdict_text(open_faults: int, worst: str | None, reporting: bool) -> str | None:
    """"healthy", "3 open faults (worst: replace node)", or None when the organization's clusters never reported."""
    if open_faults:
        faults = ngettext("%(count)s open fault", "%(count)s open faults", open_faults) % {"count": open_faults}
        if worst and worst != "healthy":
            return gettext("%(faults)s (worst: %(verdict)s)") % {"faults": faults, "verdict": VERDICT_LABELS.get(worst, worst)}
        return faults
    return gettext("healthy") if reporting else None


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
        entry["validation"] = ngettext("%(passed)s of %(ready)s ready cluster validated",
                                       "%(passed)s of %(ready)s ready clusters validated",
                                       r["ready"]) % {"passed": r["passed"], "ready": r["ready"]}
        validated += r["passed"]
    for org_id, entry in by_org.items():
        entry["verdict"] = verdict_text(entry["open_faults"], entry["worst"], org_id in reporting)
    for org_id in reporting - set(by_org):
        by_org[org_id] = {"open_faults": 0, "worst": None, "verdict": gettext("healthy")}
    for org_id, count in silent.items():
        entry = by_org.setdefault(org_id, {"open_faults": 0, "worst": None, "verdict": None})
        entry["not_reporting"] = count
        entry["verdict"] = f"{entry['verdict'] or gettext('no report yet')} · {current.nodes_text(count)}"
    return {"by_org": by_org, "per_week": per_week, "week_faults": this_week,
            "validated_clusters": validated}


def faults_between(user, since, until) -> dict[int, dict]:
    """GPU faults first seen from ``since`` to before ``until``, per organization: how many, how many critical
    (one query; the report to the funder's incidents)."""
    return {r["cluster__organization_id"]: {"faults": r["n"], "critical": r["critical"]}
            for r in (GpuFault.objects.restrict(user).filter(first_seen__gte=since, first_seen__lt=until)
                      .values("cluster__organization_id")
                      .annotate(n=Count("id"), critical=Count("id", filter=Q(severity="critical"))).order_by())}
