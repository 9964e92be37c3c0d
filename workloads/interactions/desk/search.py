"""Searching lessons learned across organizations.

Lessons are how the program's lead SAs learn from each other's cases, so the search spans every
organization for lead SAs and program managers (a lead SA sees the lesson, the resolution and the
tags; the interaction itself only when it is theirs). Customers cannot search lessons at all.
PostgreSQL ranks with full-text search; other databases fall back to a plain substring match.
"""
from __future__ import annotations

from django.db import connection
from django.db.models import Q, QuerySet

from portal.core import access
from portal.core.choices import InteractionStatus
from workloads.interactions.models import Interaction


def may_search(user) -> bool:
    return access.is_staff(user) or access.is_program_manager(user) or access.sees_internal(user)


def lessons(user, query: str = "", tag: str = "") -> QuerySet[Interaction]:
    if not may_search(user):
        return Interaction.objects.none()
    qs = (
        Interaction.objects.filter(status=InteractionStatus.RESOLVED)
        .exclude(lesson="")
        .select_related("organization")
        .prefetch_related("tags")
    )
    if tag:
        qs = qs.filter(tags__slug=tag)
    query = (query or "").strip()
    if not query:
        return qs.order_by("-resolved_at", "-id")
    if connection.vendor == "postgresql":
        # deferred: PostgreSQL only; SQLite runs the plain search below
        from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector

        vector = (
            SearchVector("lesson", weight="A", config="english")
            + SearchVector("summary", weight="B", config="english")
            + SearchVector("resolution", weight="C", config="english")
        )
        search = SearchQuery(query, search_type="websearch", config="english")
        # Match with @@ (ts_rank is never exactly 0 for a non-match), then rank.
        return (qs.annotate(document=vector, rank=SearchRank(vector, search))
                .filter(document=search).order_by("-rank", "-id"))
    words = query.split()
    condition = Q()
    for word in words:
        condition &= Q(lesson__icontains=word) | Q(summary__icontains=word) | Q(resolution__icontains=word)
    return qs.filter(condition).order_by("-resolved_at", "-id")
