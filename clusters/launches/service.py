"""The launch service: the one place a launch, a retry or a delete is decided and written.

The launch form, the API, retry and delete call :func:`submit`, :func:`request_retry` and
:func:`request_delete` and nothing else, so their rules cannot diverge. A launch is checked twice:
:func:`check` answers the form and the API early (field errors, the preview's quota line), and
:func:`submit` checks again inside its transaction under the organization's quota lock
(``portal.core.locks.quota``) before it writes, because a check made outside the transaction that writes
is not a rule: ten requests each within the quota left would all pass it. Submissions carry a key
(the form's hidden key, the API's ``Idempotency-Key``) stored with a unique constraint, so a
double-click or a retried request answers with the first cluster. Tasks are sent after commit; a
down broker leaves the job undispatched (the periodic sweep sends it). Nothing here talks to AWS.
"""
from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from clusters import timeline_texts
from clusters.blueprints import catalog, cfn
from clusters.choices import ClusterJobKind, ClusterState, JobStatus, StackRole
from clusters.launches import capacity, guards
from clusters.models import Cluster, LaunchJob, LaunchSubmission, Stack
from portal.core import access, locks, stored_text, timeline
from portal.core.choices import REGION_CODES, TimelineKind
from portal.core.jobs import registry
from portal.core.signals import Hook
from workloads.models import CapacityReservation
from workloads.validators import base_instance_type

# Parameters a cluster stack takes from the stacks before it (matched by output name).
# The launch jobs' kind of portal.core.jobs: registered with its tasks in clusters.tasks (which imports this module
# through the pipeline) and provided here by the clusters app's ready().
KIND = Hook("clusters: the launch jobs' kind of portal.core.jobs", provider="clusters")
ROLE_ORDER = {StackRole.NETWORK: 0, StackRole.STORAGE: 1, StackRole.CLUSTER: 2, StackRole.OBSERVABILITY: 3}
# Where a cluster blueprint keeps its instance type and node count.
SIZE_PARAMETERS = {
    "parallelcluster": ("ComputeInstanceType", "ComputeMaxCount"),
    "hyperpod": ("WorkerInstanceType", "WorkerCount"),
    "hyperpod-eks": ("WorkerInstanceType", "WorkerCount"),
}
RESERVATION_PARAMETER = "CapacityReservationId"


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


@dataclass
class LaunchRequest:
    """What a launch asks for, from the form or the API (``parameters`` keyed by stack role)."""

    organization: object
    name: str
    blueprint: str
    region: str
    parameters: dict[str, dict[str, str]]
    full_stack: bool = False
    user: object = None
    key: str = ""


@dataclass
class Checked:
    """A launch that passed every check: the plan, the parameters as they will run, its size."""

    plan: Plan
    parameters: dict[str, dict[str, str]]
    instance_type: str
    count: int
    quota: guards.QuotaCheck


class LaunchRefused(Exception):
    """A launch that may not go ahead: ``errors`` keyed by field (``name``, ``region``,
    ``<role>__<Parameter>``, ``__all__``), and the quota figures when the quota refused it."""

    def __init__(self, errors: dict[str, str], quota: guards.QuotaCheck | None = None):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()) or (quota.message if quota else "refused"))
        self.errors = errors
        self.quota = quota


@dataclass
class Submitted:
    """The answer to a submission: the cluster, and whether this request created it."""

    cluster: Cluster
    job: LaunchJob | None
    created: bool
    outcome: dict = field(default_factory=dict)

    @property
    def dispatched(self) -> bool:
        return bool(self.outcome.get("dispatched"))


def size_parameter(blueprint_slug: str) -> str | None:
    names = SIZE_PARAMETERS.get(catalog.entry(blueprint_slug).kind)
    return f"{StackRole.CLUSTER}__{names[1]}" if names else None


def reservations_for(organizations, instance_type: str = "", region: str = "", on_date: datetime.date | None = None):
    """The capacity reservations a launch may use: the organizations', not ended, and when given of
    the instance type and region. What the form offers and what a refusal lists."""
    day = on_date or timezone.localdate()
    rows = CapacityReservation.objects.filter(end__gte=day).select_related("organization")
    organizations = [organizations] if hasattr(organizations, "pk") else organizations
    rows = rows.filter(organization__in=organizations)
    if instance_type:
        base = base_instance_type(instance_type)
        rows = rows.filter(instance_type_name__in=[base, f"ml.{base}"])
    if region:
        rows = rows.filter(region=region)
    return rows.order_by("organization__name", "start", "reservation_id")


