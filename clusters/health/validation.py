"""NCCL validation started from the portal: every write of a ``ValidationJob`` goes through here.

``start`` makes the job (once per idempotency key, and one open job per cluster: a double submit lands on
the first); a worker's ``step`` submits it with ``sbatch`` through SSM on the head node (ParallelCluster)
or the controller node (HyperPod Slurm) and follows the command until Slurm has the job; the job posts
each output to ``receive`` with its upload token, which reads it with the portal's readers and records a
``ValidationRun`` (or a pair of a pairwise sweep); the last output gives the job its verdict. ``sweep``
times out jobs that never report and sends jobs the broker lost.

Submission is leased like a launch step (``clusters/pipeline.py``): one conditional UPDATE claims the job,
a message from an older send claims nothing. The command id is written as "submitting" before SSM is
asked, so a worker killed mid-call leaves a job that fails visibly instead of running twice.
"""
from __future__ import annotations

import logging
import statistics
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from clusters import software
from clusters.choices import ClusterState, Orchestrator
from clusters.health import headnode, nccl, pairwise, services
from clusters.health.choices import JOB_OPEN, JobState, RunVerdict, ValidationMode
from clusters.health.models import IllegalTransition, NodeHealth, ValidationJob, ValidationRun
from portal import access, jobs, locks, provider_errors, timeline
from portal.aws import AwsError
from portal.choices import Severity, Visibility

logger = logging.getLogger(__name__)

POLL = "poll"
DONE = "done"
ORCHESTRATORS = (Orchestrator.PARALLELCLUSTER, Orchestrator.HYPERPOD)
OPERATIONS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
SUBMITTING = "submitting"
VERDICT_ORDER = {RunVerdict.FAIL: 3, RunVerdict.WARN: 2, RunVerdict.NONE: 1, RunVerdict.PASS: 0}


class Refused(ValueError):
    """A validation the portal will not start, with the reason (answered as 400 / the form's error)."""


class Rejected(ValueError):
    """An output the job may not post (again): answered with ``status``."""

    def __init__(self, message: str, status: int = 409):
        super().__init__(message)
        self.status = status


def may_start(user, cluster) -> bool:
    return access.can_in_organization(user, access.CHANGE, ValidationJob, cluster.organization_id)


def may_cancel(user, job: ValidationJob) -> bool:
    """Whoever may start a validation on the job's cluster may cancel it (lead SAs, its customers, staff)."""
    return job.is_open and access.can_in_organization(user, access.CHANGE, ValidationJob, job.cluster.organization_id)


def startable(cluster) -> str:
    """Why a validation cannot start on ``cluster`` now ("" when it can)."""
    if cluster.orchestrator not in ORCHESTRATORS:
        return gettext("Validation runs on Slurm clusters (ParallelCluster, HyperPod Slurm) only.")
    if cluster.state != ClusterState.READY:
        return gettext("The cluster is %(state)s: validation needs a ready cluster.") % {
            "state": cluster.get_state_display().lower()}
    return access.archived_refusal(cluster) or ""


def known_hosts(cluster) -> list[str]:
    """The cluster's nodes as its health reports name them (the choices of the node set)."""
    return list(NodeHealth.objects.filter(cluster=cluster).order_by("hostname").values_list("hostname", flat=True))


