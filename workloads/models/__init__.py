"""Models of the workloads app: each area keeps its own module."""
from workloads.models.quota import CapacityReservation, ExpiryWarning, InstanceQuota, QuotaChangeRequest
from workloads.models.spend import CostDay, CostFetch
from workloads.models.workload import Workload

__all__ = [
    "CapacityReservation", "CostDay", "CostFetch", "ExpiryWarning", "InstanceQuota", "QuotaChangeRequest", "Workload",
]
