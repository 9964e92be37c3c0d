"""The overview's figures: one aggregated query per figure family, every queryset restricted by the policy.

Each source (organizations, workloads, clusters, quotas, interactions, health) is its own function taking a
:class:`Scope` and returning plain JSON values, so the same dictionary renders the live overview, is stored as a
frozen :class:`~portal.review.models.WeeklyReview` snapshot, and is served by the API. A source whose models are
not installed returns empty figures and ``available: False`` — never an invented number.

No function loops over organizations with queries: the number of queries is the same for 12 or 1,200
organizations (asserted in tests/review/test_review_overview.py).
"""
from __future__ import annotations

import datetime
from collections import defaultdict
from dataclasses import dataclass, field

from django.apps import apps
from django.db.models import Count, Min, OuterRef, Q, Subquery
from django.db.models.functions import TruncDate
from django.urls import NoReverseMatch
from django.utils import timezone
from django.utils.functional import cached_property

from portal import access
from portal.choices import MembershipRole
from portal.models import Membership, Organization
from portal.review.models import week_start_of

SEVERITIES = ("critical", "high", "normal", "low")
OPEN_STATUSES = ("open", "waiting_customer", "waiting_aws")
EXPIRY_DAYS = 14
CHART_WEEKS = 12
CHART_DAYS = 14
OUTSTANDING_LIMIT = 50
LESSONS_LIMIT = 50
DEFAULT_WINDOW = 28
MAX_WINDOW = 365


def model_or_none(app_label: str, model_name: str):
    """The model if its app is installed and defines it (the interactions and health apps land later)."""
    try:
        return apps.get_model(app_label, model_name)
    except LookupError:
        return None


def interaction_model():
    return model_or_none("workloads", "Interaction")


def health_model(name: str):
    for label in ("health", "clusters"):
        model = model_or_none(label, name)
        if model is not None:
            return model
    return None


def _has_fields(model, *names: str) -> bool:
    have = {f.name for f in model._meta.get_fields()}
    return all(n in have for n in names)


@dataclass
class Scope:
    """Who asks and when: every figure is computed for the rows ``user`` may view, at ``now``."""

    user: object
    now: datetime.datetime
    window: int = DEFAULT_WINDOW
    org_ids: list[int] = field(default_factory=list)
    every_org: bool = False  # the user views every organization: no need to pass their ids to queries

    @cached_property
    def today(self) -> datetime.date:
        return timezone.localtime(self.now).date()

    @cached_property
    def week_start(self) -> datetime.date:
        return week_start_of(self.today)

    @cached_property
    def week_start_at(self) -> datetime.datetime:
        return _at(self.week_start)

    @property
    def window_start(self) -> datetime.datetime:
        return self.now - datetime.timedelta(days=self.window)

    @property
    def previous_window_start(self) -> datetime.datetime:
        return self.now - datetime.timedelta(days=2 * self.window)


def _at(day: datetime.date) -> datetime.datetime:
    return timezone.make_aware(datetime.datetime.combine(day, datetime.time.min))


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def _days(delta: datetime.timedelta) -> int:
    return max(0, delta.days)


def clean_window(raw) -> int:
    try:
        value = int(raw)
    except (TypeError, ValueError):
        return DEFAULT_WINDOW
    return min(MAX_WINDOW, max(1, value))


# --- organizations, leads, workloads ---------------------------------------------------------------
def organization_rows(scope: Scope) -> list[dict]:
    rows = list(Organization.objects.restrict(scope.user).order_by("name").values("id", "name", "slug"))
    scope.org_ids = [r["id"] for r in rows]
    scope.every_org = access.organization_ids(scope.user, access.VIEW, Organization) is None
    return rows


def lead_names(scope: Scope) -> dict[int, list[str]]:
    rows = (Membership.objects.restrict(scope.user).filter(role=MembershipRole.LEAD_SA)
            .values("organization_id", "user__username", "user__first_name", "user__last_name")
            .order_by("user__last_name", "user__username"))
    found: dict[int, list[str]] = defaultdict(list)
    for r in rows:
        full = f"{r['user__first_name']} {r['user__last_name']}".strip()
        found[r["organization_id"]].append(full or r["user__username"])
    return found


def workload_names(scope: Scope) -> dict[int, list[dict]]:
    Workload = model_or_none("workloads", "Workload")
    if Workload is None:
        return {}
    found: dict[int, list[dict]] = defaultdict(list)
    rows = Workload.objects.restrict(scope.user).values(
        "organization_id", "name", "status").order_by("name")
    for r in rows:
        found[r["organization_id"]].append({"name": r["name"], "status": r["status"]})
    return found