def _stack_versions(cluster) -> tuple[str, str, str]:
    version = cluster.software_version or software.CURRENT_VERSION
    try:
        pinned = {c.name: c.version for c in software.components(version)}
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
        raise Refused(refusal)
    collectives = [c for c in OPERATIONS if c in set(collectives or ())] or ["all_reduce"]
    unknown = set(collectives) - set(OPERATIONS)
    if unknown:
        raise Refused(gettext("Unknown operation(s): %(names)s.") % {"names": ", ".join(sorted(unknown))})
    chosen = sorted({n.strip() for n in nodes if n and n.strip()})
    hosts = known_hosts(cluster)
    strangers = sorted(set(chosen) - set(hosts))
    if strangers:
        raise Refused(gettext("Not nodes of this cluster's health reports: %(names)s.") % {"names": ", ".join(strangers[:5])})
    mode = ValidationMode.PAIRWISE if pairwise_sweep else ValidationMode.COLLECTIVES
    if mode == ValidationMode.PAIRWISE:
        swept = chosen or hosts
        if len(swept) < 2:
            raise Refused(gettext("A pairwise sweep needs at least two nodes (the portal knows the nodes from the "
                                  "cluster's health reports)."))
        if len(swept) > settings.VALIDATION_PAIRWISE_MAX_NODES:
            raise Refused(gettext("A pairwise sweep runs every pair: choose at most %(most)s nodes (%(count)s make "
                                  "%(pairs)s pairs).") % {"most": settings.VALIDATION_PAIRWISE_MAX_NODES,
                                                          "count": len(swept),
                                                          "pairs": len(swept) * (len(swept) - 1) // 2})
        chosen = swept
    elif len(chosen) == 1:
        raise Refused(gettext("A collective test needs at least two nodes: choose two or more, or all of them."))
    base = (settings.PORTAL_BASE_URL or upload_base).rstrip("/")  # http or https: the job posts with a token
    if not base.startswith(("http://", "https://")):
        raise Refused(gettext("The portal does not know the address the cluster reaches it at (PORTAL_BASE_URL)."))
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
            _record(job, f"{cluster.name}: NCCL validation ({job.what}) started", actor=actor)
            transaction.on_commit(lambda: dispatch(job))
    except IntegrityError:  # the same key raced in on SQLite (no advisory lock): the first one stands
        return ValidationJob.objects.get(cluster=cluster, key=key), False
    return job, True


def dispatch(job: ValidationJob) -> bool:
    """Send the job's task now, numbered so a resend ends an older chain of polls; the sweep retries a miss."""
    from clusters.health import tasks  # tasks import this module: a real cycle, broken here

    with transaction.atomic():
        attempt = ValidationJob.objects.select_for_update().values_list("attempts", flat=True).get(pk=job.pk) + 1
        ValidationJob.objects.filter(pk=job.pk).update(attempts=attempt)
    ok = jobs.send(tasks.run_validation, job.pk, attempt)
    ValidationJob.objects.filter(pk=job.pk).update(dispatched=ok)
    return ok


# --- the worker's step -----------------------------------------------------------------------------------

def claim(job_id: int, attempt: int | None = None) -> bool:
    now = timezone.now()
    rows = (ValidationJob.objects.filter(pk=job_id, state=JobState.PENDING)
            .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now)))
    if attempt is not None:
        rows = rows.filter(attempts__lte=attempt)
    return bool(rows.update(lease_until=now + timedelta(seconds=settings.VALIDATION_LEASE_SECONDS), heartbeat=now))


def countdown(job: ValidationJob) -> int:
    """Seconds to the next step: the poll interval, doubled for each throttled call in a row."""
    return min(settings.VALIDATION_POLL_SECONDS * (2 ** job.aws_errors), 300)


def step(job_id: int, attempt: int | None = None) -> tuple[str, int]:
    """Advance the submission once; (POLL, seconds) asks the caller to come back after that countdown."""
    if not claim(job_id, attempt):
        return DONE, 0
    job = ValidationJob.objects.select_related("cluster__organization").get(pk=job_id)
    job.polls += 1
    try:
        outcome = _submit(job)
        job.aws_errors = 0
    except AwsError as exc:
        if exc.retryable and job.aws_errors + 1 < settings.VALIDATION_MAX_AWS_ERRORS:
            job.aws_errors += 1
            outcome = POLL
        else:
            reason = "throttling" if exc.retryable else (
                "access_denied" if "AccessDenied" in (exc.code or "") else "provider_refused")
            outcome = fail(job, str(exc), reason)
    except IllegalTransition as exc:  # timed out while this step ran: stop quietly
        logger.info("validation %s stopped: %s", job_id, exc)
        outcome = DONE
    except Exception as exc:  # an answer we do not understand: fail visibly, never hang
        logger.exception("validation %s failed unexpectedly", job_id)
        outcome = fail(job, f"Unexpected error: {type(exc).__name__}: {exc}", "error")
    ValidationJob.objects.filter(pk=job.pk).update(polls=job.polls, aws_errors=job.aws_errors, lease_until=None,
                                                   heartbeat=timezone.now())
    return outcome, countdown(job)


