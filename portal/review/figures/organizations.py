"""The overview's rows: the organizations the user may view, their lead SAs and their workloads."""
from __future__ import annotations

from collections import defaultdict

from django.db.models import Q

from portal.core import access
from portal.core.choices import CycleStatus, MembershipRole
from portal.core.models import CycleParticipation, Membership, Organization
from portal.review.figures.scope import Scope
from workloads.models import Workload


def organization_rows(scope: Scope) -> list[dict]:
    """The organizations of the active cycle (and any that never took part in a cycle, new ones): an organization
    that did not continue into the active cycle is its past cycle's history, not the live program's."""
    taking_part = CycleParticipation.objects.values("organization_id")
    live = Q(pk__in=taking_part.filter(cycle__status=CycleStatus.ACTIVE)) | ~Q(pk__in=taking_part)
    rows = list(Organization.objects.restrict(scope.user).filter(live).order_by("name").values("id", "name", "slug"))
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
    found: dict[int, list[dict]] = defaultdict(list)
    for r in Workload.objects.restrict(scope.user).values("organization_id", "name", "status").order_by("name"):
        found[r["organization_id"]].append({"name": r["name"], "status": r["status"]})
    return found
