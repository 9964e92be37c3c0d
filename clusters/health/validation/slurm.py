"""What a validation job asks Slurm on the cluster's head node (SSM; HyperPod: the controller agent), besides submitting it:
the node names of the chosen hostnames (``names_step``), ``scancel`` for a cancelled job (the worker's side of a cancel,
``cancel_step``) and ``sacct`` for a job that never reported (``slurm_state``, which stops the job when it is still
queued or running)."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from clusters.health.choices import JobState
from clusters.health.models import ValidationJob
from clusters.health.validation import headnode, slurm_names
from portal.core.aws import AwsError
from portal.core.jobs.runner import DONE, POLL

logger = logging.getLogger("clusters.health.validation.service")

SUBMITTING = "submitting"


READY = "ready"


def names_step(job: ValidationJob) -> tuple[str, str]:
    """Make sure Slurm's names of the job's chosen hostnames are known before ``sbatch --nodelist``: (READY, "") when
    they are, (POLL, "") while the head node lists them, ("failed", why) when it could not or a host is not listed.
    One step sends the listing (``slurm_names.COMMAND``), a later one reads and stores it."""
    try:
        slurm_names.to_slurm(job.cluster, job.nodes)
        if not job.names_command:
            return READY, ""
    except slurm_names.Unknown:
        if not job.names_command:
            command_id = headnode.send(job.cluster, job.target, [headnode.listing()],
                                       comment=f"GENIAC validation {job.pk}: node names")
            ValidationJob.objects.filter(pk=job.pk).update(names_command=command_id)
            job.names_command = command_id
            return POLL, ""
    result = headnode.invocation(job.cluster, job.target, job.names_command)
    if not result.finished:
        return POLL, ""
    ValidationJob.objects.filter(pk=job.pk).update(names_command="")
    job.names_command = ""
    if result.status != "Success":
        return "failed", f"Listing Slurm's nodes ended {result.status}: {(result.stderr or result.stdout)[:2000]}"
    try:
        slurm_names.store(job.cluster, slurm_names.parse(result.stdout))
        slurm_names.to_slurm(job.cluster, job.nodes)
    except ValueError as exc:  # Unknown is one
        return "failed", str(exc)
    return READY, ""


def scancel_line(slurm_job_id: str) -> str:
    return headnode.scancel(slurm_job_id).line


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
        command_id = headnode.send(cluster, job.target, [headnode.scancel(job.slurm_job_id)],
                                   comment=f"GENIAC validation {job.pk} cancel")
        ValidationJob.objects.filter(pk=job.pk).update(scancel=f"sent {command_id}")
        return POLL, 1
    except AwsError as exc:
        if exc.retryable:
            return POLL, settings.VALIDATION_POLL_SECONDS * 2
        ValidationJob.objects.filter(pk=job.pk).update(scancel=f"scancel not sent: {exc}"[:300])
        return DONE, 0


# --- what Slurm says of a job that never reported ------------------------------------------------------

SACCT_FORMAT = headnode.SACCT_FORMAT


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
    if not job.slurm_job_id or not job.target or not job.slurm_job_id.isdigit():
        return None
    cluster = job.cluster
    wait_seconds = settings.VALIDATION_SACCT_WAIT_SECONDS if wait_seconds is None else wait_seconds
    try:
        command_id = headnode.send(cluster, job.target,
                                   [headnode.sacct(job.slurm_job_id)],
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
            headnode.send(cluster, job.target, [headnode.scancel(job.slurm_job_id)],
                          comment=f"GENIAC validation {job.pk} timed out")
        except AwsError:
            logger.warning("validation %s: scancel after the timeout was not sent", job.pk)
    return found
