"""A signal for interaction rows updated without ``save()`` (the services' queryset updates of
``resolved_at`` and the like), so whoever keeps figures of interactions (the weekly review's
pre-aggregates) recounts in the same transaction. ``save()`` and ``delete()`` send Django's own signals."""
from __future__ import annotations

from django.dispatch import Signal

interaction_written = Signal()  # sender=Interaction, instance=the interaction whose row was updated


def written(interaction) -> None:
    """Call after updating ``interaction``'s row with ``QuerySet.update()``, inside the same transaction."""
    interaction_written.send(sender=type(interaction), instance=interaction)