# --- clusters ---------------------------------------------------------------------------------------
def cluster_figures(scope: Scope) -> dict:
    """Clusters by state per organization; launches per day; this week's launches and failures."""
    Cluster = model_or_none("clusters", "Cluster")
    empty = {"available": False, "by_org": {}, "states": {}, "per_day": [], "week_launches": 0, "week_failures": 0,
             "in_flight": 0}
    if Cluster is None:
        return empty
    qs = Cluster.objects.restrict(scope.user)
    by_org: dict[int, dict[str, int]] = defaultdict(dict)
    states: dict[str, int] = defaultdict(int)
    for r in qs.values("organization_id", "state").annotate(n=Count("id")).order_by():
        by_org[r["organization_id"]][r["state"]] = r["n"]
        states[r["state"]] += r["n"]
    first_day = scope.today - datetime.timedelta(days=CHART_DAYS - 1)
    daily = {r["day"]: r for r in qs.filter(created__gte=_at(first_day)).annotate(day=TruncDate("created"))
             .values("day").annotate(n=Count("id"), failed=Count("id", filter=Q(state="failed"))).order_by()}
    per_day = []
    for i in range(CHART_DAYS):
        day = first_day + datetime.timedelta(days=i)
        r = daily.get(day, {})
        per_day.append({"day": day.isoformat(), "launches": r.get("n", 0), "failed": r.get("failed", 0)})
    week = qs.aggregate(
        launches=Count("id", filter=Q(created__gte=scope.week_start_at)),
        failures=Count("id", filter=Q(state="failed", updated__gte=scope.week_start_at)),
    )
    return {
        "available": True,
        "by_org": dict(by_org),
        "states": dict(states),
        "per_day": per_day,
        "week_launches": week["launches"],
        "week_failures": week["failures"],
        "in_flight": states.get("scheduled", 0) + states.get("creating", 0),
    }


# --- quotas and reservations ------------------------------------------------------------------------
def quota_figures(scope: Scope) -> dict:
    """Quota used of total per organization and per instance type; reservations ending within 14 days."""
    InstanceQuota = model_or_none("workloads", "InstanceQuota")
    Reservation = model_or_none("workloads", "CapacityReservation")
    if InstanceQuota is None or Reservation is None:
        return {"available": False, "by_org": {}, "by_type": [], "expiring": {}}
    from workloads import usage

    quotas = usage.quota_totals(InstanceQuota.objects.restrict(scope.user), scope.today)
    held = usage.held(None if scope.every_org else scope.org_ids)
    org_ids = set(scope.org_ids)
    by_org: dict[int, dict[str, int]] = defaultdict(lambda: {"used": 0, "total": 0})
    by_type: dict[str, dict] = {}
    type_orgs: dict[str, set[int]] = defaultdict(set)
    for key in set(quotas) | set(held):
        org_id, type_name, _region = key
        if org_id not in org_ids:
            continue
        quota, used = quotas.get(key, 0), held.get(key, 0)
        by_org[org_id]["used"] += used
        by_org[org_id]["total"] += quota
        t = by_type.setdefault(type_name, {"instance_type": type_name, "quota": 0, "used": 0, "organizations": 0})
        t["quota"] += quota
        t["used"] += used
        if quota:
            type_orgs[type_name].add(org_id)
    for name, t in by_type.items():
        t["organizations"] = len(type_orgs[name])
    last_day = scope.today + datetime.timedelta(days=EXPIRY_DAYS)
    expiring = {
        r["organization_id"]: {"count": r["n"], "next": _iso(r["next"])}
        for r in Reservation.objects.restrict(scope.user).filter(end__gte=scope.today, end__lte=last_day)
        .values("organization_id").annotate(n=Count("id"), next=Min("end")).order_by()
    }
    return {
        "available": True,
        "by_org": {k: dict(v) for k, v in by_org.items()},
        "by_type": sorted(by_type.values(), key=lambda t: t["instance_type"]),
        "expiring": expiring,
    }


# --- interactions -----------------------------------------------------------------------------------
def _interaction_url(pk: int) -> str:
    from django.urls import reverse

    try:
        return reverse("interactions:interaction_detail", kwargs={"pk": pk})
    except NoReverseMatch:
        return ""


