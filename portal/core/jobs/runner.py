"""The one step loop of the jobs that work on a provider: claim, advance, count AWS errors, fail or release.

A kind that steps (a launch, a validation's submission, a remediation) subclasses :class:`Runner`, names its model
(a ``portal.core.jobs.models.Job`` whose ``TRANSITIONS`` are its legal moves) and writes one :meth:`Runner.advance`: what
a step does, answering ``POLL`` (come back later) or ``DONE``, and :meth:`Runner.fail`: how the kind fails a row
with an error and a short reason. Everything else is here, once:

- the claim: one conditional UPDATE (claimable, lease free, no later send), so two deliveries never step one row;
- the AWS-error budget: a retryable ``AwsError`` polls again until ``JOB_MAX_AWS_ERRORS`` in a row (or the kind's
  own ``max_aws_errors``), then fails the row; any step that meets no AWS error starts the count again;
- the kind's own failures (``failures``: exceptions carrying a ``reason``) fail the row with that reason;
- an ``IllegalTransition`` means someone else moved the row on while the step ran (a cancel, a time-out, a delete):
  the step stops quietly;
- anything else is a bug or an answer nobody understood: the row fails visibly with "error", never hangs;
- the release: the lease goes and what the step counted is written, in every case (a step that fails still
  releases), and never over a verdict another request reached meanwhile (``Job.release(if_open=True)``).
"""
from __future__ import annotations

import logging
from typing import Any, ClassVar

from django.conf import settings

from portal.core import provider_errors
from portal.core.aws import AwsError
from portal.core.jobs.states import IllegalTransition

logger = logging.getLogger(__name__)

POLL = "poll"
DONE = "done"


class Runner:
    """One kind's step. Subclasses set ``model`` and write ``advance`` and ``fail``; the hooks below default to
    what most kinds want."""

    model: ClassVar[Any]
    # The kind's own budget of retryable AWS errors in a row; None: JOB_MAX_AWS_ERRORS.
    max_aws_errors: ClassVar[int | None] = None
    # The kind's own failures: exceptions with a ``reason`` that fail the row with it.
    failures: ClassVar[tuple[type[Exception], ...]] = ()
    select_related: ClassVar[tuple[str, ...]] = ()
    # The row's fields a step counts, written with the release.
    kept: ClassVar[tuple[str, ...]] = ("polls", "aws_errors")

    # --- what a kind writes ------------------------------------------------------------------------------

    def advance(self, row) -> str:
        """Do the next thing for ``row``; POLL or DONE. Raises ``AwsError``, one of ``failures`` or
        ``IllegalTransition`` for the loop to handle."""
        raise NotImplementedError

    def fail(self, row, error: str, reason: str) -> str:
        """Fail ``row`` with the provider's ``error`` and a short ``reason``; answers DONE."""
        raise NotImplementedError

    # --- hooks ----------------------------------------------------------------------------------------

    def budget(self) -> int:
        return self.max_aws_errors if self.max_aws_errors is not None else settings.JOB_MAX_AWS_ERRORS

    def begin(self, row) -> None:
        """What every claimed step counts before it acts."""
        row.polls += 1

    def retrying(self, row, exc: AwsError) -> None:
        """Note a retryable AWS error the budget still allows (``row.aws_errors`` already counts it)."""

    def aws_reason(self, exc: AwsError) -> str:
        return provider_errors.aws_failure(exc)

    def aws_message(self, row, exc: AwsError) -> str:
        """The error a row fails with once an AWS error ends it."""
        return str(exc)

    def stopped(self, row, exc: IllegalTransition) -> None:
        logger.info("%s %s stopped: %s", self.model.__name__, row.pk, exc)

    def release(self, row, outcome: str) -> str:
        """Drop the lease, writing what the step counted; the step's answer."""
        self.model.release(row.pk, **{name: getattr(row, name) for name in self.kept})
        return outcome

    def answer(self, row, outcome: str) -> Any:
        """What ``step`` answers the task (the outcome; a kind may add its countdown)."""
        return outcome

    def refused(self) -> Any:
        """What ``step`` answers when the claim takes nothing (finished, superseded, or held by another delivery)."""
        return DONE

    # --- the loop ---------------------------------------------------------------------------------------

    def load(self, pk: int):
        return self.model._default_manager.select_related(*self.select_related).get(pk=pk)

    def step(self, pk: int, attempt: int | None = None) -> Any:
        """Advance the row once (see the module's docstring)."""
        if not self.model.claim(pk, attempt):
            return self.refused()
        row = self.load(pk)
        self.begin(row)
        try:
            outcome = self.advance(row)
            row.aws_errors = 0
        except AwsError as exc:
            if exc.retryable and row.aws_errors + 1 < self.budget():
                row.aws_errors += 1
                self.retrying(row, exc)
                outcome = POLL
            else:
                outcome = self.fail(row, self.aws_message(row, exc), self.aws_reason(exc))
        except IllegalTransition as exc:
            self.stopped(row, exc)
            outcome = DONE
        except Exception as exc:
            if isinstance(exc, self.failures):
                outcome = self.fail(row, str(exc), exc.reason)
            else:
                logger.exception("%s %s failed unexpectedly", self.model.__name__, pk)
                outcome = self.fail(row, f"Unexpected error: {type(exc).__name__}: {exc}", "error")
        return self.answer(row, self.release(row, outcome))
