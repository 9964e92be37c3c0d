"""NCCL validation started from the portal: every write of a ``ValidationJob`` goes through here.

``start`` makes the job (once per idempotency key, one open job per cluster: a double submit lands on the first);
a worker's ``step`` submits it with ``sbatch`` through SSM on the head node (ParallelCluster) or through the agent
on the controller (HyperPod Slurm, ``validation.agent``) and follows the command until Slurm has the job; the job
posts each output to ``receive`` with its upload token, which reads it with the portal's readers and records a
``ValidationRun`` (or a pair of a pairwise sweep); the last output gives the verdict. ``time_out`` ends jobs that
never report, asking Slurm why; the cancel's worker side, the trend of the runs and the words of what a job found
are in ``validation.slurm``, ``validation.trend`` and ``validation.words``, their names available here too.

A validation job is the "validation" kind of ``portal.core.jobs`` (registered in ``clusters.health.tasks``): one
conditional UPDATE claims the job, a message from an older send claims nothing, and ``recover`` sends jobs the
broker lost. The command id is written as "submitting" before SSM is asked, so a worker killed mid-call leaves
a job that fails visibly instead of running twice.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext

from clusters.choices import ClusterState, Orchestrator
from clusters.health.choices import JOB_OPEN, JobState, RunVerdict, ValidationMode
from clusters.health.ingest import service as services
from clusters.health.models import NodeHealth, ValidationJob, ValidationRun
from clusters.health.readers import nccl
from clusters.health.validation import agent, headnode, slurm_names
from clusters.health.validation import timeline_texts as texts
from clusters.health.validation.slurm import (  # noqa: F401 - part of this module's names
    DONE,
    POLL,
    READY,
    SACCT_FORMAT,
    SUBMITTING,
    SlurmState,
    cancel_step,
    names_step,
    parse_sacct,
    scancel_line,
    slurm_state,
)
from clusters.health.validation.trend import trend  # noqa: F401 - part of this module's names
from clusters.health.validation.words import findings, shown_summary, sweep_of  # noqa: F401 - part of this module's names
from clusters.software import release
from portal.core import access, jobs, locks, provider_errors, timeline
from portal.core.aws import AwsError
from portal.core.choices import Severity, Visibility
from portal.core.jobs import IllegalTransition, registry
from portal.core.jobs.runner import Runner
from portal.core.signals import Hook
from portal.core.stored_text import Message, message
from portal.core.templatetags.portal_display import when

logger = logging.getLogger(__name__)

# The tasks module imports this one: it provides what this module sends (in the health app's ready()).
KIND = Hook("health: the validation jobs' kind of portal.core.jobs", provider="health")
CANCEL = Hook("health: the task that sends scancel for a cancelled validation", provider="health")
ORCHESTRATORS = (Orchestrator.PARALLELCLUSTER, Orchestrator.HYPERPOD)
OPERATIONS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
VERDICT_ORDER = {RunVerdict.FAIL: 3, RunVerdict.WARN: 2, RunVerdict.NONE: 1, RunVerdict.PASS: 0}


class ValidationRefused(ValueError):
    """A validation the portal will not start, with the reason (answered as 400 / the form's error)."""


class OutputRejected(ValueError):
    """An output the job may not post (again): answered with ``status``."""

    def __init__(self, message: str, status: int = 409):
        super().__init__(message)
        self.status = status


def agent_absent(cluster) -> str:
    """Why validation cannot start on HyperPod Slurm now ("" when it can): its agent must have polled lately."""
    return agent.absent(cluster) if cluster.orchestrator == Orchestrator.HYPERPOD else ""


def may_start(user, cluster) -> bool:
    """Lead SAs, customers of the cluster's organization and staff, on a cluster whose cycle is not archived."""
    return access.can_create(user, access.CHANGE, ValidationJob(cluster=cluster))


def may_cancel(user, job: ValidationJob) -> bool:
    """Whoever may start a validation on the job's cluster may cancel it; an archived cycle's job is read-only."""
    return job.is_open and access.can(user, access.CHANGE, job)


def startable(cluster) -> str:
    """Why a validation cannot start on ``cluster`` now ("" when it can)."""
    if cluster.orchestrator not in ORCHESTRATORS:
        return gettext("Validation runs on Slurm clusters (ParallelCluster, HyperPod Slurm) only.")
    if cluster.state != ClusterState.READY:
        return gettext("The cluster is %(state)s: validation needs a ready cluster.") % {
            "state": cluster.get_state_display().lower()}
    return access.archived_refusal(cluster) or agent_absent(cluster)


def known_hosts(cluster) -> list[str]:
    """The cluster's nodes as its health reports name them (the choices of the node set)."""
    return list(NodeHealth.objects.filter(cluster=cluster).order_by("hostname").values_list("hostname", flat=True))


def _stack_versions(cluster) -> tuple[str, str, str]:
    version = cluster.software_version or release.CURRENT_VERSION
    try:
        pinned = {c.name: c.version for c in release.components(version)}
    except ValueError:
        pinned = {}
    return version, pinned.get("nccl", ""), pinned.get("aws_ofi_nccl", "")


def pair_name(a: str, b: str) -> str:
    return f"{a},{b}"


def _expected(mode: str, collectives: list[str], hosts: list[str]) -> list[str]:
    if mode == ValidationMode.PAIRWISE:
        return [pair_name(a, b) for i, a in enumerate(hosts) for b in hosts[i + 1:]]
    return list(collectives)


def start(cluster, *, actor=None, collectives=("all_reduce",), nodes=(), pairwise_sweep: bool = False,
          key: str = "", upload_base: str = "") -> tuple[ValidationJob, bool]:
    """Start a validation of ``cluster``; (job, created). The same key, or any open job of the cluster, is answered
    instead of a second job (one validation at a time: the jobs take their nodes exclusively)."""
    if actor is not None and not may_start(actor, cluster):
        raise PermissionDenied(gettext("Only the organization's customers and lead SAs (and staff) start validations."))
    refusal = startable(cluster)
    if refusal:
        raise ValidationRefused(refusal)
    collectives = [c for c in OPERATIONS if c in set(collectives or ())] or ["all_reduce"]
    unknown = set(collectives) - set(OPERATIONS)
    if unknown:
        raise ValidationRefused(gettext("Unknown operation(s): %(names)s.") % {"names": ", ".join(sorted(unknown))})
    chosen = sorted({n.strip() for n in nodes if n and n.strip()})
    hosts = known_hosts(cluster)
    strangers = sorted(set(chosen) - set(hosts))
    if strangers:
        raise ValidationRefused(gettext("Not nodes of this cluster's health reports: %(names)s.") % {"names": ", ".join(strangers[:5])})
    mode = ValidationMode.PAIRWISE if pairwise_sweep else ValidationMode.COLLECTIVES
    if mode == ValidationMode.PAIRWISE:
        swept = chosen or hosts
        if len(swept) < 2:
            raise ValidationRefused(gettext("A pairwise sweep needs at least two nodes (the portal knows the nodes from the "
                                  "cluster's health reports)."))
        if len(swept) > settings.VALIDATION_PAIRWISE_MAX_NODES:
            raise ValidationRefused(gettext("A pairwise sweep runs every pair: choose at most %(most)s nodes (%(count)s make "
                                  "%(pairs)s pairs).") % {"most": settings.VALIDATION_PAIRWISE_MAX_NODES,
                                                          "count": len(swept),
                                                          "pairs": len(swept) * (len(swept) - 1) // 2})
        chosen = swept
    elif len(chosen) == 1:
        raise ValidationRefused(gettext("A collective test needs at least two nodes: choose two or more, or all of them."))
    base = (settings.PORTAL_BASE_URL or upload_base).rstrip("/")  # http or https: the job posts with a token
    if not base.startswith(("http://", "https://")):
        raise ValidationRefused(gettext("The portal does not know the address the cluster reaches it at (PORTAL_BASE_URL)."))
    version, nccl_version, ofi_version = _stack_versions(cluster)
    key = (key or timezone.now().strftime("start-%Y%m%d%H%M%S%f"))[:128]
    try:
        with transaction.atomic():
            locks.hold("validation", cluster.pk)
            earlier = (ValidationJob.objects.filter(cluster=cluster, key=key).first()
                       or ValidationJob.objects.filter(cluster=cluster, state__in=JOB_OPEN).first())
            if earlier is not None:
                return earlier, False
            job = ValidationJob.objects.create(
                cluster=cluster, requested_by=actor if getattr(actor, "is_authenticated", False) else None, key=key,
                mode=mode, collectives=collectives if mode == ValidationMode.COLLECTIVES else ["all_reduce"],
                nodes=chosen, expected=_expected(mode, collectives, chosen), software_version=version,
                nccl_version=nccl_version, ofi_version=ofi_version, upload_base=base,
                deadline=timezone.now() + timedelta(hours=settings.VALIDATION_TOKEN_HOURS))
            job.cluster = cluster
            _record(job, message(texts.STARTED, cluster=cluster.name, what=texts.what(job)), actor=actor)
            transaction.on_commit(lambda: dispatch(job))
    except IntegrityError:  # the same key raced in on SQLite (no advisory lock): the first one stands
        return ValidationJob.objects.get(cluster=cluster, key=key), False
    return job, True


def dispatch(job: ValidationJob) -> bool:
    """Send the job's task now, numbered so a resend ends an older chain of polls; the sweep retries a miss."""
    return registry.dispatch(KIND.get(), job)


# --- the worker's step -----------------------------------------------------------------------------------

def countdown(job: ValidationJob) -> int:
    """Seconds to the next step: the poll interval, doubled for each throttled call in a row."""
    return min(settings.VALIDATION_POLL_SECONDS * (2 ** job.aws_errors), 300)


class ValidationRunner(Runner):
    """The submission's step on ``portal.core.jobs.runner`` (claim, AWS-error budget, fail or release); it answers the
    countdown to the next step with the outcome."""

    model = ValidationJob
    select_related = ("cluster__organization",)

    def advance(self, job: ValidationJob) -> str:
        return _submit(job)

    def fail(self, job: ValidationJob, error: str, reason: str) -> str:
        return fail(job, error, reason)

    def answer(self, job: ValidationJob, outcome: str) -> tuple[str, int]:
        return outcome, countdown(job)

    def refused(self) -> tuple[str, int]:
        return DONE, 0


RUNNER = ValidationRunner()


def step(job_id: int, attempt: int | None = None) -> tuple[str, int]:
    """Advance the submission once; (POLL, seconds) asks the caller to come back after that countdown."""
    return RUNNER.step(job_id, attempt)


def _upload_url(job: ValidationJob) -> str:
    return job.upload_base + reverse("health-api:validation-output", kwargs={"pk": job.pk})


def _script(job: ValidationJob, token: str) -> str:
    """The job script, naming the chosen nodes as Slurm does (``srun -w``; a pairwise sweep posts its pairs under
    those names, which ``part_of`` reads back as hostnames)."""
    hosts = slurm_names.to_slurm(job.cluster, job.nodes)
    values = {"mode": job.mode, "collectives": " ".join(job.collectives), "hosts": " ".join(hosts),
              "upload_url": _upload_url(job), "upload_token": token, "nccl_version": job.nccl_version,
              "ofi_version": job.ofi_version}
    try:
        return release.validation_script(job.software_version, **values)
    except ValueError:  # a stack older than the validation job template: the current one's
        return release.validation_script(**values)


def submission(job: ValidationJob, script: str) -> headnode.Work:
    """``sbatch`` of the job's script; a chosen node set (collectives mode, Slurm's names) is the allocation."""
    chosen = job.nodes and job.mode == ValidationMode.COLLECTIVES
    return headnode.submission(script, slurm_names.to_slurm(job.cluster, job.nodes) if chosen else [])


def sbatch_line(job: ValidationJob, script: str) -> str:
    return submission(job, script).line


def _submit(job: ValidationJob) -> str:
    cluster = job.cluster
    if cluster.state != ClusterState.READY:
        return fail(job, f"The cluster is {cluster.state}.", "cluster_not_ready")
    if not job.command_id and agent_absent(cluster):  # HyperPod: the agent went quiet since the job started
        return fail(job, agent_absent(cluster), "no_head_node")
    if not job.target:
        try:
            job.target = headnode.target(cluster)
        except AwsError as exc:
            if exc.retryable:
                raise
            return fail(job, str(exc), "no_head_node")
        ValidationJob.objects.filter(pk=job.pk).update(target=job.target)
        return POLL
    if not job.command_id and job.nodes:
        named, why = names_step(job)
        if named != READY:
            return POLL if named == POLL else fail(job, why, "command_failed")
    if not job.command_id:
        token = job.issue_token(timedelta(hours=settings.VALIDATION_TOKEN_HOURS))
        ValidationJob.objects.filter(pk=job.pk).update(command_id=SUBMITTING, token_hash=job.token_hash,
                                                       token_expires=job.token_expires)
        try:
            command_id = headnode.send(cluster, job.target, [submission(job, _script(job, token))],
                                       comment=f"GENIAC validation {job.pk}")
        except AwsError:
            ValidationJob.objects.filter(pk=job.pk).update(command_id="")  # SSM answered: it took nothing
            raise
        job.command_id = command_id
        ValidationJob.objects.filter(pk=job.pk).update(command_id=command_id)
        return POLL
    if job.command_id == SUBMITTING:
        return fail(job, "The worker stopped while sending the sbatch command; whether Slurm got it is unknown.",
                    "command_failed")
    result = headnode.invocation(cluster, job.target, job.command_id)
    if not result.finished:
        return POLL
    slurm_id = headnode.slurm_job_id(result.stdout) if result.status == "Success" else None
    if slurm_id is None:
        return fail(job, f"SSM command {job.command_id} ended {result.status} ({result.exit_status}): "
                         f"{(result.stderr or result.stdout).strip()[:2000]}", "command_failed")
    with transaction.atomic():
        job.transition(JobState.SUBMITTED, slurm_job_id=slurm_id, submitted_at=timezone.now(),
                       deadline=timezone.now() + timedelta(minutes=settings.VALIDATION_TIMEOUT_MINUTES))
    return DONE


def fail(job: ValidationJob, error: str, reason: str, state: str = JobState.FAILED, words: str = "") -> str:
    with transaction.atomic():
        job.refresh_from_db(fields=["state"])
        if job.state not in JOB_OPEN:
            return DONE
        extra = words  # the timeline entry keeps the reason as a code, read in each reader's language
        with translation.override("en"):  # the job keeps English; its page writes it in the reader's (shown_summary)
            words = " ".join(filter(None, [provider_errors.validation_failure(reason), words]))
        job.transition(state, error=error[:5000], failure_reason=reason, summary=words)
        said = message(texts.FAILURE_WITH, reason=reason, words=extra) if extra else message(texts.FAILURE,
                                                                                             reason=reason)
        _record(job, message(texts.TIMED_OUT if state == JobState.TIMED_OUT else texts.FAILED, cluster=job.cluster.name),
                body=said, severity=Severity.HIGH)
    return DONE


def shown_error(job: ValidationJob, user) -> str:
    """The provider's text for lead SAs and staff, the portal's words for customers."""
    if not job.failure_reason:
        return ""
    if access.sees_internal(user, job.cluster.organization_id):
        return job.error
    return shown_summary(job) or provider_errors.validation_failure(job.failure_reason)  # fail() wrote the words


# --- what the job posts ---------------------------------------------------------------------------------

def job_for_token(pk: int, token: str) -> ValidationJob | None:
    """The open job a token belongs to (constant-time hash comparison), or None: unknown, another job's,
    used up (the job is finished) or expired."""
    if ValidationJob.job_id_of(token) != pk:
        return None
    job = ValidationJob.objects.select_related("cluster__organization").filter(pk=pk, state__in=JOB_OPEN).first()
    if job is None or not job.token_matches(token) or job.token_expires is None or job.token_expires < timezone.now():
        return None
    return job


def part_of(job: ValidationJob, collective: str = "", pair: str = "") -> str:
    """The output a post names (``?collective=`` or ``?pair=a,b``), checked against what the job expects."""
    if pair:  # the script names the pair as Slurm does; the job, as people do
        pair = ",".join(slurm_names.to_hostnames(job.cluster, pair.split(",")))
    part = pair if job.mode == ValidationMode.PAIRWISE else collective
    if not part:
        raise OutputRejected("Name the output: ?pair=<host>,<host> for a pairwise sweep, ?collective=<name> otherwise.", 400)
    if part not in job.expected:
        raise OutputRejected(f"This job runs no {part!r}: it expects {', '.join(job.expected[:10])}.", 400)
    if part in job.received:
        raise OutputRejected(f"The output {part!r} was already posted for this job; its token takes each output once.")
    return part


@dataclass
class Received:
    job: ValidationJob
    part: str
    run: ValidationRun | None = None
    pair: dict | None = None


def receive(job: ValidationJob, part: str, text: bytes) -> Received:
    """Read one posted output and record it; the last one finishes the job. Raises ``NcclParseError`` or
    ``services.TooLarge`` (before anything is written) and ``OutputRejected`` for a repeat that raced in."""
    hosts = part.split(",") if job.mode == ValidationMode.PAIRWISE else job.nodes
    collective = "all_reduce" if job.mode == ValidationMode.PAIRWISE else part
    result = services.parse_validation(job.cluster, text, collective, nodes=len(hosts) or None)
    if not result.rows:
        raise nccl.NcclParseError("the output has no result rows (the test did not run?)")
    with transaction.atomic():
        locked = ValidationJob.objects.select_for_update().select_related("cluster__organization").get(pk=job.pk)
        if locked.state not in JOB_OPEN:
            raise OutputRejected("This validation job is finished: its token no longer takes outputs.", 410)
        if part in locked.received:
            raise OutputRejected(f"The output {part!r} was already posted for this job; its token takes each output once.")
        received = Received(locked, part)
        if locked.mode == ValidationMode.PAIRWISE:
            busbw = result.plateau_busbw or result.large_message_busbw or result.peak_busbw
            received.pair = {"hosts": hosts, "busbw": round(busbw, 2), "verdict": result.verdict,
                             "nccl_version": result.nccl_version or "", "ofi_version": result.ofi_version or ""}
            locked.pairs = [*locked.pairs, received.pair]
        else:
            received.run = services.store_validation(locked.cluster, text, result, job=locked,
                                                     notes=f"Validation job {locked.pk} ({locked.what})")
        locked.received = [*locked.received, part]
        if locked.state == JobState.PENDING:  # the job ran before the worker saw sbatch's answer
            locked.transition(JobState.SUBMITTED, submitted_at=timezone.now())
        ValidationJob.objects.filter(pk=locked.pk).update(received=locked.received, pairs=locked.pairs)
        if set(locked.expected) <= set(locked.received):
            _finish(locked)
    return received


def _finish(job: ValidationJob) -> None:
    if job.mode == ValidationMode.PAIRWISE:
        sweep = sweep_of(job)
        verdict = RunVerdict.FAIL if sweep.slow_nodes else (RunVerdict.WARN if sweep.outliers else RunVerdict.PASS)
        summary = sweep.note if not sweep.slow_nodes else f"Slow node: {', '.join(sweep.slow_nodes)}. {sweep.note}."
        said = findings(job, sweep=sweep)
        slow = sweep.slow_nodes
    else:
        runs = list(ValidationRun.objects.filter(job=job).order_by("pk"))
        verdict = max((r.verdict for r in runs), key=lambda v: VERDICT_ORDER[v], default=RunVerdict.NONE)
        summary = "; ".join(f"{r.collective}: {r.get_verdict_display().lower()}, plateau "
                            f"{r.plateau_busbw or 0:.1f} GB/s" + (f" (expected {r.expected_busbw:.0f})"
                                                                  if r.expected_busbw else "") for r in runs)
        said = findings(job, runs=runs)
        slow = []
    job.transition(JobState.DONE, verdict=verdict, summary=summary[:4000], slow_nodes=slow)
    _record(job, message(texts.ENDED[verdict], cluster=job.cluster.name, what=texts.what(job)), body=said,
            severity=services.RUN_SEVERITY[verdict])


def _record(job: ValidationJob, title: Message, *, body: Message | str = "", severity: str = "", actor=None) -> None:
    timeline.record(job.cluster.organization_id, "validation", title, source=job, body=body,
                    visibility=Visibility.SHARED, severity=severity, tags=["nccl", job.cluster.name], actor=actor)


# --- cancelling ----------------------------------------------------------------------------------------

def cancel(job: ValidationJob, actor) -> ValidationJob:
    """End an open job "cancelled" with who and when (compare-and-set: a cancel racing the job's own finish, a
    timeout or a failure leaves whichever came first); the worker then sends ``scancel`` on the head node.
    Raises ``PermissionDenied`` for a user who may not, ``ValidationRefused`` for a finished job."""
    if not access.can(actor, access.CHANGE, job):
        raise PermissionDenied(access.archived_refusal(job)
                               or "Only the organization's customers and lead SAs (and staff) cancel validations.")
    return _cancel(job, actor, f"Cancelled by {actor.get_full_name() or actor.get_username()}.")


def close_archived(cycle, actor=None) -> int:
    """Cancel the open validations of the clusters ``cycle`` keeps as it is archived (inside the archiving
    transaction): nobody may cancel a row of an archived cycle afterwards, and a job left open would keep its nodes
    busy until its time-out. The worker sends ``scancel`` as for any cancel."""
    closed = 0
    for job in ValidationJob.objects.filter(cluster__cycle=cycle, state__in=JOB_OPEN).select_related("cluster"):
        try:
            _cancel(job, actor, f"Cancelled: {cycle.name} was archived.")
        except ValidationRefused:  # it finished meanwhile
            continue
        closed += 1
    return closed


def on_cycle_archived(sender, cycle, actor=None, **kwargs) -> None:
    close_archived(cycle, actor)


def _cancel(job: ValidationJob, actor, summary: str) -> ValidationJob:
    with transaction.atomic():
        job.refresh_from_db(fields=["state"])
        if job.state not in JOB_OPEN:
            raise ValidationRefused(f"Validation {job.pk} is already {job.get_state_display().lower()}: nothing to cancel.")
        try:
            job.transition(JobState.CANCELLED, cancelled_by=actor if getattr(actor, "is_authenticated", False)
                           else None, cancelled_at=timezone.now(), summary=summary)
        except IllegalTransition as exc:
            job.refresh_from_db(fields=["state"])
            raise ValidationRefused(f"Validation {job.pk} is already {job.get_state_display().lower()}: nothing to cancel.") \
                from exc
        _record(job, message(texts.CANCELLED, cluster=job.cluster.name, what=texts.what(job)), actor=actor)
        transaction.on_commit(lambda: dispatch_scancel(job))
    return job


def dispatch_scancel(job: ValidationJob) -> bool:
    return jobs.send(CANCEL.get(), job.pk)


# --- recovery (the jobs' periodic sweep) ----------------------------------------------------------------

def time_out() -> int:
    """Time out the jobs past their deadline with the reason (what Slurm says of a submitted one); answers how many."""
    timed_out = 0
    for job in ValidationJob.objects.filter(state__in=JOB_OPEN, deadline__lt=timezone.now()).select_related("cluster"):
        got = f"{len(job.received)} of {len(job.expected)} outputs received"
        if job.state == JobState.SUBMITTED:
            why = (f"Slurm job {job.slurm_job_id} was submitted at {when(job.submitted_at, True)} and did not "
                   f"post its results within {settings.VALIDATION_TIMEOUT_MINUTES} minutes ({got}).")
            slurm = slurm_state(job)
            why = f"{why} {slurm.sentence}" if slurm else why
        else:
            why = f"The job was never submitted to the cluster before {when(job.deadline, True)} ({got})."
            slurm = None
        fail(job, why, "no_report", state=JobState.TIMED_OUT, words=slurm.words if slurm else "")
        timed_out += 1
    return timed_out


def recover() -> tuple[int, int]:
    """Recover the validation jobs alone (their share of the jobs' periodic ``portal.core.jobs.sweep``; not a
    pairwise sweep, which is a validation's mode): time out the jobs past their deadline, send pending
    jobs the broker lost or whose worker died (no heartbeat for VALIDATION_STUCK_SECONDS, lease run out).
    Returns (timed out, sent)."""
    recovered = registry.recover_kind(KIND.get())
    return recovered.extra, recovered.sent