def _reservation(req: LaunchRequest, params: dict, instance_type: str, count: int,
                 on_date: datetime.date):
    """``(why the chosen reservation does not fit this launch, the reservation)``; ``(None, None)`` for none.

    It must be the organization's, of a kind the blueprint takes (an EC2 reservation or capacity block for
    ParallelCluster, a training plan for HyperPod), for the same instance type, region and availability zone,
    large enough for the nodes, and active on the launch date. The reservation then decides the capacity type,
    a block's static node count and the network's availability zone (:mod:`clusters.launches.capacity`).
    """
    kind = catalog.entry(req.blueprint).kind
    cluster_params = params.get(StackRole.CLUSTER, {})
    reservation_id = capacity.chosen(params, kind).strip()
    capacity_type = cluster_params.get("CapacityType") or ""
    if not reservation_id:
        if capacity_type == "CAPACITY_BLOCK":
            return "A capacity block launch needs the capacity block's reservation id.", None
        return None, None
    org = req.organization
    rows = list(CapacityReservation.objects.filter(organization=org, reservation_id=reservation_id).order_by("start"))

    def offer() -> str:
        valid = [r.reservation_id for r in reservations_for(org, instance_type, req.region, on_date)
                 if r.start <= on_date]
        return f" Reservations valid for this launch: {', '.join(valid)}." if valid else \
            " The organization has no reservation valid for this launch."

    if not rows:
        return f"{reservation_id} is not a reservation of {org.name}.{offer()}", None
    chosen = next((r for r in rows if r.start <= on_date <= r.end), None)
    if chosen is None:
        spans = ", ".join(f"{r.start} → {r.end}" for r in rows)
        return f"{reservation_id} is not active on {on_date} (it runs {spans}).{offer()}", None
    if chosen.kind not in capacity.kinds_for(kind):
        return (f"{reservation_id} is a {chosen.get_kind_display()}; a {kind} cluster takes "
                f"{' or '.join(capacity.kinds_for(kind)).replace('_', ' ')} capacity.{offer()}"), None
    if instance_type and base_instance_type(chosen.instance_type_name) != base_instance_type(instance_type):
        return f"{reservation_id} reserves {chosen.instance_type_name}, not {instance_type}.{offer()}", None
    if chosen.region != req.region:
        return f"{reservation_id} is in {chosen.region}, not {req.region}.{offer()}", None
    if count > chosen.count:
        return (f"{count} nodes asked, but {reservation_id} reserves only {chosen.count} × "
                f"{chosen.instance_type_name}."), None
    return None, chosen


def portal_alert_endpoint() -> str:
    """The portal's SNS endpoint (``/api/health/alerts/sns/``) under ``PORTAL_BASE_URL``; '' unless that is https.

    The observability template takes only an https endpoint (SNS signs, the portal verifies, but the alerts
    carry cluster names and should not cross the internet in clear)."""
    base = (settings.PORTAL_BASE_URL or "").rstrip("/")
    if not base.startswith("https://"):
        return ""
    return base + reverse("health-api:alerts-sns")


def _fill_alert_endpoint(params: dict[str, dict[str, str]]) -> None:
    """An observability launch that names no alert endpoint subscribes the portal's own."""
    values = params.setdefault(StackRole.OBSERVABILITY, {})
    if not str(values.get("AlertEndpointUrl") or "").strip():
        values["AlertEndpointUrl"] = portal_alert_endpoint()


