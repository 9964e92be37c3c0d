"""What a validation job found, in words: the sweep's analysis of its pairs, its findings as a message stored on the
timeline, and the summary its page shows in the reader's language (the job row keeps English)."""
from __future__ import annotations

from django.utils import translation

from clusters.health.choices import JobState, ValidationMode
from clusters.health.models import ValidationJob, ValidationRun
from clusters.health.validation import pairwise
from clusters.health.validation import timeline_texts as texts
from portal.core import provider_errors
from portal.core.stored_text import Message, message


def sweep_of(job: ValidationJob) -> pairwise.Sweep:
    return pairwise.analyse([(tuple(p["hosts"]), p["busbw"]) for p in job.pairs])



def findings(job: ValidationJob, *, sweep: pairwise.Sweep | None = None, runs: list | None = None) -> Message:
    """What a finished job found, as a message: the sweep's slow node or pairs, or each collective's verdict and
    plateau (``runs``: its runs, read when not given)."""
    if job.mode == ValidationMode.PAIRWISE:
        sweep = sweep or sweep_of(job)
        found = texts.sweep_note(sweep, pairwise.OUTLIER_BELOW)
        return found if not sweep.slow_nodes else message(texts.SLOW_NODE, nodes=sweep.slow_nodes, note=found)
    if runs is None:
        runs = list(ValidationRun.objects.filter(job=job).order_by("pk"))
    return message(texts.FINDINGS, lines=[
        message(texts.COLLECTIVE_EXPECTED, collective=r.collective, verdict=r.verdict, busbw=r.plateau_busbw or 0,
                expected=round(r.expected_busbw)) if r.expected_busbw else
        message(texts.COLLECTIVE, collective=r.collective, verdict=r.verdict, busbw=r.plateau_busbw or 0)
        for r in runs])


def shown_summary(job: ValidationJob, *, sweep: pairwise.Sweep | None = None, runs: list | None = None) -> str:
    """The job's summary in the reader's language: a finished job's findings and a failed one's reason are written
    from its facts; what the job keeps in other words (a cancellation's, Slurm's) is shown as stored."""
    if job.state == JobState.DONE and job.verdict:
        return str(findings(job, sweep=sweep, runs=runs))
    if job.failure_reason and job.state in (JobState.FAILED, JobState.TIMED_OUT):
        with translation.override("en"):
            reason = str(provider_errors.validation_failure(job.failure_reason))
        if job.summary == reason or job.summary.startswith(reason + " "):
            words = job.summary[len(reason):].strip()
            said = (message(texts.FAILURE_WITH, reason=job.failure_reason, words=words) if words
                    else message(texts.FAILURE, reason=job.failure_reason))
            return str(said)
    return job.summary
