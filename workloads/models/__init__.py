"""Models of the workloads app: each area keeps its own module."""
from workloads.interactions.models import ChallengeTag, Interaction, InteractionComment
from workloads.models.enablement import EnablementAttendance, EnablementSession
from workloads.models.quota import CapacityReservation, ExpiryWarning, InstanceQuota, QuotaChangeRequest
from workloads.models.spend import CostDay, CostFetch
from workloads.models.workload import Workload

__all__ = [
    "CapacityReservation", "ChallengeTag", "CostDay", "CostFetch", "EnablementAttendance", "EnablementSession", "ExpiryWarning",
    "InstanceQuota", "Interaction", "InteractionComment", "QuotaChangeRequest", "Workload",
]
