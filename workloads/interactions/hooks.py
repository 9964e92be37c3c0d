"""What the interactions package asks of the engagement app, which sits above it: raising an escalation, the
escalations an interaction page lists, the Slack channels a customer may ask in. Engagement provides them in its
``ready()``, so this package imports nothing above its layer; without a provider there is nothing to list."""
from __future__ import annotations

from collections.abc import Callable

_PROVIDED: dict[str, Callable] = {}

RAISE_ESCALATION = "raise_escalation"  # (interaction, actor, target, question) -> the new escalation
ESCALATIONS_OF = "escalations_of"  # (user, interaction) -> the escalations the user sees, for the page
CUSTOMER_CHANNELS = "customer_channels"  # (organization ids) -> the customer-facing channel links


def provide(name: str, function: Callable) -> None:
    _PROVIDED[name] = function


def call(name: str, *args, default=None, **kwargs):
    """The provided function's answer; ``default`` when nothing provides ``name``."""
    function = _PROVIDED.get(name)
    return default if function is None else function(*args, **kwargs)
