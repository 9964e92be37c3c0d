"""Launch, retry and delete: what the views and the API call.

Each request validates, writes the cluster, its stacks and a ``LaunchJob`` in one transaction, and
sends the task after commit. A down broker leaves the job undispatched (the periodic sweep sends it)
and the caller tells the user so. Nothing here talks to AWS.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from clusters import catalog, cfn
from clusters.choices import ClusterState, JobKind, JobStatus, StackRole
from clusters.models import Cluster, LaunchJob, Stack
from portal import timeline
from portal.choices import TimelineKind
from portal.jobs import send

# Parameters a cluster stack takes from the stacks before it (matched by output name).
ROLE_ORDER = {StackRole.NETWORK: 0, StackRole.STORAGE: 1, StackRole.CLUSTER: 2, StackRole.OBSERVABILITY: 3}
# Where a cluster blueprint keeps its instance type and node count.
SIZE_PARAMETERS = {
    "parallelcluster": ("ComputeInstanceType", "ComputeMaxCount"),
    "hyperpod": ("WorkerInstanceType", "WorkerCount"),
}


@dataclass
class Plan:
    """The stacks a launch creates, in order: (role, blueprint slug)."""

    blueprint: str
    full_stack: bool
    stacks: list[tuple[str, str]] = field(default_factory=list)

    def wired(self) -> dict[str, set[str]]:
        """Per role, the parameters filled from earlier stacks' outputs (not asked in the form)."""
        outputs_so_far: set[str] = set()
        wired: dict[str, set[str]] = {}
        for role, slug in self.stacks:
            entry = catalog.entry(slug)
            wired[role] = {p.name for p in entry.parameters if p.name in outputs_so_far}
            outputs_so_far |= {o.name for o in entry.outputs}
        return wired


def plan(blueprint_slug: str, full_stack: bool) -> Plan:
    entry = catalog.entry(blueprint_slug)
    role = catalog.ROLE_OF_KIND.get(entry.kind, StackRole.CLUSTER)
    result = Plan(blueprint=blueprint_slug, full_stack=full_stack)
    if full_stack and entry.kind in catalog.CLUSTER_KINDS:
        result.stacks = [(StackRole.NETWORK, "network"), (StackRole.STORAGE, "storage"), (role, blueprint_slug)]
    else:
        result.stacks = [(role, blueprint_slug)]
    return result


def stack_name(cluster: Cluster, role: str) -> str:
    """``geniac-<org>-<cluster>-<role>-<launch>``: unique per launch, within CloudFormation's 128."""
    def clean(text: str, limit: int) -> str:
        return re.sub(r"[^a-zA-Z0-9-]", "-", text)[:limit].strip("-")

    return f"geniac-{clean(cluster.organization.slug, 40)}-{clean(cluster.name, 40)}-{role}-{cluster.short_launch_id}"


def validate(p: Plan, parameters: dict[str, dict[str, str]]) -> dict[str, str]:
    """Field errors keyed ``<role>__<Parameter>``; wired parameters are skipped (filled at launch)."""
    errors: dict[str, str] = {}
    wired = p.wired()
    for role, slug in p.stacks:
        specs = [s for s in catalog.entry(slug).parameters if s.name not in wired[role]]
        values = dict(parameters.get(role, {}))
        for name, message in cfn.validate_parameters(specs, values).items():
            errors[f"{role}__{name}"] = message
    return errors


def size_of(blueprint_slug: str, parameters: dict[str, dict[str, str]]) -> tuple[str, int]:
    """(instance type, node count) the cluster asks for; ('', 0) for a blueprint without nodes."""
    entry = catalog.entry(blueprint_slug)
    names = SIZE_PARAMETERS.get(entry.kind)
    if names is None:
        return "", 0
    values = parameters.get(StackRole.CLUSTER, {})
    defaults = {p.name: p.default for p in entry.parameters}
    instance_type = str(values.get(names[0]) or defaults.get(names[0]) or "")
    count = values.get(names[1]) or defaults.get(names[1]) or 0
    return instance_type, int(float(count))