def _display(first: str | None, last: str | None, username: str | None) -> str:
    return f"{first or ''} {last or ''}".strip() or (username or "")


def interaction_figures(scope: Scope) -> dict:
    """Open interactions per organization by severity, the oldest's age and the last contact; this week's
    new, resolved and open; open interactions at the end of each of the last 12 weeks."""
    Interaction = interaction_model()
    empty = {"available": False, "by_org": {}, "week": {"new": 0, "resolved": 0, "open": 0}, "per_week": []}
    if Interaction is None:
        return empty
    qs = Interaction.objects.restrict(scope.user)
    is_open = Q(status__in=OPEN_STATUSES)
    # Week boundaries (Mondays) of the last CHART_WEEKS weeks; the current week ends now.
    ends = [_at(scope.week_start - datetime.timedelta(weeks=CHART_WEEKS - 1 - i)) + datetime.timedelta(weeks=1)
            for i in range(CHART_WEEKS)]
    ends[-1] = scope.now
    annotations = {f"open_{s}": Count("id", filter=is_open & Q(severity=s)) for s in SEVERITIES}
    annotations.update({
        f"w{i}": Count("id", filter=Q(occurred_at__lt=end) & ((is_open & Q(resolved_at__isnull=True))
                                                             | Q(resolved_at__gte=end)))
        for i, end in enumerate(ends)
    })
    # One pass over the table: per organization, everything; the program's figures are the sums.
    by_org = {}
    totals = defaultdict(int)
    # Only open interactions and those resolved since the first chart week can count in any figure
    # below (indexed, and bounded by recent activity rather than all history); the last contact is one
    # index probe per organization.
    last_contact = _last_contacts(qs, scope)
    recent = qs.filter(is_open | Q(resolved_at__gte=ends[0] - datetime.timedelta(weeks=1)))
    for r in recent.values("organization_id").annotate(
        oldest=Min("occurred_at", filter=is_open),
        new=Count("id", filter=Q(occurred_at__gte=scope.week_start_at)),
        resolved=Count("id", filter=Q(resolved_at__gte=scope.week_start_at) & ~is_open),
        **annotations,
    ).order_by():
        open_total = sum(r[f"open_{s}"] for s in SEVERITIES)
        by_org[r["organization_id"]] = {
            "open": {s: r[f"open_{s}"] for s in SEVERITIES},
            "open_total": open_total,
            "oldest_open_days": _days(scope.now - r["oldest"]) if r["oldest"] else None,
            "last_contact": _iso(last_contact.get(r["organization_id"])),
        }
        totals["open"] += open_total
        for key in ("new", "resolved", *(f"w{i}" for i in range(CHART_WEEKS))):
            totals[key] += r[key]
    for org_id, last in last_contact.items():
        if last is not None and org_id not in by_org:  # nothing open or recent: the last contact still shows
            by_org[org_id] = {"open": dict.fromkeys(SEVERITIES, 0), "open_total": 0, "oldest_open_days": None,
                              "last_contact": _iso(last)}
    per_week = [
        {"week": (end - datetime.timedelta(weeks=1)).date().isoformat() if i < CHART_WEEKS - 1
         else scope.week_start.isoformat(), "open": totals[f"w{i}"]}
        for i, end in enumerate(ends)
    ]
    return {
        "available": True,
        "by_org": by_org,
        "week": {"new": totals["new"], "resolved": totals["resolved"], "open": totals["open"]},
        "per_week": per_week,
    }


def _last_contacts(qs, scope: Scope) -> dict:
    """The latest interaction per organization: a subquery per organization on (organization, occurred_at)."""
    latest = qs.filter(organization_id=OuterRef("pk")).order_by("-occurred_at").values("occurred_at")[:1]
    return dict(Organization.objects.filter(pk__in=scope.org_ids).annotate(last=Subquery(latest))
                .values_list("pk", "last"))


def outstanding(scope: Scope, limit: int = OUTSTANDING_LIMIT) -> list[dict]:
    """Open interactions, oldest first, with their owner."""
    Interaction = interaction_model()
    if Interaction is None:
        return []
    rows = (Interaction.objects.restrict(scope.user).filter(status__in=OPEN_STATUSES).order_by("occurred_at", "id")
            .values("id", "summary", "severity", "status", "occurred_at", "organization__name", "organization__slug",
                    "owner__username", "owner__first_name", "owner__last_name")[:limit])
    return [
        {
            "id": r["id"],
            "organization": r["organization__name"],
            "organization_slug": r["organization__slug"],
            "summary": r["summary"],
            "severity": r["severity"],
            "status": r["status"],
            "owner": _display(r["owner__first_name"], r["owner__last_name"], r["owner__username"]),
            "age_days": _days(scope.now - r["occurred_at"]),
            "url": _interaction_url(r["id"]),
        }
        for r in rows
    ]


