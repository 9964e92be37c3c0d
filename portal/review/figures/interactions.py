"""Support interactions: open per organization by severity, ageing, last contact, weekly counts, the
outstanding list, this week's lessons and the challenge-tag heat map."""
from __future__ import annotations

import datetime
from collections import defaultdict

from django.db.models import Count, OuterRef, Q, Subquery, Sum
from django.urls import reverse

from portal.core.choices import OPEN_STATUSES
from portal.core.choices import SEVERITIES_WORST_FIRST as SEVERITIES
from portal.core.models import Organization
from portal.review.figures.scope import Scope, at, days, iso
from portal.review.models import InteractionCount, InteractionWeek, TagMention
from workloads.interactions.models import ChallengeTag, Interaction

OUTSTANDING_LIMIT = 50
LESSONS_LIMIT = 50


def _interaction_url(pk: int) -> str:
    return reverse("interactions:interaction_detail", kwargs={"pk": pk})


def _display(first: str | None, last: str | None, username: str | None) -> str:
    return f"{first or ''} {last or ''}".strip() or (username or "")


def interaction_figures(scope: Scope) -> dict:
    """Open interactions per organization by severity, the oldest's age and the last contact; this week's
    new, resolved and open; open interactions at the end of each of the last 12 weeks.

    Nothing here reads the interactions' history: the open counts and the weekly figures come from the
    pre-aggregates kept on write (:mod:`portal.review.tallies`), the oldest open interaction and the last
    contact are one index probe per organization, and only interactions dated after now (normally none)
    are read one by one."""
    qs = Interaction.objects.restrict(scope.user)
    by_org: dict[int, dict] = {}
    open_now: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(SEVERITIES, 0))
    unbounded = 0
    for c in (InteractionCount.objects.restrict(scope.user).values("organization_id", "severity")
              .annotate(n=Sum("open"), unbounded=Sum("unbounded")).order_by()):
        open_now[c["organization_id"]][c["severity"]] = c["n"]
        unbounded += c["unbounded"]
    for org_id, (last, oldest) in _probes(qs, scope).items():
        if last is None:
            continue
        counts = open_now.get(org_id, dict.fromkeys(SEVERITIES, 0))
        by_org[org_id] = {
            "open": {s: counts.get(s, 0) for s in SEVERITIES},
            "open_total": sum(counts.values()),
            "oldest_open_days": days(scope.now - oldest) if oldest else None,
            "last_contact": iso(last),
        }
    weeks = _weeks(scope)
    return {
        "by_org": by_org,
        "week": {"new": weeks["new"], "resolved": weeks["resolved"],
                 "open": sum(sum(c.values()) for c in open_now.values())},
        "per_week": _per_week(scope, unbounded, weeks["net"], _after_now(qs, scope)),
    }


def _weeks(scope: Scope) -> dict:
    """The weekly pre-aggregates from the chart's second week on: each week's net change in open
    interactions, and this week's (and any later week's) new and resolved ones."""
    mondays = scope.chart_mondays
    net: dict[datetime.date, int] = defaultdict(int)
    new = resolved = 0
    for w in (InteractionWeek.objects.restrict(scope.user).filter(week__gte=mondays[1]).values("week")
              .annotate(opened=Sum("opened"), closed=Sum("closed"), new=Sum("new"), resolved=Sum("resolved"))
              .order_by()):
        net[w["week"]] += w["opened"] - w["closed"]
        if w["week"] >= scope.week_start:
            new += w["new"]
            resolved += w["resolved"]
    return {"net": net, "new": new, "resolved": resolved}


def _per_week(scope: Scope, unbounded: int, net: dict[datetime.date, int], after_now: int) -> list[dict]:
    """Open at the end of each of the last CHART_WEEKS weeks (the current one ends now).

    An interaction counts as open at a moment ``d`` when ``occurred_at < d <= resolved_at`` (no end while open
    without a resolution time). At a week's end that is the open ones without an end less the net change
    (``opened - closed``) of every week from that one on; at ``now`` it is the end of this week corrected
    by the interactions dated between now and then (``after_now``)."""
    mondays = scope.chart_mondays

    def open_at(monday: datetime.date) -> int:
        return unbounded - sum(n for week, n in net.items() if week >= monday)

    points = [open_at(monday + datetime.timedelta(weeks=1)) for monday in mondays]
    points[-1] += after_now
    return [{"week": monday.isoformat(), "open": value} for monday, value in zip(mondays, points, strict=True)]


def _after_now(qs, scope: Scope) -> int:
    """Open now less open at the end of this week, from the interactions dated between the two: those
    resolved in between that occurred before now were open now, and those occurring in between that are
    still open at the week's end were not yet. Both dates are indexed, and such rows are normally none."""
    now, end = scope.now, at(scope.week_start + datetime.timedelta(weeks=1))
    found = qs.filter(Q(resolved_at__gte=now, resolved_at__lt=end) | Q(occurred_at__gte=now, occurred_at__lt=end)).aggregate(
        went=Count("id", filter=Q(occurred_at__lt=now, resolved_at__gte=now, resolved_at__lt=end)),
        came=Count("id", filter=Q(occurred_at__gte=now, occurred_at__lt=end)
                   & (Q(resolved_at__gte=end) | Q(resolved_at__isnull=True, status__in=OPEN_STATUSES))))
    return (found["went"] or 0) - (found["came"] or 0)


def _probes(qs, scope: Scope) -> dict:
    """Per organization, the latest interaction and the oldest open one: an index probe each, on
    (organization, occurred_at) and on the open interactions' partial index."""
    latest = qs.filter(organization_id=OuterRef("pk")).order_by("-occurred_at").values("occurred_at")[:1]
    oldest = (qs.filter(organization_id=OuterRef("pk"), status__in=OPEN_STATUSES).order_by("occurred_at")
              .values("occurred_at")[:1])
    return {pk: (last, first) for pk, last, first in Organization.objects.filter(pk__in=scope.org_ids).annotate(
        last=Subquery(latest), oldest=Subquery(oldest)).values_list("pk", "last", "oldest")}


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
    """Challenge tags × organizations: interactions in the window and in the window before it.

    Counted from the tag mentions kept on write (:class:`TagMention`): the window's rows of one index,
    grouped by ids, whatever the length of the history; the tags' names are one small query."""
    result = {"window": scope.window, "tags": [], "organizations": [], "rows": []}
    current = Q(occurred_at__gte=scope.window_start)
    counted = list(TagMention.objects.restrict(scope.user)
                   .filter(occurred_at__gte=scope.previous_window_start, occurred_at__lte=scope.now)
                   .values_list("tag_id", "organization_id")
                   # Counting a column of the index (never null) keeps the scan to the index alone.
                   .annotate(cur=Count("tag", filter=current), prev=Count("tag", filter=~current)).order_by())
    tags = {pk: (slug, name) for pk, slug, name in
            ChallengeTag.objects.filter(pk__in={r[0] for r in counted}).values_list("pk", "slug", "name")}
    cells: dict[str, dict[int, tuple[int, int]]] = defaultdict(dict)
    names: dict[str, str] = {}
    orgs_seen: set[int] = set()
    for tag_id, org_id, cur, prev in counted:
        if tag_id not in tags:  # deleted since
            continue
        slug, name = tags[tag_id]
        names[slug] = name
        cells[slug][org_id] = (cur, prev)
        if cur:
            orgs_seen.add(org_id)
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
