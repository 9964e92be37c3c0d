"""What escalations write on the organization's timeline, as codes with parameters (``portal.core.stored_text``),
read in each reader's language."""
from __future__ import annotations

from django.utils.translation import gettext_noop

from portal.core.stored_text import define
from portal.engagement.choices import EscalationState


def state_label(value) -> str:
    """'accepted', 'answered': an escalation's state in the middle of a sentence."""
    try:
        return str(EscalationState(value).label).lower()
    except ValueError:
        return str(value)


ESCALATED = define("escalation.raised", gettext_noop("Escalated to %(target)s: %(summary)s"))
ESCALATION_MOVED = define("escalation.state_changed", gettext_noop("Escalation to %(target)s %(state)s: %(summary)s"),
                          {"state": state_label})