def _upload_url(job: ValidationJob) -> str:
    return job.upload_base + reverse("health-api:validation-output", kwargs={"pk": job.pk})


def _script(job: ValidationJob, token: str) -> str:
    values = {"mode": job.mode, "collectives": " ".join(job.collectives), "hosts": " ".join(job.nodes),
              "upload_url": _upload_url(job), "upload_token": token, "nccl_version": job.nccl_version,
              "ofi_version": job.ofi_version}
    try:
        return software.validation_script(job.software_version, **values)
    except ValueError:  # a stack older than the validation job template: the current one's
        return software.validation_script(**values)


def sbatch_line(job: ValidationJob, script: str) -> str:
    """``sbatch`` of the job's script; a chosen node set (collectives mode) is the allocation."""
    command = headnode.sbatch_command(script)
    if job.nodes and job.mode == ValidationMode.COLLECTIVES:
        command = command.replace("sbatch --parsable",
                                  f"sbatch --parsable --nodes={len(job.nodes)} --nodelist={','.join(job.nodes)}", 1)
    return command


def _submit(job: ValidationJob) -> str:
    cluster = job.cluster
    if cluster.state != ClusterState.READY:
        return fail(job, f"The cluster is {cluster.state}.", "cluster_not_ready")
    if not job.target:
        try:
            job.target = headnode.target(cluster)
        except AwsError as exc:
            if exc.retryable:
                raise
            return fail(job, str(exc), "no_head_node")
        ValidationJob.objects.filter(pk=job.pk).update(target=job.target)
        return POLL
    if not job.command_id:
        token = job.issue_token(timedelta(hours=settings.VALIDATION_TOKEN_HOURS))
        ValidationJob.objects.filter(pk=job.pk).update(command_id=SUBMITTING, token_hash=job.token_hash,
                                                       token_expires=job.token_expires)
        try:
            command_id = headnode.send(cluster, job.target, [sbatch_line(job, _script(job, token))],
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
        words = " ".join(filter(None, [provider_errors.validation_failure(reason), words]))
        job.transition(state, error=error[:5000], failure_reason=reason, summary=words)
        _record(job, f"{job.cluster.name}: NCCL validation {'timed out' if state == JobState.TIMED_OUT else 'failed'}",
                body=words, severity=Severity.HIGH)
    return DONE


def shown_error(job: ValidationJob, user) -> str:
    """The provider's text for lead SAs and staff, the portal's words for customers."""
    if not job.failure_reason:
        return ""
    if access.sees_internal(user, job.cluster.organization_id):
        return job.error
    return job.summary or provider_errors.validation_failure(job.failure_reason)  # fail() wrote the words there


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
    part = pair if job.mode == ValidationMode.PAIRWISE else collective
    if not part:
        raise Rejected("Name the output: ?pair=<host>,<host> for a pairwise sweep, ?collective=<name> otherwise.", 400)
    if part not in job.expected:
        raise Rejected(f"This job runs no {part!r}: it expects {', '.join(job.expected[:10])}.", 400)
    if part in job.received:
        raise Rejected(f"The output {part!r} was already posted for this job; its token takes each output once.")
    return part


@dataclass
class Received:
    job: ValidationJob
    part: str
    run: ValidationRun | None = None
    pair: dict | None = None


def receive(job: ValidationJob, part: str, text: bytes) -> Received:
    """Read one posted output and record it; the last one finishes the job. Raises ``NcclParseError`` or
    ``services.TooLarge`` (before anything is written) and ``Rejected`` for a repeat that raced in."""
    hosts = part.split(",") if job.mode == ValidationMode.PAIRWISE else job.nodes
    collective = "all_reduce" if job.mode == ValidationMode.PAIRWISE else part
    result = services.parse_validation(job.cluster, text, collective, nodes=len(hosts) or None)
    if not result.rows:
        raise nccl.NcclParseError("the output has no result rows (the test did not run?)")
    with transaction.atomic():
        locked = ValidationJob.objects.select_for_update().select_related("cluster__organization").get(pk=job.pk)
        if locked.state not in JOB_OPEN:
            raise Rejected("This validation job is finished: its token no longer takes outputs.", 410)
        if part in locked.received:
            raise Rejected(f"The output {part!r} was already posted for this job; its token takes each output once.")
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


def sweep_of(job: ValidationJob) -> pairwise.Sweep:
    return pairwise.analyse([(tuple(p["hosts"]), p["busbw"]) for p in job.pairs])


def _finish(job: ValidationJob) -> None:
    if job.mode == ValidationMode.PAIRWISE:
        sweep = sweep_of(job)
        verdict = RunVerdict.FAIL if sweep.slow_nodes else (RunVerdict.WARN if sweep.outliers else RunVerdict.PASS)
        summary = sweep.note if not sweep.slow_nodes else f"Slow node: {', '.join(sweep.slow_nodes)}. {sweep.note}."
        slow = sweep.slow_nodes
    else:
        runs = list(ValidationRun.objects.filter(job=job).order_by("pk"))
        verdict = max((r.verdict for r in runs), key=lambda v: VERDICT_ORDER[v], default=RunVerdict.NONE)
        summary = "; ".join(f"{r.collective}: {r.get_verdict_display().lower()}, plateau "
                            f"{r.plateau_busbw or 0:.1f} GB/s" + (f" (expected {r.expected_busbw:.0f})"
                                                                  if r.expected_busbw else "") for r in runs)
        slow = []
    job.transition(JobState.DONE, verdict=verdict, summary=summary[:4000], slow_nodes=slow)
    word = {RunVerdict.PASS: "passed", RunVerdict.WARN: "passed with warnings", RunVerdict.FAIL: "failed",
            RunVerdict.NONE: "finished, not judged"}[verdict]
    _record(job, f"{job.cluster.name}: NCCL validation ({job.what}) {word}", body=summary,
            severity=services.RUN_SEVERITY[verdict])


def _record(job: ValidationJob, title: str, *, body: str = "", severity: str = "", actor=None) -> None:
    timeline.record(job.cluster.organization_id, "validation", title, source=job, body=body,
                    visibility=Visibility.SHARED, severity=severity, tags=["nccl", job.cluster.name], actor=actor)


# --- cancelling ----------------------------------------------------------------------------------------

def cancel(job: ValidationJob, actor) -> ValidationJob:
    """End an open job "cancelled" with who and when (compare-and-set: a cancel racing the job's own finish, a
    timeout or a failure leaves whichever came first); the worker then sends ``scancel`` on the head node.
    Raises ``PermissionDenied`` for a user who may not, ``Refused`` for a finished job."""
    if not access.can_in_organization(actor, access.CHANGE, ValidationJob, job.cluster.organization_id):
        raise PermissionDenied("Only the organization's customers and lead SAs (and staff) cancel validations.")
    with transaction.atomic():
        job.refresh_from_db(fields=["state"])
        if job.state not in JOB_OPEN:
            raise Refused(f"Validation {job.pk} is already {job.get_state_display().lower()}: nothing to cancel.")
        try:
            job.transition(JobState.CANCELLED, cancelled_by=actor, cancelled_at=timezone.now(),
                           summary=f"Cancelled by {actor.get_full_name() or actor.get_username()}.")
        except IllegalTransition as exc:
            job.refresh_from_db(fields=["state"])
            raise Refused(f"Validation {job.pk} is already {job.get_state_display().lower()}: nothing to cancel.") \
                from exc
        _record(job, f"{job.cluster.name}: NCCL validation ({job.what}) cancelled", actor=actor)
        transaction.on_commit(lambda: dispatch_scancel(job))
    return job


def dispatch_scancel(job: ValidationJob) -> bool:
    from clusters.health import tasks  # tasks import this module: a real cycle, broken here

    return jobs.send(tasks.cancel_validation, job.pk)


def scancel_line(slurm_job_id: str) -> str:
    if not slurm_job_id.isdigit():
        raise ValueError(f"not a Slurm job id: {slurm_job_id!r}")
    return f"scancel {slurm_job_id}"


def cancel_step(job_id: int) -> tuple[str, int]:
    """The worker's part of a cancel: find the Slurm job (from the sbatch command's answer if the submission
    was still being followed), send ``scancel`` through SSM, follow it, and keep what the head node said.
    (POLL, seconds) asks to come back; a job whose sbatch never left the portal needs nothing."""
    job = ValidationJob.objects.select_related("cluster__organization").get(pk=job_id)
    if job.state != JobState.CANCELLED or job.scancel and not job.scancel.startswith("sent "):
        return DONE, 0
    cluster = job.cluster
    try:
        if job.scancel.startswith("sent "):
            command_id = job.scancel.removeprefix("sent ")
            result = headnode.invocation(cluster, job.target, command_id)
            if not result.finished:
                return POLL, settings.VALIDATION_POLL_SECONDS
            said = (result.stderr or result.stdout).strip()
            note = (f"scancel {job.slurm_job_id}: done." if result.status == "Success"
                    else f"scancel {job.slurm_job_id}: {said or result.status}")
            ValidationJob.objects.filter(pk=job.pk).update(scancel=note[:300])
            return DONE, 0
        if not job.slurm_job_id:
            sending = job.command_id == SUBMITTING and job.cancelled_at and (
                timezone.now() - job.cancelled_at).total_seconds() < settings.VALIDATION_LEASE_SECONDS
            if sending:  # the worker is inside SendCommand: its command id comes next
                return POLL, settings.VALIDATION_POLL_SECONDS
            if not job.command_id or job.command_id == SUBMITTING or not job.target:
                ValidationJob.objects.filter(pk=job.pk).update(
                    scancel="Nothing to cancel on the cluster: the job had not been submitted.")
                return DONE, 0
            result = headnode.invocation(cluster, job.target, job.command_id)
            if not result.finished:
                return POLL, settings.VALIDATION_POLL_SECONDS
            slurm_id = headnode.slurm_job_id(result.stdout) if result.status == "Success" else None
            if slurm_id is None:
                ValidationJob.objects.filter(pk=job.pk).update(
                    scancel="Nothing to cancel on the cluster: Slurm did not take the job.")
                return DONE, 0
            job.slurm_job_id = slurm_id
            ValidationJob.objects.filter(pk=job.pk).update(slurm_job_id=slurm_id)
        command_id = headnode.send(cluster, job.target, [scancel_line(job.slurm_job_id)],
                                   comment=f"GENIAC validation {job.pk} cancel")
        ValidationJob.objects.filter(pk=job.pk).update(scancel=f"sent {command_id}")
        return POLL, 1
    except AwsError as exc:
        if exc.retryable:
            return POLL, settings.VALIDATION_POLL_SECONDS * 2
        ValidationJob.objects.filter(pk=job.pk).update(scancel=f"scancel not sent: {exc}"[:300])
        return DONE, 0


# --- what Slurm says of a job that never reported ------------------------------------------------------

SACCT_FORMAT = "JobID,State,ExitCode,Reason"


@dataclass(frozen=True)
class SlurmState:
    state: str  # PENDING, RUNNING, COMPLETED, FAILED, NODE_FAIL, CANCELLED by 0, TIMEOUT ... ("" when unknown)
    exit_code: str = ""
    reason: str = ""
    error: str = ""  # why sacct gave no answer

    @property
    def sentence(self) -> str:
        if self.error:
            return f"sacct gave no answer: {self.error}"
        if not self.state:
            return "sacct knows no such job (its accounting may have been purged)."
        reason = f", reason {self.reason}" if self.reason and self.reason != "None" else ""
        exit_code = f", exit code {self.exit_code}" if self.exit_code and self.state not in ("PENDING", "RUNNING") else ""
        return f"sacct: the job is {self.state}{exit_code}{reason}."

    @property
    def words(self) -> str:
        """The same for customers, in the portal's words."""
        if self.error or not self.state:
            return ""
        if self.state == "PENDING":
            return f"Slurm still had it queued ({self.reason or 'waiting'})."
        if self.state == "RUNNING":
            return "Slurm still had it running."
        if self.state == "NODE_FAIL":
            return "Slurm reports that a node failed under the job (NODE_FAIL)."
        return f"Slurm reports it ended {self.state} (exit code {self.exit_code or '?'})."


def parse_sacct(stdout: str, slurm_job_id: str) -> SlurmState:
    """The job's own row of ``sacct -n -P -o JobID,State,ExitCode,Reason`` (steps such as ``1001.batch`` skipped)."""
    for line in stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) >= 3 and parts[0] == slurm_job_id:
            return SlurmState(parts[1].strip(), parts[2].strip(), parts[3].strip() if len(parts) > 3 else "")
    return SlurmState("")


