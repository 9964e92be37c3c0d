"""The launch-day board's figures: instances by type against the day's target, and every organization's
progress, including those that have not launched yet.

The case study's headline is instances, not clusters ("127 P5 and 24 Trn1 in a day"), so the board counts
instances (``node_count``) by instance type; SageMaker's ``ml.`` names count with their EC2 twin. The target
comes from ``LAUNCH_DAY_TARGET`` (``"p5.48xlarge=127,trn1.32xlarge=24"`` by default). Two queries, whatever
the number of organizations and clusters.

A customer is not running the program's day: the program's 127 would make their 16 instances read "13 %".
Their board measures their organization's clusters against the quota their organization holds today
(:func:`own_quota`, one more query), and says so.
"""
from __future__ import annotations

from django.conf import settings
from django.db.models import Count, Q, Sum
from django.utils import timezone

from clusters.choices import ClusterState
from clusters.models import Cluster
from portal.core import access
from portal.core.models import Organization
from workloads.models import InstanceQuota

DEFAULT_TARGET = "p5.48xlarge=127,trn1.32xlarge=24"
BUSY = (ClusterState.SCHEDULED, ClusterState.CREATING)


def target() -> dict[str, int]:
    """The day's target, instance type → instances, from the setting (a mapping or "type=n,type=n")."""
    raw = getattr(settings, "LAUNCH_DAY_TARGET", DEFAULT_TARGET)
    if isinstance(raw, dict):
        return {str(k): int(v) for k, v in raw.items()}
    pairs = (item.split("=", 1) for item in str(raw).split(",") if "=" in item)
    return {name.strip(): int(n) for name, n in pairs}


def measures_own_quota(user) -> bool:
    """Customers (no program-wide or lead SA role, no specialist team) see their quota, not the program's target."""
    if access.is_staff(user) or access.is_program_manager(user) or access.is_specialist(user):
        return False
    roles = access.roles_of(user)
    return bool(roles.get(access.CUSTOMER)) and not roles.get(access.LEAD_SA)


def own_quota(user) -> dict[str, int]:
    """Instance type → the instances the user's organizations' quotas allow today (all regions together)."""
    goal: dict[str, int] = {}
    # restrict: a figure for the board's reader
    rows = (InstanceQuota.objects.restrict(user).active_on(timezone.localdate())
            .values("instance_type_name").annotate(n=Sum("count")).order_by())
    for r in rows:
        name = _base(r["instance_type_name"] or "")
        goal[name] = goal.get(name, 0) + (r["n"] or 0)
    return goal


def _base(instance_type: str) -> str:
    return instance_type.removeprefix("ml.")


def instances_by_type(user) -> list[dict]:
    """Ready and in-progress instances per type, with the target (a customer's: their quota) and the share reached."""
    goal = own_quota(user) if measures_own_quota(user) else target()
    rows: dict[str, dict] = {name: {"instance_type": name, "ready": 0, "busy": 0, "target": n} for name, n in goal.items()}
    # restrict: the board counts only the clusters its reader may see
    for r in (Cluster.objects.restrict(user).exclude(state=ClusterState.DELETED).values("instance_type")
              .annotate(ready=Sum("node_count", filter=Q(state=ClusterState.READY)),
                        busy=Sum("node_count", filter=Q(state__in=BUSY))).order_by()):
        name = _base(r["instance_type"] or "")
        if not name:
            continue
        row = rows.setdefault(name, {"instance_type": name, "ready": 0, "busy": 0, "target": 0})
        row["ready"] += r["ready"] or 0
        row["busy"] += r["busy"] or 0
    for row in rows.values():
        row["percent"] = min(100, round(100 * row["ready"] / row["target"])) if row["target"] else None
    return sorted(rows.values(), key=lambda r: (-r["target"], r["instance_type"]))


def organizations(user) -> list[dict]:
    """Every organization the user sees, those without a launch included (shown as "not launched")."""
    live = ~Q(clusters__state=ClusterState.DELETED)
    return list(
        # restrict: the organizations the reader may see
        Organization.objects.restrict(user).values("name", "slug").annotate(
            total=Count("clusters", filter=live),
            ready=Count("clusters", filter=Q(clusters__state=ClusterState.READY)),
            busy=Count("clusters", filter=Q(clusters__state__in=BUSY)),
            failed=Count("clusters", filter=Q(clusters__state=ClusterState.FAILED)),
            instances=Sum("clusters__node_count", filter=Q(clusters__state=ClusterState.READY)),
        ).order_by("name")
    )
