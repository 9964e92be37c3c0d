"""The state table every lifecycle in the portal keeps: its legal moves, and each move one compare-and-set.

A model declares its status field (``STATUS_FIELD``), its table of legal moves (``TRANSITIONS``: each state to the
states it may go to; a state with none is final) and, if it has one, the field stamped when it reaches a final state
(``FINISHED_FIELD``). :meth:`Lifecycle.move` refuses a move the table does not hold, and writes an allowed one as one
conditional UPDATE on the state this copy read: a stale copy never overwrites a newer state, it reloads and raises.
Both raise :class:`IllegalTransition` (a lost race a subclass of it where the model names one, ``CHANGED``); a step
of a job treats it as "someone else moved the row on": stop quietly (``portal.core.jobs.runner``).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping

from django.utils import timezone


class IllegalTransition(Exception):
    """A move the lifecycle does not allow, or one another request or worker made first."""


class Lifecycle:
    """A mixin for a model with a guarded state (``Job`` kinds and the cluster's own lifecycle)."""

    STATUS_FIELD = "status"
    TRANSITIONS: Mapping[str, Collection[str]] = {}
    FINISHED_FIELD = ""
    # What a lost race raises (a subclass of IllegalTransition the callers may tell apart), and what it reloads.
    CHANGED: type[IllegalTransition] = IllegalTransition
    RELOADED: tuple[str, ...] = ()

    def can_transition(self, to: str) -> bool:
        return to in self.TRANSITIONS.get(getattr(self, self.STATUS_FIELD), ())

    def is_final(self, state: str) -> bool:
        return not self.TRANSITIONS.get(state)

    def lifecycle_name(self) -> str:
        """How an illegal move names the row (in logs and errors)."""
        return f"{type(self).__name__} {self.pk}"

    def move(self, to: str, **fields) -> str:
        """Move to ``to`` (compare-and-set on the state this copy read), writing ``fields`` with it; answers the
        state it left. A final state stamps ``FINISHED_FIELD`` unless the caller gave it."""
        previous = getattr(self, self.STATUS_FIELD)
        if not self.can_transition(to):
            raise IllegalTransition(f"{self.lifecycle_name()}: {previous} → {to} is not allowed")
        if self.FINISHED_FIELD and self.is_final(to):
            fields.setdefault(self.FINISHED_FIELD, timezone.now())
        moved = type(self)._default_manager.filter(pk=self.pk, **{self.STATUS_FIELD: previous}).update(
            **{self.STATUS_FIELD: to}, **fields)
        if not moved:
            self.refresh_from_db(fields=[self.STATUS_FIELD, *self.RELOADED])
            raise self.CHANGED(f"{self.lifecycle_name()}: expected {previous}, "
                               f"found {getattr(self, self.STATUS_FIELD)}; {to} not applied")
        setattr(self, self.STATUS_FIELD, to)
        for name, value in fields.items():
            setattr(self, name, value)
        return previous