def slurm_state(job: ValidationJob, wait_seconds: float | None = None) -> SlurmState | None:
    """Ask ``sacct`` through SSM on the head node what became of the job (None when it has no Slurm job id).
    Waits up to VALIDATION_SACCT_WAIT_SECONDS for the answer; stops the job with ``scancel`` when it is still
    queued or running, so it cannot run after the portal gave up on it."""
    import time

    if not job.slurm_job_id or not job.target or not job.slurm_job_id.isdigit():
        return None
    cluster = job.cluster
    wait_seconds = settings.VALIDATION_SACCT_WAIT_SECONDS if wait_seconds is None else wait_seconds
    try:
        command_id = headnode.send(cluster, job.target,
                                   [f"sacct -j {job.slurm_job_id} -X -n -P -o {SACCT_FORMAT}"],
                                   comment=f"GENIAC validation {job.pk} sacct")
        give_up = time.monotonic() + wait_seconds
        while True:
            result = headnode.invocation(cluster, job.target, command_id)
            if result.finished or time.monotonic() >= give_up:
                break
            time.sleep(0.5)
    except AwsError as exc:
        return SlurmState("", error=str(exc)[:300])
    if not result.finished:
        return SlurmState("", error=f"SSM command {command_id} still {result.status} after {wait_seconds:.0f} s")
    if result.status != "Success":
        return SlurmState("", error=(result.stderr or result.stdout).strip()[:300] or result.status)
    found = parse_sacct(result.stdout, job.slurm_job_id)
    if found.state in ("PENDING", "RUNNING"):
        try:
            headnode.send(cluster, job.target, [scancel_line(job.slurm_job_id)],
                          comment=f"GENIAC validation {job.pk} timed out")
        except AwsError:
            logger.warning("validation %s: scancel after the timeout was not sent", job.pk)
    return found


