"""One step of a launch job, run by the Celery task: look at CloudFormation, move the state on.

A step is idempotent: it reads the job, the cluster and CloudFormation, does the next thing, and
says whether to poll again. A stack that exists under our name with our launch tag is ours (a
worker killed between ``create_stack`` and saving its id adopts it on the next step). A lease on
the job keeps two deliveries of the same job from stepping it at once; the send number a message
carries ends an older chain of polls once the sweep has sent the job again. Every write of the
cluster's state is a compare-and-set (``Cluster.transition``) and the job is saved only while it is
still open, so a step never writes over a delete or a retry that happened while it ran. Past its
deadline a job fails the cluster with a reason instead of polling on. The loop (claim, AWS-error budget, fail or
release) is ``portal.core.jobs.runner``'s; this module writes the launch's ``advance``.
"""
from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from clusters.blueprints import catalog
from clusters.choices import STACK_DONE, STACK_FAILED, ClusterJobKind, ClusterState, JobStatus
from clusters.launches.backend import LAUNCH_TAG, CloudFormation
from clusters.launches.pipeline import provisioning
from clusters.launches.pipeline import software_upload as uploads
from clusters.models import Cluster, LaunchJob, Stack, StackEvent, StateChanged
from portal.core.aws import AwsError
from portal.core.jobs import IllegalTransition
from portal.core.jobs.runner import DONE, POLL, Runner
from portal.core.templatetags.portal_display import when

logger = logging.getLogger(__name__)

# Failure groups shown on the launch-day board.
REASONS = {
    "access_denied": "Access denied on the organization's role",
    "throttling": "AWS throttled the requests",
    "parameter": "Template parameter missing or invalid",
    "stack_failed": "A stack resource failed",
    "name_taken": "Stack name taken by a stack that is not ours",
    "delete_failed": "A stack could not be deleted",
    "dashboards": "The dashboards could not be put in Grafana",
    "kubernetes": "The software stack could not be applied in the EKS cluster",
    "deadline": "The job ran past its deadline",
    "error": "Other error",
}


class Failed(Exception):
    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


def classify(error: AwsError) -> str:
    code = error.code or ""
    if code in ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation") or "not authorized" in str(error):
        return "access_denied"
    if "Throttl" in code or code in ("RequestLimitExceeded", "TooManyRequestsException"):
        return "throttling"
    if code == "ValidationError" and "arameter" in str(error):
        return "parameter"
    if code == "GrafanaUnavailable":
        return "dashboards"
    if code == "KubernetesUnavailable":
        return "kubernetes"
    return "error"


