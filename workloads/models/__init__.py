"""Models of the workloads app: each area keeps its own module."""
from workloads.models.quota import CapacityReservation, ExpiryWarning, InstanceQuota, QuotaChangeRequest
from workloads.models.workload import Workload

__all__ = ["CapacityReservation", "ExpiryWarning", "InstanceQuota", "QuotaChangeRequest", "Workload"]
