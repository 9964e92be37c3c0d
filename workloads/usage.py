"""Quota usage: instances held by an organization's clusters against its quotas, per type, region and date.

Every figure comes from aggregated queries (one for clusters, one for quotas), so the cost does not grow
with the number of clusters or quotas. ``ml.``-prefixed SageMaker names count with the EC2 name of the same
machine. Clusters have no dates: what they hold now counts against the quotas active on the date asked.

The launch guard of the clusters app asks :func:`quota_standing` (and nothing else here); with
``lock=True`` it first takes the organization's quota lock (``portal.core.locks.quota``), which quota
decisions take too, so a launch and a decision never both act on a figure the other is changing.

What holds instances is the clusters app's: it registers its holding rows (``register_holder``, from its
``ready()``), so this module, below it, imports nothing of it. The quota model is looked up in the app registry:
its own checks call this module, which imports no model of its app.
"""
from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from django.apps import apps
from django.db.models import F, QuerySet, Sum, Value
from django.db.models.functions import Replace
from django.utils import timezone
from django.utils.translation import gettext

from portal.core import locks
from portal.core.models import Organization
from workloads.validators import base_instance_type

Key = tuple[int, str, str]  # (organization id, instance type without "ml.", region)

# Sources of holding rows: each returns a queryset with ``organization_id``, ``instance_type``, ``region`` and
# ``node_count`` (clusters in a holding state).
HOLDERS: list[Callable[[], QuerySet]] = []


def register_holder(rows: Callable[[], QuerySet]) -> None:
    """Count the rows ``rows()`` returns as holding instances against the quotas."""
    if rows not in HOLDERS:
        HOLDERS.append(rows)


def _holdings() -> list[QuerySet]:
    return [rows() for rows in HOLDERS]


def _quotas() -> QuerySet:
    return apps.get_model("workloads", "InstanceQuota").objects.all()


def _base(field: str):
    return Replace(F(field), Value("ml."), Value(""))


def _names(instance_type: str) -> list[str]:
    base = base_instance_type(instance_type)
    return [base, f"ml.{base}"]


def held(organization_ids=None) -> dict[Key, int]:
    """Instances held by clusters in a holding state, per (organization, type, region).

    ``organization_ids``: an iterable or a subquery of organization ids; ``None`` means every organization.
    """
    found: dict[Key, int] = defaultdict(int)
    for qs in _holdings():
        if organization_ids is not None:
            qs = qs.filter(organization_id__in=organization_ids)
        rows = qs.annotate(base=_base("instance_type")).values("organization_id", "base", "region").annotate(
            n=Sum("node_count")).order_by()
        for r in rows:
            found[(r["organization_id"], r["base"], r["region"])] += r["n"] or 0
    return dict(found)


def quota_totals(quotas, on_date: datetime.date | None = None) -> dict[Key, int]:
    """Sum of the quotas in ``quotas`` (a queryset) active on ``on_date``, per (organization, type, region)."""
    day = on_date or timezone.localdate()
    rows = (quotas.filter(start__lte=day, end__gte=day).annotate(base=_base("instance_type_name"))
            .values("organization_id", "base", "region").annotate(n=Sum("count")).order_by())
    return {(r["organization_id"], r["base"], r["region"]): r["n"] or 0 for r in rows}


def held_for(organization, instance_type: str, region: str) -> int:
    org_id = getattr(organization, "pk", organization)
    return sum(qs.filter(organization_id=org_id, instance_type__in=_names(instance_type), region=region)
               .aggregate(n=Sum("node_count"))["n"] or 0 for qs in _holdings())


def quota_total_for(organization, instance_type: str, region: str, on_date: datetime.date | None = None,
                    exclude_pk: int | None = None) -> int:
    org_id = getattr(organization, "pk", organization)
    day = on_date or timezone.localdate()
    qs = _quotas().filter(organization_id=org_id, instance_type_name__in=_names(instance_type), region=region,
                                      start__lte=day, end__gte=day)
    if exclude_pk is not None:
        qs = qs.exclude(pk=exclude_pk)
    return qs.aggregate(n=Sum("count"))["n"] or 0


@dataclass(frozen=True)
class QuotaStanding:
    """An organization's quota for one type and region on one date, and what its clusters hold."""

    total: int
    held: int

    @property
    def left(self) -> int:
        return self.total - self.held