# --- the sweep ------------------------------------------------------------------------------------------

def sweep() -> tuple[int, int]:
    """Time out the jobs past their deadline with the reason; send pending jobs the broker lost or whose worker
    died (no heartbeat for VALIDATION_STUCK_SECONDS, lease run out). Returns (timed out, sent)."""
    now = timezone.now()
    timed_out = 0
    for job in ValidationJob.objects.filter(state__in=JOB_OPEN, deadline__lt=now).select_related("cluster"):
        got = f"{len(job.received)} of {len(job.expected)} outputs received"
        if job.state == JobState.SUBMITTED:
            why = (f"Slurm job {job.slurm_job_id} was submitted at {job.submitted_at:%Y-%m-%d %H:%M} UTC and did not "
                   f"post its results within {settings.VALIDATION_TIMEOUT_MINUTES} minutes ({got}).")
            slurm = slurm_state(job)
            why = f"{why} {slurm.sentence}" if slurm else why
        else:
            why = f"The job was never submitted to the cluster before {job.deadline:%Y-%m-%d %H:%M} UTC ({got})."
            slurm = None
        fail(job, why, "no_report", state=JobState.TIMED_OUT,
             words=slurm.words if slurm else "")
        timed_out += 1
    stale = now - timedelta(seconds=settings.VALIDATION_STUCK_SECONDS)
    rows = (ValidationJob.objects.filter(state=JobState.PENDING)
            .filter(Q(dispatched=False)
                    | (Q(heartbeat__lt=stale) | Q(heartbeat__isnull=True, created_at__lt=stale))
                    & (Q(lease_until__isnull=True) | Q(lease_until__lt=now))))
    sent = 0
    for job in rows:
        if dispatch(job):
            sent += 1
            ValidationJob.objects.filter(pk=job.pk).update(heartbeat=now)
    return timed_out, sent