def create_launch(*, organization, name: str, blueprint_slug: str, full_stack: bool, region: str,
                  parameters: dict[str, dict[str, str]], user=None, availability_zone: str = "") -> tuple[Cluster, LaunchJob]:
    """Write the cluster (scheduled), its stacks and the launch job. Call inside a transaction."""
    rows = catalog.sync()
    entry = catalog.entry(blueprint_slug)
    p = plan(blueprint_slug, full_stack)
    instance_type, count = size_of(blueprint_slug, parameters)
    orchestrator = "hyperpod" if entry.kind == "hyperpod" else "parallelcluster"
    cluster = Cluster.objects.create(
        organization=organization, name=name, orchestrator=orchestrator, region=region,
        availability_zone=availability_zone, instance_type=instance_type, node_count=count,
        blueprint=rows[blueprint_slug], full_stack=full_stack, parameters=parameters, created_by=user,
    )
    for order, (role, slug) in enumerate(p.stacks):
        Stack.objects.create(
            cluster=cluster, role=role, order=order, blueprint=rows[slug], content_hash=rows[slug].content_hash,
            stack_name=stack_name(cluster, role), parameters=parameters.get(role, {}),
            resources_total=sum(cfn.resources_summary(catalog.template(slug)).values()),
        )
    job = LaunchJob.objects.create(cluster=cluster, kind=JobKind.LAUNCH, requested_by=user)
    job.add_log(f"launch of {blueprint_slug}{' (full stack)' if full_stack else ''} requested")
    job.save(update_fields=["log"])
    timeline.record(organization, TimelineKind.LAUNCH, f"Launch of cluster {name} requested ({entry.title})",
                    source=cluster, actor=user, tags=["cluster", "launch"])
    return cluster, job


def task_for(job: LaunchJob):
    from clusters import tasks

    return tasks.delete_cluster if job.kind == JobKind.DELETE else tasks.launch_cluster


def dispatch(job: LaunchJob) -> bool:
    """Send the job's task now; record whether the broker took it (the sweep retries if not)."""
    ok = send(task_for(job), job.pk)
    LaunchJob.objects.filter(pk=job.pk).update(dispatched=ok, attempts=job.attempts + 1)
    job.dispatched, job.attempts = ok, job.attempts + 1
    return ok


def dispatch_on_commit(job: LaunchJob, outcome: dict | None = None) -> None:
    """After commit, send the task; ``outcome['dispatched']`` tells the caller what happened."""
    def _send() -> None:
        ok = dispatch(job)
        if outcome is not None:
            outcome["dispatched"] = ok

    transaction.on_commit(_send)


class ActionRefused(Exception):
    """A retry or delete the cluster's state does not allow."""


def _cancel_open_jobs(cluster: Cluster, why: str) -> None:
    for job in cluster.jobs.filter(finished__isnull=True):
        job.status, job.finished, job.error = JobStatus.FAILED, timezone.now(), why
        job.add_log(why)
        job.save(update_fields=["status", "finished", "error", "log"])


def request_retry(cluster: Cluster, user=None) -> LaunchJob:
    """Failed → scheduled; a new launch job resumes from the first stack that is not complete."""
    cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
    if cluster.state != ClusterState.FAILED:
        raise ActionRefused(f"Only a failed cluster can be retried; this one is {cluster.get_state_display().lower()}.")
    _cancel_open_jobs(cluster, "superseded by a retry")
    cluster.transition(ClusterState.SCHEDULED, actor=user)
    job = LaunchJob.objects.create(cluster=cluster, kind=JobKind.RETRY, requested_by=user)
    job.add_log("retry requested")
    job.save(update_fields=["log"])
    return job


def request_delete(cluster: Cluster, user=None, confirmed: bool = False) -> LaunchJob:
    """→ deleting; stacks are removed in reverse order. A ready cluster needs ``confirmed``."""
    cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
    if not cluster.can_transition(ClusterState.DELETING):
        raise ActionRefused(f"A {cluster.get_state_display().lower()} cluster cannot be deleted now.")
    if cluster.state == ClusterState.READY and not confirmed:
        raise ActionRefused(f"Type the cluster's name ({cluster.name}) to confirm deleting a ready cluster.")
    _cancel_open_jobs(cluster, "cancelled: the cluster is being deleted")
    cluster.transition(ClusterState.DELETING, actor=user)
    job = LaunchJob.objects.create(cluster=cluster, kind=JobKind.DELETE, requested_by=user)
    job.add_log("delete requested")
    job.save(update_fields=["log"])
    return job