def lessons(scope: Scope, limit: int = LESSONS_LIMIT) -> list[dict]:
    """Lessons learned recorded (or last edited) this week."""
    Interaction = interaction_model()
    if Interaction is None:
        return []
    rows = (Interaction.objects.restrict(scope.user).exclude(lesson="").filter(updated__gte=scope.week_start_at)
            .order_by("-updated", "-id").values("id", "summary", "lesson", "organization__name")[:limit])
    return [{"id": r["id"], "organization": r["organization__name"], "summary": r["summary"], "lesson": r["lesson"],
             "url": _interaction_url(r["id"])} for r in rows]


def outcomes(scope: Scope) -> list[dict]:
    """Milestones and trained models per organization (portal.engagement)."""
    from portal.engagement import outcomes as engagement_outcomes

    return engagement_outcomes.figures(scope.user)


def heatmap(scope: Scope, org_rows: list[dict]) -> dict:
    """Challenge tags × organizations: interactions in the window and in the window before it."""
    Interaction = interaction_model()
    result = {"available": Interaction is not None, "window": scope.window, "tags": [], "organizations": [],
              "rows": []}
    if Interaction is None:
        return result
    current = Q(occurred_at__gte=scope.window_start)
    rows = (Interaction.objects.restrict(scope.user)
            .filter(occurred_at__gte=scope.previous_window_start, occurred_at__lte=scope.now, tags__isnull=False)
            .values("tags__slug", "tags__name", "organization_id")
            .annotate(cur=Count("id", filter=current), prev=Count("id", filter=~current)).order_by())
    cells: dict[str, dict[int, tuple[int, int]]] = defaultdict(dict)
    names: dict[str, str] = {}
    orgs_seen: set[int] = set()
    for r in rows:
        cells[r["tags__slug"]][r["organization_id"]] = (r["cur"], r["prev"])
        names[r["tags__slug"]] = r["tags__name"]
        if r["cur"]:
            orgs_seen.add(r["organization_id"])
    columns = [o for o in org_rows if o["id"] in orgs_seen]
    peak = max((c[0] for t in cells.values() for c in t.values()), default=0)
    out_rows = []
    for slug in sorted(cells, key=lambda s: (-sum(c[0] for c in cells[s].values()), names[s])):
        tag_cells = []
        for org in columns:
            cur, prev = cells[slug].get(org["id"], (0, 0))
            tag_cells.append({"organization": org["slug"], "count": cur, "previous": prev, "delta": cur - prev,
                              "level": _level(cur, peak)})
        total = sum(c[0] for c in cells[slug].values())
        previous = sum(c[1] for c in cells[slug].values())
        out_rows.append({"tag": slug, "name": names[slug], "cells": tag_cells, "total": total, "previous": previous,
                         "delta": total - previous,
                         "organizations": sum(1 for c in cells[slug].values() if c[0])})
    result.update(tags=[r["tag"] for r in out_rows], organizations=[{"slug": o["slug"], "name": o["name"]}
                                                                    for o in columns], rows=out_rows)
    return result


