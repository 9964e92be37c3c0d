"""The engagement app's models: escalations, outcomes and the Slack bridge (program cycles and specialist teams
are the core's, in ``portal.core.models``)."""
from portal.engagement.models.escalation import Escalation
from portal.engagement.models.outcome import Milestone, TrainedModel
from portal.engagement.models.slack import SlackCapture, SlackChannelLink, SlackThread, SlackUserLink

__all__ = [
    "Escalation", "Milestone", "SlackCapture", "SlackChannelLink", "SlackThread", "SlackUserLink", "TrainedModel",
]
