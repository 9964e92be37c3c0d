"""What validation jobs write on the organization's timeline, as codes with parameters (``portal.core.stored_text``),
read in each reader's language: the job's start, end and verdict, and the sweep's or the collectives' findings."""
from __future__ import annotations

from django.utils.translation import gettext_noop

from clusters.health.choices import RunVerdict, ValidationMode
from portal.core import provider_errors
from portal.core.stored_text import Message, decimal1, define, lines, message, number


def verdict_label(value) -> str:
    """'pass', 'fail': a run's verdict in the middle of a sentence."""
    try:
        return str(RunVerdict(value).label).lower()
    except ValueError:
        return str(value)


def percent(value) -> str:
    return f"{number(round(value * 100))}%" if isinstance(value, int | float) else str(value)


PAIRWISE = define("validation.pairwise_sweep", gettext_noop("pairwise sweep"))
STARTED = define("validation.started", gettext_noop("%(cluster)s: NCCL validation (%(what)s) started"))
CANCELLED = define("validation.cancelled", gettext_noop("%(cluster)s: NCCL validation (%(what)s) cancelled"))
FAILED = define("validation.failed", gettext_noop("%(cluster)s: NCCL validation failed"))
TIMED_OUT = define("validation.timed_out", gettext_noop("%(cluster)s: NCCL validation timed out"))
FAILURE = define("validation.failure", "%(reason)s", {"reason": provider_errors.validation_failure})
FAILURE_WITH = define("validation.failure_with", "%(reason)s %(words)s",
                      {"reason": provider_errors.validation_failure})
ENDED = {
    RunVerdict.PASS: define("validation.passed", gettext_noop("%(cluster)s: NCCL validation (%(what)s) passed")),
    RunVerdict.WARN: define("validation.passed_with_warnings",
                            gettext_noop("%(cluster)s: NCCL validation (%(what)s) passed with warnings")),
    RunVerdict.FAIL: define("validation.job_failed", gettext_noop("%(cluster)s: NCCL validation (%(what)s) failed")),
    RunVerdict.NONE: define("validation.not_judged",
                            gettext_noop("%(cluster)s: NCCL validation (%(what)s) finished, not judged")),
}
FINDINGS = define("validation.findings", "%(lines)s", {"lines": lines})
COLLECTIVE = define("validation.collective", gettext_noop("%(collective)s: %(verdict)s, plateau %(busbw)s GB/s"),
                    {"verdict": verdict_label, "busbw": decimal1})
COLLECTIVE_EXPECTED = define(
    "validation.collective_expected",
    gettext_noop("%(collective)s: %(verdict)s, plateau %(busbw)s GB/s (expected %(expected)s)"),
    {"verdict": verdict_label, "busbw": decimal1, "expected": number})
NO_PAIR = define("validation.no_pair", gettext_noop("no pair has reported yet"))
ALL_WITHIN = define("validation.all_within", gettext_noop("every pair within %(below)s of the median pair"),
                    {"below": percent})
ONE_SLOW = define("validation.one_slow_node", gettext_noop(
    "%(node)s is in every slow pair (%(slow)s of %(pairs)s pairs more than %(below)s under the median pair's "
    "%(median)s GB/s)"), {"slow": number, "pairs": number, "below": percent, "median": decimal1})
SLOW_PAIRS = define("validation.slow_pairs", gettext_noop(
    "%(slow)s slow pair(s) with no single node common to all of them: the fabric or several nodes, look at the "
    "pairs"), {"slow": number})
SLOW_NODE = define("validation.slow_node", gettext_noop("Slow node: %(nodes)s. %(note)s."))


def what(job) -> Message | str:
    """The job's subject: "pairwise sweep" (words) or its collectives (names)."""
    return message(PAIRWISE) if job.mode == ValidationMode.PAIRWISE else ", ".join(job.collectives)


def sweep_note(sweep, below: float) -> Message:
    """The sweep's finding (``pairwise.analyse``) as a message."""
    if not sweep.pairs:
        return message(NO_PAIR)
    if not sweep.outliers:
        return message(ALL_WITHIN, below=below)
    if sweep.slow_nodes:
        return message(ONE_SLOW, node=sweep.slow_nodes[0], slow=len(sweep.outliers), pairs=len(sweep.pairs),
                       below=below, median=sweep.median)
    return message(SLOW_PAIRS, slow=len(sweep.outliers))