def check(req: LaunchRequest, *, lock: bool = False, on_date: datetime.date | None = None) -> Checked:
    """Every rule a launch must pass; raises ``LaunchRefused`` (all field errors at once) or
    ``PermissionDenied``. ``lock=True`` (inside :func:`submit`'s transaction) makes the quota figure hold."""
    org = req.organization
    if req.user is not None and not access.can_in_organization(req.user, access.LAUNCH, Cluster, org.pk):
        raise PermissionDenied(gettext("You do not lead this organization."))
    if req.blueprint not in catalog.entries():
        raise LaunchRefused({"blueprint": f"No blueprint named {req.blueprint!r}."})
    errors: dict[str, str] = {}
    if req.region not in REGION_CODES:
        errors["region"] = f"{req.region!r} is not a program region."
    if Cluster.objects.filter(organization=org, name=req.name).exists():
        errors["name"] = gettext("%(org)s already has a cluster named %(name)s.") % {"org": org.name, "name": req.name}
    p = plan(req.blueprint, req.full_stack)
    params = {role: dict(values) for role, values in req.parameters.items()}
    unknown_roles = set(params) - {role for role, _ in p.stacks}
    if unknown_roles:
        errors["parameters"] = f"no stack with role {', '.join(sorted(unknown_roles))} in this launch"
        raise LaunchRefused(errors)
    if catalog.entry(req.blueprint).kind in catalog.CLUSTER_KINDS:
        params.setdefault(StackRole.CLUSTER, {})["ClusterName"] = req.name
    if catalog.entry(req.blueprint).kind == "observability":
        _fill_alert_endpoint(params)
    errors.update(validate(p, params))
    kind = catalog.entry(req.blueprint).kind
    zone_key = f"{StackRole.NETWORK}__AvailabilityZone"
    # A chosen reservation fixes the network's zone (capacity.wire): no zone is needed then.
    zone_from_reservation = zone_key in errors and bool(capacity.chosen(params, kind).strip()) \
        and not params.get(StackRole.NETWORK, {}).get("AvailabilityZone")
    if zone_from_reservation:
        missing = errors.pop(zone_key)
    zone = params.get(StackRole.NETWORK, {}).get("AvailabilityZone", "")
    if zone and req.region in REGION_CODES and not zone.startswith(req.region):
        errors.setdefault(f"{StackRole.NETWORK}__AvailabilityZone", f"{zone} is not in {req.region}")
    if errors:
        raise LaunchRefused(errors)
    day = on_date or timezone.localdate()
    instance_type, count = size_of(req.blueprint, params)
    why, reservation = _reservation(req, params, instance_type, count, day)
    if why:
        errors[f"{StackRole.CLUSTER}__{capacity.parameter_for(kind)}"] = why
        if zone_from_reservation:
            errors[zone_key] = f"{missing} unless a reservation valid for this launch is chosen"
    elif reservation is not None:
        # The reservation sets the capacity type, a block's MinCount and the network's zone.
        params = capacity.wire(params, reservation, blueprint_kind=kind)
    quota = guards.check_quota(org, instance_type, req.region, count, day, lock=lock)
    if errors or not quota.allowed:
        raise LaunchRefused(errors, quota=None if quota.allowed else quota)
    return Checked(plan=p, parameters=params, instance_type=instance_type, count=count, quota=quota)


def previous_submission(organization_id, key: str, user=None) -> Cluster | None:
    """The cluster an earlier submission with ``key`` made in the organization (one the user may see)."""
    if not key or not organization_id:
        return None
    rows = LaunchSubmission.objects.filter(organization_id=organization_id, key=key)
    if user is not None:
        rows = rows.filter(cluster__in=Cluster.objects.restrict(user, access.VIEW))
    found = rows.select_related("cluster").first()
    return found.cluster if found else None


def submit(req: LaunchRequest) -> Submitted:
    """Check and write a launch in one transaction under the organization's quota lock; send on commit.

    A submission whose key was seen before answers with the first cluster (``created=False``).
    Raises ``LaunchRefused`` (nothing written) or ``PermissionDenied``.
    """
    outcome: dict = {}
    with transaction.atomic():
        locks.quota(req.organization.pk)  # launches and quota decisions of this organization, one at a time
        earlier = previous_submission(req.organization.pk, req.key)
        if earlier is not None:
            return Submitted(cluster=earlier, job=None, created=False, outcome={"dispatched": True})
        checked = check(req, lock=True)
        try:
            with transaction.atomic():  # a savepoint: a name taken meanwhile is a refusal, not a 500
                cluster, job = create_launch(
                    organization=req.organization, name=req.name, blueprint_slug=req.blueprint,
                    full_stack=req.full_stack, region=req.region, parameters=checked.parameters, user=req.user,
                    availability_zone=checked.parameters.get(StackRole.NETWORK, {}).get("AvailabilityZone", ""))
                if req.key:
                    LaunchSubmission.objects.create(organization=req.organization, key=req.key, cluster=cluster,
                                                    requested_by=req.user)
        except IntegrityError as exc:
            earlier = previous_submission(req.organization.pk, req.key)
            if earlier is not None:
                return Submitted(cluster=earlier, job=None, created=False, outcome={"dispatched": True})
            raise LaunchRefused({"name": gettext("%(org)s already has a cluster named %(name)s.")
                                 % {"org": req.organization.name, "name": req.name}}) from exc
        dispatch_on_commit(job, outcome)
    return Submitted(cluster=cluster, job=job, created=True, outcome=outcome)


def _new_job(cluster: Cluster, kind: str, user, line: str) -> LaunchJob:
    job = LaunchJob.objects.create(cluster=cluster, kind=kind, requested_by=user,
                                   deadline=timezone.now() + timedelta(seconds=settings.CLUSTERS_JOB_DEADLINE_SECONDS))
    job.add_log(line)
    job.save(update_fields=["log"])
    return job