def deadline_message(job: LaunchJob) -> str:
    took = timezone.now() - job.created
    minutes = int(took.total_seconds() // 60)
    return (f"The {job.get_kind_display().lower()} job did not finish within its deadline "
            f"({when(job.deadline, True)}, {minutes} minutes after it was requested).")


class LaunchRunner(Runner):
    """A launch job's step on ``portal.core.jobs.runner``: the loop, the lease and the AWS-error budget are the base's;
    this kind adds its deadline, its log, its failure groups and its verdict written beside the cluster's state."""

    model = LaunchJob
    select_related = ("cluster__organization",)
    failures = (Failed, provisioning.StepFailed)

    def begin(self, job: LaunchJob) -> None:
        if job.started is None:
            job.started, job.status = timezone.now(), JobStatus.RUNNING
        job.polls += 1

    def advance(self, job: LaunchJob) -> str:
        if job.deadline is not None and timezone.now() > job.deadline:
            raise Failed(deadline_message(job), "deadline")
        cf = cloudformation_for(job.cluster)
        return _advance_delete(job, job.cluster, cf) if job.kind == ClusterJobKind.DELETE else \
            _advance_launch(job, job.cluster, cf)

    def fail(self, job: LaunchJob, error: str, reason: str) -> str:
        _fail(job, job.cluster, error, reason)
        return DONE

    def retrying(self, job: LaunchJob, exc: AwsError) -> None:
        job.add_log(f"{exc} (retrying, {job.aws_errors} in a row)")

    def aws_reason(self, exc: AwsError) -> str:
        return classify(exc)

    def aws_message(self, job: LaunchJob, exc: AwsError) -> str:
        return f"{exc} (after {job.aws_errors + 1} attempts)" if exc.retryable else str(exc)

    def stopped(self, job: LaunchJob, exc: IllegalTransition) -> None:  # a delete overtook this launch
        job.add_log(f"stopped: {exc}")

    def release(self, job: LaunchJob, outcome: str) -> str:
        if job.finished is not None:  # concluded: written beside the cluster's final state
            return DONE
        if outcome == DONE:  # nothing left to do, or a delete overtook it
            job.finished, job.status = timezone.now(), JobStatus.SUCCEEDED
        return outcome if _record(job) else DONE


RUNNER = LaunchRunner()


def step(job_id: int, attempt: int | None = None) -> str:
    """Advance the job once; ``POLL`` asks the caller to come back after a countdown."""
    return RUNNER.step(job_id, attempt)


def _record(job: LaunchJob) -> bool:
    """Write what the step did to the job's row and drop its lease. False when a delete or a retry cancelled the
    job while the step ran: that verdict stands, only the lease goes."""
    return LaunchJob.release(job.pk, if_open=True, status=job.status, started=job.started, finished=job.finished,
                             polls=job.polls, aws_errors=job.aws_errors, log=job.log, error=job.error)


def _conclude(job: LaunchJob, status: str) -> bool:
    """Give the job its verdict in the caller's transaction, the one that sets the cluster's final state: no
    reader ever sees a ready, failed or deleted cluster whose job still says it is running."""
    job.status, job.finished = status, timezone.now()
    if status == JobStatus.SUCCEEDED:
        job.aws_errors = 0  # the step that succeeds met no AWS error
    return _record(job)


def expire(job_id: int) -> bool:
    """Fail a job past its deadline that no worker is stepping (the sweep calls this); True if it did."""
    if not LaunchJob.claim(job_id):
        return False
    job = LaunchJob.objects.select_related("cluster__organization").get(pk=job_id)
    return _fail(job, job.cluster, deadline_message(job), "deadline")


def expire_overdue() -> int:
    """Fail the open jobs past their deadline that no worker is stepping (the sweep's part for launch jobs)."""
    failed = 0
    for job_id in LaunchJob.objects.filter(finished__isnull=True, deadline__lt=timezone.now()).values_list(
            "pk", flat=True):
        if expire(job_id):
            failed += 1
            logger.warning("launch job %s failed: past its deadline", job_id)
    return failed


def cloudformation_for(cluster: Cluster) -> CloudFormation:
    """The organization's CloudFormation (its role assumed through STS); tests swap in a stubbed client."""
    return CloudFormation(organization=cluster.organization, region=cluster.region)


def _fail(job: LaunchJob, cluster: Cluster, message: str, reason: str) -> bool:
    """Fail the job, and the cluster if it is still in a state this job owns (a launch job never
    fails a cluster a delete has taken over, and a delete job only a deleting one), in one transaction; False
    when the job had been cancelled meanwhile (its verdict kept)."""
    own = (ClusterState.DELETING,) if job.kind == ClusterJobKind.DELETE else (ClusterState.SCHEDULED, ClusterState.CREATING)
    with transaction.atomic():
        cluster.refresh_from_db()
        if cluster.state in own:
            try:
                cluster.transition(ClusterState.FAILED, error=message, reason=reason)
            except StateChanged:
                job.add_log(f"the cluster moved on to {cluster.state}; left as it is")
        job.error = message
        job.add_log(f"failed: {message}")
        return _conclude(job, JobStatus.FAILED)


def _inputs(stack: Stack, earlier: list[Stack]) -> dict[str, str]:
    """The stack's own parameters plus the earlier stacks' outputs it takes (by name)."""
    names = {p.name for p in catalog.entry(stack.blueprint.slug).parameters}
    values: dict[str, str] = {}
    for previous in earlier:
        values.update({k: v for k, v in previous.outputs.items() if k in names})
    values.update({k: str(v) for k, v in stack.parameters.items() if v is not None})
    return values


def _store_events(stack: Stack, cf: CloudFormation) -> list[StackEvent]:
    known = set(stack.events.values_list("event_id", flat=True))
    new = [StackEvent(stack=stack, event_id=e.event_id, timestamp=e.timestamp, logical_id=e.logical_id,
                      physical_id=e.physical_id or "", resource_type=e.resource_type, status=e.status,
                      reason=e.reason or "")
           for e in cf.events(stack.stack_id, known)]
    StackEvent.objects.bulk_create(new, ignore_conflicts=True)
    return new


def first_failure(stack: Stack) -> StackEvent | None:
    """The earliest resource event that failed, skipping the stack's own roll-up and cancellations."""
    failures = stack.events.filter(status__endswith="_FAILED").order_by("timestamp", "id")
    for event in failures:
        if "cancelled" in event.reason.lower() or event.logical_id == stack.stack_name:
            continue
        return event
    return failures.first()


def _start(job: LaunchJob, cluster: Cluster, stack: Stack, earlier: list[Stack], cf: CloudFormation) -> None:
    existing = cf.find(stack.stack_name)
    if existing is not None:
        if existing.tags.get(LAUNCH_TAG) != str(cluster.launch_id):
            raise Failed(f"A stack named {stack.stack_name} exists and is not this launch's.", "name_taken")
        stack.stack_id, stack.status = existing.stack_id, existing.status
        job.add_log(f"adopted {stack.stack_name} ({existing.status}): created by an earlier attempt")
    else:
        body = catalog.template_body(stack.blueprint.slug)
        stack.stack_id = cf.create(stack.stack_name, body, _inputs(stack, earlier), str(cluster.launch_id),
                                   tags={"geniac:organization": cluster.organization.slug,
                                         "geniac:cluster": cluster.name, "geniac:role": stack.role})
        stack.status = "CREATE_IN_PROGRESS"
        job.add_log(f"created {stack.stack_name}")
    stack.save(update_fields=["stack_id", "status", "updated"])


def _advance_launch(job: LaunchJob, cluster: Cluster, cf: CloudFormation) -> str:
    if cluster.state == ClusterState.SCHEDULED:
        cluster.transition(ClusterState.CREATING)
    elif cluster.state != ClusterState.CREATING:
        job.add_log(f"nothing to do: the cluster is {cluster.state}")
        return DONE
    stacks = list(cluster.stacks.select_related("blueprint").order_by("order"))
    for index, stack in enumerate(stacks):
        if stack.status in STACK_DONE:
            continue
        # A retry removes the failed attempt first, then creates the stack again.
        if stack.stack_id and stack.status in STACK_FAILED | {"DELETE_IN_PROGRESS"} and not _clear_failed(job, stack, cf):
            return POLL
        if not stack.stack_id:
            if uploads.needs_upload(stack):  # custom actions / OnCreate must exist before the stack
                try:
                    uploads.upload_software(job, cluster, stack, _inputs(stack, stacks[:index]))
                except uploads.MissingInput as exc:
                    raise Failed(str(exc), "parameter") from exc
            _start(job, cluster, stack, stacks[:index], cf)
        state = cf.find(stack.stack_id)
        if state is None:
            raise Failed(f"Stack {stack.stack_name} disappeared while it was being created.", "stack_failed")
        _store_events(stack, cf)
        stack.status, stack.status_reason = state.status, state.reason
        cluster.stack_status = f"{stack.role}: {state.status}"
        if state.status in STACK_DONE:
            stack.outputs = state.outputs
            stack.resources_done = stack.resources_total
            stack.save()
            cluster.outputs = {**cluster.outputs, **state.outputs}
            cluster.save(update_fields=["outputs", "stack_status", "updated"])
            job.add_log(f"{stack.stack_name} complete")
            continue
        stack.resources_done = min(cf.resources_done(stack.stack_id), stack.resources_total)
        stack.save()
        cluster.save(update_fields=["stack_status", "updated"])
        if state.status in STACK_FAILED:
            failure = first_failure(stack)
            where = f"{failure.logical_id} ({failure.resource_type}): {failure.reason}" if failure else state.reason
            raise Failed(f"Stack {stack.stack_name} {state.status}: {where}", "stack_failed")
        return POLL
    # Dashboards, Kubernetes objects: what the stacks cannot create (the kind from the loaded stacks: no query).
    kind = next((s.blueprint.kind for s in stacks if s.blueprint_id == cluster.blueprint_id), "")
    provisioning.run(job, cluster, kind)
    with transaction.atomic():
        cluster.transition(ClusterState.READY)
        job.add_log("cluster ready")
        _conclude(job, JobStatus.SUCCEEDED)
    return DONE


def _clear_failed(job: LaunchJob, stack: Stack, cf: CloudFormation) -> bool:
    """Delete a failed stack so the retry can create it again; True once it is gone."""
    state = cf.find(stack.stack_id)
    if state is not None and state.status != "DELETE_COMPLETE":
        if state.status != "DELETE_IN_PROGRESS":
            cf.delete(stack.stack_id)
            job.add_log(f"deleting failed {stack.stack_name} before retrying")
        state = cf.find(stack.stack_id)
        if state is not None and state.status not in ("DELETE_COMPLETE",):
            stack.status = state.status
            stack.save(update_fields=["status", "updated"])
            return False
    stack.stack_id, stack.status, stack.status_reason, stack.resources_done = "", "", "", 0
    stack.save(update_fields=["stack_id", "status", "status_reason", "resources_done", "updated"])
    return True


def _advance_delete(job: LaunchJob, cluster: Cluster, cf: CloudFormation) -> str:
    if cluster.state != ClusterState.DELETING:
        job.add_log(f"nothing to do: the cluster is {cluster.state}")
        return DONE
    for stack in cluster.stacks.order_by("-order"):
        if stack.status == "DELETE_COMPLETE":
            continue
        state = cf.find(stack.stack_id or stack.stack_name)
        if state is not None and not stack.stack_id and state.tags.get(LAUNCH_TAG) != str(cluster.launch_id):
            state = None  # someone else's stack under that name: never delete it
        if state is not None and state.status == "DELETE_FAILED":
            raise Failed(f"Stack {stack.stack_name} DELETE_FAILED: {state.reason}", "delete_failed")
        if state is not None and state.status != "DELETE_COMPLETE":
            if state.status != "DELETE_IN_PROGRESS":
                cf.delete(state.stack_id)
                job.add_log(f"deleting {stack.stack_name}")
            state = cf.find(state.stack_id)
        if state is not None and state.status != "DELETE_COMPLETE":
            stack.status = state.status
            stack.save(update_fields=["status", "updated"])
            return POLL  # later stacks wait: reverse order, one at a time
        stack.status = "DELETE_COMPLETE"
        stack.save(update_fields=["status", "updated"])
        job.add_log(f"{stack.stack_name} deleted")
    with transaction.atomic():
        cluster.stack_status = "DELETE_COMPLETE"
        cluster.save(update_fields=["stack_status", "updated"])
        cluster.transition(ClusterState.DELETED)
        job.add_log("cluster deleted")
        _conclude(job, JobStatus.SUCCEEDED)
    return DONE
