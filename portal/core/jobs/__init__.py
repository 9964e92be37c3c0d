"""Background jobs: one way to dispatch work, one job model, one sweep over the kinds of job.

- ``dispatch`` (re-exported here): sending a task after commit so that a Redis outage never loses the work nor
  holds a request (``send``, ``send_on_commit``, ``is_outage``, ``BROKER_ERRORS``).
- ``models.Job``: the abstract model every background job's row extends (dispatch time, attempts, lease,
  heartbeat, error) with its claim, finish, fail and release.
- ``states``: the state table a lifecycle declares (its legal moves) and its one compare-and-set move, raising
  the one ``IllegalTransition`` (re-exported here).
- ``runner``: the one step loop of a kind that works on a provider (claim, advance, AWS-error budget, fail or
  release); each kind writes its ``advance``.
- ``registry``: the kinds of job (each app registers its own) and the one sweep that sends what the broker
  missed and what a dead worker held, plus what each kind's sweep does besides.

docs/DEVELOPING.md ("Background jobs") says how to add a kind.
"""
from portal.core.jobs.dispatch import BROKER_ERRORS, is_outage, logger, send, send_on_commit
from portal.core.jobs.states import IllegalTransition

__all__ = ["BROKER_ERRORS", "IllegalTransition", "is_outage", "logger", "send", "send_on_commit"]
