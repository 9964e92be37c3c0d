from portal.engagement.models.cycle import Cycle, CycleCarry, CycleParticipation, active_cycle_id, cycle_field
from portal.engagement.models.escalation import Escalation, EscalationTarget, Specialist
from portal.engagement.models.outcome import Milestone, TrainedModel
from portal.engagement.models.slack import SlackCapture, SlackChannelLink, SlackThread, SlackUserLink

__all__ = [
    "Cycle", "CycleCarry", "CycleParticipation",
    "Escalation", "EscalationTarget", "Milestone", "SlackCapture", "SlackChannelLink", "SlackThread",
    "SlackUserLink", "Specialist", "TrainedModel",
    "active_cycle_id", "cycle_field",
]
