from portal.engagement.models.escalation import Escalation, EscalationTarget, Specialist
from portal.engagement.models.outcome import Milestone, TrainedModel

__all__ = ["Escalation", "EscalationTarget", "Milestone", "Specialist", "TrainedModel"]