# --- the trend ------------------------------------------------------------------------------------------

def _plain_version(value: str) -> str:
    """``v2.27.7-1`` and ``2.27.7+cuda12.8`` are both NCCL 2.27.7; ``v1.16.3`` is aws-ofi-nccl 1.16.3."""
    value = (value or "").strip().lstrip("v")
    return value.split("+")[0].split("-")[0] if value else ""


def trend(runs, collective: str = "all_reduce") -> dict:
    """Plateau bus bandwidth over time keyed by (NCCL, aws-ofi-nccl) versions, oldest first, from ``runs``
    (a restricted queryset of one cluster's runs). A version whose median falls more than
    VALIDATION_REGRESSION_SHARE under the previous version's median is flagged as a regression."""
    rows = (runs.filter(collective=collective, plateau_busbw__isnull=False).order_by("uploaded_at", "pk")
            .values_list("pk", "uploaded_at", "plateau_busbw", "nodes", "verdict", "nccl_version", "ofi_version",
                         "job__nccl_version", "job__ofi_version")[:500])
    points, groups = [], {}
    for pk, at, busbw, nodes, verdict, nccl_v, ofi_v, job_nccl, job_ofi in rows:
        key = (_plain_version(nccl_v or job_nccl) or "unknown", _plain_version(ofi_v or job_ofi) or "unknown")
        points.append({"run": pk, "at": at, "plateau_busbw": busbw, "nodes": nodes, "verdict": verdict,
                       "nccl_version": key[0], "ofi_version": key[1]})
        groups.setdefault(key, []).append(busbw)
    versions, previous = [], None
    for (nccl_v, ofi_v), values in groups.items():  # in order of first appearance
        median = statistics.median(values)
        change = (median - previous) / previous if previous else None
        versions.append({"nccl_version": nccl_v, "ofi_version": ofi_v, "runs": len(values), "median": round(median, 2),
                         "change": None if change is None else round(change, 4),
                         "regression": change is not None and change < -settings.VALIDATION_REGRESSION_SHARE})
        previous = median
    return {"collective": collective, "points": points, "versions": versions,
            "regression": any(v["regression"] for v in versions[-1:])}