def create_launch(*, organization, name: str, blueprint_slug: str, full_stack: bool, region: str,
                  parameters: dict[str, dict[str, str]], user=None, availability_zone: str = "") -> tuple[Cluster, LaunchJob]:
    """Write the cluster (scheduled), its stacks and the launch job, and nothing more: no checks.

    Requests go through :func:`submit`; the demo seed and tests write rows directly with this.
    """
    rows = catalog.sync()
    entry = catalog.entry(blueprint_slug)
    p = plan(blueprint_slug, full_stack)
    instance_type, count = size_of(blueprint_slug, parameters)
    orchestrator = entry.kind if entry.kind in catalog.CLUSTER_KINDS else "parallelcluster"
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
    job = _new_job(cluster, ClusterJobKind.LAUNCH, user,
                   f"launch of {blueprint_slug}{' (full stack)' if full_stack else ''} requested")
    timeline.record(organization, TimelineKind.LAUNCH,
                    stored_text.message(timeline_texts.LAUNCH_REQUESTED, name=name, blueprint=str(entry.title)),
                    source=cluster, actor=user, tags=["cluster", "launch"])
    return cluster, job


def dispatch(job: LaunchJob) -> bool:
    """Send the job's task now (the "launch" kind of ``portal.core.jobs``, registered in ``clusters.tasks``); record
    whether the broker took it (the sweep retries if not).

    Each send is numbered (``attempts``) and the message carries its number: a step of an older chain
    of polls stops when it sees a newer send, so a resend never doubles the polling.
    """
    return registry.dispatch(KIND.get(), job)


def dispatch_on_commit(job: LaunchJob, outcome: dict | None = None) -> None:
    """After commit, send the task; ``outcome['dispatched']`` tells the caller what happened."""
    def _send() -> None:
        ok = dispatch(job)
        if outcome is not None:
            outcome["dispatched"] = ok

    transaction.on_commit(_send)


class ActionRefused(Exception):
    """A retry or delete the cluster's state (or the quota) does not allow. ``field`` says what refused it:
    ``state`` or ``quota`` (the data as it stands, which the API answers 409), or ``confirm`` (the request lacks
    the cluster's name, 400)."""

    def __init__(self, message: str, field: str = "state"):
        super().__init__(message)
        self.field = field


def _cancel_open_jobs(cluster: Cluster, why: str) -> None:
    for job in cluster.jobs.filter(finished__isnull=True):
        job.status, job.finished, job.error = JobStatus.FAILED, timezone.now(), why
        job.add_log(why)
        job.save(update_fields=["status", "finished", "error", "log"])


def _check_access(cluster: Cluster, user, action: str = access.LAUNCH) -> None:
    if user is not None and not access.can(user, action, cluster):
        raise PermissionDenied(access.archived_refusal(cluster, action)
                               or "Only the organization's lead solutions architects act on its clusters.")


def request_retry(cluster: Cluster, user=None, outcome: dict | None = None) -> LaunchJob:
    """Failed → scheduled, if the quota still has room for the cluster's nodes (checked under the quota
    lock: a failed cluster holds nothing, so its retry is a new claim on the quota); a new launch job
    resumes from the first stack that is not complete. The task is sent on commit."""
    with transaction.atomic():
        _check_access(cluster, user)
        locks.quota(cluster.organization_id)
        cluster = Cluster.objects.select_for_update().select_related("organization").get(pk=cluster.pk)
        if cluster.state != ClusterState.FAILED:
            raise ActionRefused(gettext("Only a failed cluster can be retried; this one is %(state)s.")
                                % {"state": cluster.get_state_display().lower()})
        quota = guards.check_quota(cluster.organization, cluster.instance_type, cluster.region, cluster.node_count,
                                   lock=True)
        if not quota.allowed:
            raise ActionRefused(gettext("Over quota: %(message)s.") % {"message": quota.message}, field="quota")
        _cancel_open_jobs(cluster, "superseded by a retry")
        cluster.transition(ClusterState.SCHEDULED, actor=user)
        job = _new_job(cluster, ClusterJobKind.RETRY, user, "retry requested")
        dispatch_on_commit(job, outcome)
    return job


def request_delete(cluster: Cluster, user=None, confirmed: bool = False, outcome: dict | None = None) -> LaunchJob:
    """→ deleting; stacks are removed in reverse order. A ready cluster needs ``confirmed``."""
    with transaction.atomic():
        _check_access(cluster, user, access.TEAR_DOWN)  # a leaving organization's cluster is torn down too
        cluster = Cluster.objects.select_for_update().get(pk=cluster.pk)
        if not cluster.can_transition(ClusterState.DELETING):
            raise ActionRefused(gettext("A %(state)s cluster cannot be deleted now.") % {"state": cluster.get_state_display().lower()})
        if cluster.state == ClusterState.READY and not confirmed:
            raise ActionRefused(gettext("Type the cluster's name (%(name)s) to confirm deleting a ready cluster.")
                                % {"name": cluster.name}, field="confirm")
        _cancel_open_jobs(cluster, "cancelled: the cluster is being deleted")
        cluster.transition(ClusterState.DELETING, actor=user)
        job = _new_job(cluster, ClusterJobKind.DELETE, user, "delete requested")
        dispatch_on_commit(job, outcome)
    return job
