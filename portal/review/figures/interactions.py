"""Support interactions: open per organization by severity, ageing, last contact, weekly counts, the
outstanding list, this week's lessons and the challenge-tag heat map."""
from __future__ import annotations

import datetime
from collections import defaultdict

from django.db.models import Count, Min, OuterRef, Q, Subquery
from django.urls import reverse

from portal.models import Organization
from portal.review.figures.scope import CHART_WEEKS, Scope, at, days, iso
from portal.vocabulary import OPEN_STATUSES
from portal.vocabulary import SEVERITIES_WORST_FIRST as SEVERITIES
from workloads.models import Interaction

OUTSTANDING_LIMIT = 50
LESSONS_LIMIT = 50


def _interaction_url(pk: int) -> str:
    return reverse("interactions:interaction_detail", kwargs={"pk": pk})


def _display(first: str | None, last: str | None, username: str | None) -> str:
    return f"{first or ''} {last or ''}".strip() or (username or "")


def interaction_figures(scope: Scope) -> dict:
    """Open interactions per organization by severity, the oldest's age and the last contact; this week's
    new, resolved and open; open interactions at the end of each of the last 12 weeks."""
    qs = Interaction.objects.restrict(scope.user)
    is_open = Q(status__in=OPEN_STATUSES)
    # Week boundaries (Mondays) of the last CHART_WEEKS weeks; the current week ends now.
    ends = [at(scope.week_start - datetime.timedelta(weeks=CHART_WEEKS - 1 - i)) + datetime.timedelta(weeks=1)
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
            "oldest_open_days": days(scope.now - r["oldest"]) if r["oldest"] else None,
            "last_contact": iso(last_contact.get(r["organization_id"])),
        }
        totals["open"] += open_total
        for key in ("new", "resolved", *(f"w{i}" for i in range(CHART_WEEKS))):
            totals[key] += r[key]
    for org_id, last in last_contact.items():
        if last is not None and org_id not in by_org:  # nothing open or recent: the last contact still shows
            by_org[org_id] = {"open": dict.fromkeys(SEVERITIES, 0), "open_total": 0, "oldest_open_days": None,
                              "last_contact": iso(last)}
    per_week = [
        {"week": (end - datetime.timedelta(weeks=1)).date().isoformat() if i < CHART_WEEKS - 1
         else scope.week_start.isoformat(), "open": totals[f"w{i}"]}
        for i, end in enumerate(ends)
    ]
    return {
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
            "age_days": days(scope.now - r["occurred_at"]),
            "url": _interaction_url(r["id"]),
        }
        for r in rows
    ]


def lessons(scope: Scope, limit: int = LESSONS_LIMIT) -> list[dict]:
    """Lessons learned recorded (or last edited) this week."""
    rows = (Interaction.objects.restrict(scope.user).exclude(lesson="").filter(updated__gte=scope.week_start_at)
            .order_by("-updated", "-id").values("id", "summary", "lesson", "organization__name")[:limit])
    return [{"id": r["id"], "organization": r["organization__name"], "summary": r["summary"], "lesson": r["lesson"],
             "url": _interaction_url(r["id"])} for r in rows]


def heatmap(scope: Scope, org_rows: list[dict]) -> dict:
    """Challenge tags × organizations: interactions in the window and in the window before it."""
    result = {"window": scope.window, "tags": [], "organizations": [], "rows": []}
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
