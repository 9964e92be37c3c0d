"""What the interactions package asks of the engagement app, which sits above it: raising an escalation, the
escalations an interaction page lists, the Slack channels a customer may ask in. Each is a hook declared here and
provided by engagement's ``ready()``, so this package imports nothing above its layer, and a call that nobody
provided raises instead of answering nothing (``portal.core.signals.Hook``)."""
from __future__ import annotations

from portal.core.signals import Hook

# (interaction, actor, target, question) -> the new escalation
RAISE_ESCALATION = Hook("interactions: raise an escalation", provider="engagement")
# (user, interaction) -> the escalations the user sees, for the page
ESCALATIONS_OF = Hook("interactions: the escalations of an interaction", provider="engagement")
# (organization ids) -> the customer-facing channel links
CUSTOMER_CHANNELS = Hook("interactions: the customer channels to ask in", provider="engagement")
