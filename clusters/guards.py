"""Guardrails a launch must pass: the organization's quota for its instance type, region and date.

The quota arithmetic belongs to the workloads app (``workloads.usage.quota_total_for`` and
``quota_left``). Without that module the same figure is computed here from
``workloads.models.InstanceQuota`` when that model exists; without a quota model at all nothing is
refused and the preview says "quota not checked".
"""
from __future__ import annotations

import datetime
import importlib
from dataclasses import dataclass

from django.db.models import Sum
from django.utils import timezone

from clusters import instance_types
from clusters.models import HOLDING_STATES, Cluster


@dataclass(frozen=True)
class QuotaCheck:
    checked: bool
    instance_type: str
    region: str
    on_date: datetime.date
    quota: int | None = None
    left: int | None = None
    requested: int = 0

    @property
    def allowed(self) -> bool:
        return not self.checked or (self.left is not None and self.requested <= self.left)

    @property
    def message(self) -> str:
        if not self.checked:
            return "quota not checked: the portal has no quota records yet"
        if self.allowed:
            return (f"{self.requested} × {self.instance_type} in {self.region} on {self.on_date}: "
                    f"{self.left} of {self.quota} left")
        return (f"{self.requested} × {self.instance_type} requested in {self.region} on {self.on_date}, "
                f"but only {self.left} of the organization's quota of {self.quota} are left")


def _quota_model():
    try:
        module = importlib.import_module("workloads.models")
    except ImportError:
        return None
    return getattr(module, "InstanceQuota", None)


def _usage_function():
    try:
        module = importlib.import_module("workloads.usage")
    except ImportError:
        return None
    return getattr(module, "quota_left", None)


def quota_total(organization, instance_type: str, region: str, on_date: datetime.date) -> int | None:
    """The organization's quota for the type, region and date; ``None`` when the portal has no quotas."""
    try:
        module = importlib.import_module("workloads.usage")
    except ImportError:
        module = None
    if module is not None and hasattr(module, "quota_total_for"):
        return module.quota_total_for(organization, instance_type, region, on_date)
    model = _quota_model()
    if model is None:
        return None
    field = "instance_type_name" if any(f.name == "instance_type_name" for f in model._meta.fields) else "instance_type"
    rows = model._default_manager.filter(
        organization=organization, region=region, start__lte=on_date, end__gte=on_date,
        **{f"{field}__in": _spellings(instance_type)},
    )
    return rows.aggregate(total=Sum("count"))["total"] or 0


def _spellings(instance_type: str) -> list[str]:
    name = instance_types.normalize(instance_type)
    return [name, f"{instance_types.SAGEMAKER_PREFIX}{name}"]


def in_use(organization, instance_type: str, region: str, exclude: Cluster | None = None) -> int:
    """Instances the organization's clusters hold (or are about to) of this type in this region."""
    rows = Cluster.objects.filter(organization=organization, instance_type__in=_spellings(instance_type),
                                  region=region, state__in=HOLDING_STATES)
    if exclude is not None and exclude.pk:
        rows = rows.exclude(pk=exclude.pk)
    return rows.aggregate(total=Sum("node_count"))["total"] or 0


def check_quota(organization, instance_type: str, region: str, requested: int,
                on_date: datetime.date | None = None, exclude: Cluster | None = None) -> QuotaCheck:
    on_date = on_date or timezone.localdate()
    name = instance_types.normalize(instance_type) if instance_type else ""
    if not name:
        return QuotaCheck(checked=False, instance_type="", region=region, on_date=on_date, requested=requested)
    quota = quota_total(organization, name, region, on_date)
    if quota is None:
        return QuotaCheck(checked=False, instance_type=name, region=region, on_date=on_date, requested=requested)
    usage = _usage_function()
    if usage is not None and exclude is None:
        left = usage(organization, name, region, on_date)  # the workloads app's figure, same arithmetic
    else:
        left = quota - in_use(organization, name, region, exclude=exclude)
    return QuotaCheck(checked=True, instance_type=name, region=region, on_date=on_date, quota=quota,
                      left=max(left, 0), requested=requested)
