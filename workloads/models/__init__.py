"""Workloads, quotas and capacity, support interactions, enablement."""
from workloads.models.enablement import EnablementAttendance, EnablementSession
from workloads.models.interaction import ChallengeTag, Interaction, InteractionComment

__all__ = ["ChallengeTag", "EnablementAttendance", "EnablementSession", "Interaction", "InteractionComment"]
