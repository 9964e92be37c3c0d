"""The quota guard a launch (or a retry) must pass: the organization's quota for its instance type,
region and date, against what its clusters hold.

The figures belong to the workloads app and come from one function, ``workloads.usage.quota_standing``.
Called with ``lock=True`` inside the launch transaction, the check and the insert that depends on it
happen under the organization's quota lock, so concurrent launches cannot all pass on the same figure.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.utils import timezone

from portal.core import instance_types
from workloads.usage import quota_standing


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
            return "quota not checked: this blueprint launches no instances"
        if self.allowed:
            return (f"{self.requested} × {self.instance_type} in {self.region} on {self.on_date}: "
                    f"{self.left} of {self.quota} left")
        return (f"{self.requested} × {self.instance_type} requested in {self.region} on {self.on_date}, "
                f"but only {self.left} of the organization's quota of {self.quota} are left")


def check_quota(organization, instance_type: str, region: str, requested: int,
                on_date: datetime.date | None = None, *, lock: bool = False) -> QuotaCheck:
    """May ``organization`` hold ``requested`` more instances? ``lock=True`` only inside a transaction."""
    on_date = on_date or timezone.localdate()
    name = instance_types.normalize(instance_type) if instance_type else ""
    if not name:
        return QuotaCheck(checked=False, instance_type="", region=region, on_date=on_date, requested=requested)
    standing = quota_standing(organization, name, region, on_date, lock=lock)
    return QuotaCheck(checked=True, instance_type=name, region=region, on_date=on_date, quota=standing.total,
                      left=max(standing.left, 0), requested=requested)