def quota_standing(organization, instance_type: str, region: str, on_date: datetime.date | None = None, *,
                   lock: bool = False) -> QuotaStanding:
    """Quota and holding for a launch decision. ``lock=True`` (inside a transaction) serializes the
    decision with every other launch and quota decision of the organization, so the figure stays true
    until the caller's transaction commits the clusters it decided on."""
    if lock:
        locks.quota(getattr(organization, "pk", organization))
    return QuotaStanding(total=quota_total_for(organization, instance_type, region, on_date),
                         held=held_for(organization, instance_type, region))


def quota_left(organization, instance_type: str, region: str, on_date: datetime.date | None = None) -> int:
    """Instances of ``instance_type`` the organization may still launch in ``region`` on ``on_date`` (today by
    default): the quotas active that day minus what its clusters hold. Negative when over quota."""
    return quota_total_for(organization, instance_type, region, on_date) - held_for(organization, instance_type, region)


def refusal_for_quota_change(quota) -> str | None:
    """Why saving ``quota`` (new or changed, unsaved) would leave less quota today than clusters hold, or None.

    Only a change that lowers today's total is refused; a quota already over-used may still grow.
    """
    today = timezone.localdate()
    holding = held_for(quota.organization_id, quota.instance_type_name, quota.region)
    if not holding:
        return None
    others = quota_total_for(quota.organization_id, quota.instance_type_name, quota.region, today, exclude_pk=quota.pk)
    after = others + (quota.count if quota.start <= today <= quota.end else 0)
    before = others
    if quota.pk:
        stored = _quotas().filter(pk=quota.pk).values("count", "start", "end").first()
        if stored and stored["start"] <= today <= stored["end"]:
            before += stored["count"]
    if after < holding and after < before:
        return (gettext("Clusters of this organization hold %(holding)s × %(type)s in %(region)s; this change would "
                        "leave a quota of %(after)s today. Scale the clusters down first.")
                % {"holding": holding, "type": base_instance_type(quota.instance_type_name), "region": quota.region,
                   "after": after})
    return None


@dataclass
class UsageRow:
    organization_id: int
    organization_name: str
    organization_slug: str
    instance_type_name: str
    region: str
    quota: int
    used: int

    @property
    def left(self) -> int:
        return self.quota - self.used

    @property
    def over(self) -> bool:
        return self.used > self.quota

    @property
    def percent(self) -> int:
        if not self.quota:
            return 100 if self.used else 0
        return min(100, round(100 * self.used / self.quota))


def usage_rows(user, organization=None, on_date: datetime.date | None = None) -> list[UsageRow]:
    """Quota and use per (organization, type, region) for what ``user`` may see; three queries in all."""
    orgs = Organization.objects.restrict(user)
    if organization is not None:
        orgs = orgs.filter(pk=organization.pk)
    names = {o["pk"]: (o["name"], o["slug"]) for o in orgs.values("pk", "name", "slug")}
    quotas = quota_totals(_quotas().restrict(user).filter(organization_id__in=list(names)), on_date)
    holding = held(list(names))
    rows = [
        UsageRow(key[0], *names[key[0]], key[1], key[2], quotas.get(key, 0), holding.get(key, 0))
        for key in set(quotas) | set(holding)
        if key[0] in names
    ]
    rows.sort(key=lambda r: (r.organization_name, r.instance_type_name, r.region))
    return rows


@dataclass
class TypeTotal:
    instance_type_name: str
    quota: int = 0
    used: int = 0
    organizations: int = 0

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.used / self.quota)) if self.quota else (100 if self.used else 0)


def program_totals(rows: list[UsageRow]) -> list[TypeTotal]:
    """Totals per instance type across the organizations in ``rows`` (the case study: 127 P5, 24 Trn1)."""
    totals: dict[str, TypeTotal] = {}
    orgs: dict[str, set[int]] = defaultdict(set)
    for row in rows:
        total = totals.setdefault(row.instance_type_name, TypeTotal(row.instance_type_name))
        total.quota += row.quota
        total.used += row.used
        if row.quota:
            orgs[row.instance_type_name].add(row.organization_id)
    for name, total in totals.items():
        total.organizations = len(orgs[name])
    return sorted(totals.values(), key=lambda t: t.instance_type_name)
