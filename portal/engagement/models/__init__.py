from portal.engagement.models.cycle import Cycle, CycleParticipation, active_cycle_id, cycle_field
from portal.engagement.models.escalation import Escalation, EscalationTarget, Specialist
from portal.engagement.models.outcome import Milestone, TrainedModel

__all__ = [
    "Cycle", "CycleParticipation", "Escalation", "EscalationTarget", "Milestone", "Specialist", "TrainedModel",
    "active_cycle_id", "cycle_field",
]
