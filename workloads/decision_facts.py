"""What a program manager needs on the page when deciding a quota change request: the organization's current
use and quota of that instance type, the program's pool of it, and the organization's reservations.

Read-only figures for the page; the decision itself (and its checks) is ``workloads.services.decide``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.utils import timezone

from workloads import usage
from workloads.models import CapacityReservation, QuotaChangeRequest
from workloads.validators import base_instance_type


@dataclass
class DecisionFacts:
    instance_type: str
    region: str
    used: int
    quota: int
    program_quota: int
    program_used: int
    program_organizations: int
    requested: int
    current: int
    reservations: list = field(default_factory=list)

    @property
    def program_quota_after(self) -> int:
        """The program's total quota of this type if the request is approved."""
        return self.program_quota - self.current + self.requested


def for_request(req: QuotaChangeRequest, user) -> DecisionFacts:
    instance_type = base_instance_type(req.instance_type_name or (req.quota.instance_type_name if req.quota else ""))
    region = req.region or (req.quota.region if req.quota else "")
    program = next((t for t in usage.program_totals(usage.usage_rows(user)) if t.instance_type_name == instance_type),
                   None)
    reservations = list(
        CapacityReservation.objects.restrict(user).filter(
            organization=req.organization, instance_type_name__in=[instance_type, f"ml.{instance_type}"],
            end__gte=timezone.localdate()).order_by("end"))
    return DecisionFacts(
        instance_type=instance_type, region=region,
        used=usage.held_for(req.organization, instance_type, region),
        quota=usage.quota_total_for(req.organization, instance_type, region),
        program_quota=program.quota if program else 0, program_used=program.used if program else 0,
        program_organizations=program.organizations if program else 0,
        requested=req.requested_count, current=req.current_count, reservations=reservations,
    )