def _level(count: int, peak: int) -> int:
    """Colour intensity class 0–4 of a heat-map cell."""
    if not count or not peak:
        return 0
    return min(4, 1 + (4 * count - 1) // peak)


# --- health and validation --------------------------------------------------------------------------
def health_figures(scope: Scope) -> dict:
    """Health verdicts, validation and faults, from the health app's models once they are installed."""
    empty = {"available": False, "by_org": {}, "per_week": [], "week_faults": 0, "validated_clusters": 0}
    GpuFault = health_model("GpuFault")
    ValidationRun = health_model("ValidationRun")
    if GpuFault is None and ValidationRun is None:
        return empty
    from portal.review import health_source

    return health_source.figures(scope, GpuFault, ValidationRun, health_model("HealthReport")) or empty


# --- the whole overview -----------------------------------------------------------------------------
def overview(user, *, window: int = DEFAULT_WINDOW, now: datetime.datetime | None = None) -> dict:
    """Every figure of the program overview, as JSON values, for the rows ``user`` may view."""
    scope = Scope(user=user, now=now or timezone.now(), window=window)
    org_rows = organization_rows(scope)
    leads = lead_names(scope)
    workloads = workload_names(scope)
    clusters = cluster_figures(scope)
    quotas = quota_figures(scope)
    interactions = interaction_figures(scope)
    health = health_figures(scope)
    organizations = []
    for org in org_rows:
        oid = org["id"]
        inter = interactions["by_org"].get(oid, {})
        quota = quotas["by_org"].get(oid, {"used": 0, "total": 0})
        org_health = health["by_org"].get(oid, {})
        organizations.append({
            **org,
            "workloads": workloads.get(oid, []),
            "leads": leads.get(oid, []),
            "clusters": clusters["by_org"].get(oid, {}),
            "clusters_total": sum(clusters["by_org"].get(oid, {}).values()),
            "health": org_health.get("verdict"),
            "validation": org_health.get("validation"),
            "open": inter.get("open", {s: 0 for s in SEVERITIES}),
            "open_total": inter.get("open_total", 0),
            "oldest_open_days": inter.get("oldest_open_days"),
            "last_contact": inter.get("last_contact"),
            "quota_used": quota["used"],
            "quota_total": quota["total"],
            "expiring": quotas["expiring"].get(oid, {"count": 0, "next": None}),
        })
    return {
        "generated_at": scope.now.isoformat(),
        "week_start": scope.week_start.isoformat(),
        "window": scope.window,
        "sources": {
            "clusters": clusters["available"],
            "quotas": quotas["available"],
            "interactions": interactions["available"],
            "health": health["available"],
        },
        "organizations": organizations,
        "totals": {
            "by_type": quotas["by_type"],
            "clusters": clusters["states"],
            "launches_in_flight": clusters["in_flight"],
            "validated_clusters": health["validated_clusters"],
            "organizations": len(org_rows),
        },
        "week": {
            **interactions["week"],
            "launches": clusters["week_launches"],
            "failures": clusters["week_failures"],
            "faults": health["week_faults"],
        },
        "heatmap": heatmap(scope, org_rows),
        "outstanding": outstanding(scope),
        "lessons": lessons(scope),
        "outcomes": outcomes(scope),
        "charts": {
            "open_per_week": interactions["per_week"],
            "launches_per_day": clusters["per_day"],
            "quota_by_type": quotas["by_type"],
            "faults_per_week": health["per_week"],
        },
    }


# --- comparing two snapshots ------------------------------------------------------------------------
def diff(before: dict | None, after: dict) -> list[dict]:
    """What changed between two snapshots: program figures, then per organization, as
    ``{"label", "before", "after", "delta"}`` for every number that differs."""
    if not before:
        return []
    changes: list[dict] = []

    def add(label: str, old, new) -> None:
        old, new = old or 0, new or 0
        if old != new:
            changes.append({"label": label, "before": old, "after": new, "delta": new - old})

    for key in ("new", "resolved", "open", "launches", "failures", "faults"):
        add(f"This week: {key}", before.get("week", {}).get(key), after.get("week", {}).get(key))
    bt, at = before.get("totals", {}), after.get("totals", {})
    add("Validated clusters", bt.get("validated_clusters"), at.get("validated_clusters"))
    for state in sorted(set(bt.get("clusters", {})) | set(at.get("clusters", {}))):
        add(f"Clusters {state}", bt.get("clusters", {}).get(state), at.get("clusters", {}).get(state))
    old_types = {t["instance_type"]: t for t in bt.get("by_type", [])}
    new_types = {t["instance_type"]: t for t in at.get("by_type", [])}
    for name in sorted(set(old_types) | set(new_types)):
        add(f"{name} used", old_types.get(name, {}).get("used"), new_types.get(name, {}).get("used"))
        add(f"{name} quota", old_types.get(name, {}).get("quota"), new_types.get(name, {}).get("quota"))
    old_orgs = {o["slug"]: o for o in before.get("organizations", [])}
    for org in after.get("organizations", []):
        prev = old_orgs.get(org["slug"], {})
        add(f"{org['name']}: open interactions", prev.get("open_total"), org.get("open_total"))
        add(f"{org['name']}: clusters", prev.get("clusters_total"), org.get("clusters_total"))
        add(f"{org['name']}: quota used", prev.get("quota_used"), org.get("quota_used"))
    return changes

