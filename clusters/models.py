"""Clusters of an organization, the blueprints they are built from, their stacks and launch jobs.

``Cluster.state`` is the portal's lifecycle (a guarded state machine); each ``Stack.status`` is
CloudFormation's own status, kept apart. A ``LaunchJob`` is the unit of background work: the task
reloads it by primary key, so a lost message or a killed worker loses nothing.
"""
from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from clusters import timeline_texts
from clusters.choices import (
    TRANSITIONS,
    ClusterJobKind,
    ClusterState,
    JobStatus,
    Orchestrator,
    StackRole,
)
from portal.core import timeline
from portal.core.choices import REGION_CHOICES, TimelineKind, Visibility
from portal.core.jobs.models import Job
from portal.core.jobs.states import IllegalTransition, Lifecycle
from portal.core.models import cycle_field
from portal.core.notifications import Event, notify
from portal.core.querysets import RestrictedQuerySet
from portal.core.stored_text import message

# States in which a cluster holds (or is about to hold) its instances: they count against quota.
HOLDING_STATES = (ClusterState.SCHEDULED, ClusterState.CREATING, ClusterState.READY, ClusterState.DELETING)
FINISHED_STATES = (ClusterState.READY, ClusterState.FAILED, ClusterState.DELETED)


class StateChanged(IllegalTransition):
    """The state moved on since this copy of the cluster was read (another request or worker won).

    The copy has been reloaded; the caller looks at the new state and decides again.
    """


class Blueprint(models.Model):
    """A reference architecture shipped as a CloudFormation file; the file is the source of truth.

    Rows are synced from ``clusters/blueprints/*.yaml`` (``clusters.blueprints_sync.sync``) so that
    clusters can point at the exact version and content hash they were launched from.
    """

    slug = models.SlugField(max_length=60, unique=True)
    kind = models.CharField(max_length=32)
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    version = models.CharField(max_length=32)
    content_hash = models.CharField(max_length=64)
    synced = models.DateTimeField(default=timezone.now)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return f"{self.title} {self.version}"

    def get_absolute_url(self) -> str:
        return reverse("clusters:blueprint_detail", kwargs={"slug": self.slug})


class Cluster(Lifecycle, models.Model):
    """A training cluster in an organization's account."""

    STATUS_FIELD = "state"
    TRANSITIONS = TRANSITIONS
    CHANGED = StateChanged
    RELOADED = ("error_message", "failure_reason", "updated")

    organization = models.ForeignKey("portal.Organization", on_delete=models.PROTECT, related_name="clusters")
    cycle = cycle_field("clusters")
    name = models.SlugField(max_length=60)
    orchestrator = models.CharField(max_length=32, choices=Orchestrator.choices, default=Orchestrator.PARALLELCLUSTER)
    region = models.CharField(max_length=32, choices=REGION_CHOICES, default="ap-northeast-1")
    availability_zone = models.CharField(max_length=32, blank=True)
    instance_type = models.CharField(max_length=32)
    node_count = models.PositiveIntegerField()
    state = models.CharField(max_length=16, choices=ClusterState.choices, default=ClusterState.SCHEDULED, db_index=True)
    stack_status = models.CharField(max_length=64, blank=True)
    error_message = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    # The launch pipeline
    blueprint = models.ForeignKey(Blueprint, null=True, blank=True, on_delete=models.PROTECT, related_name="clusters")
    full_stack = models.BooleanField(default=False, help_text=_("Network, storage and cluster stacks in one launch."))
    parameters = models.JSONField(default=dict, blank=True, help_text=_("Template parameters per stack role."))
    outputs = models.JSONField(default=dict, blank=True, help_text=_("Outputs of every stack, merged."))
    launch_id = models.UUIDField(default=uuid.uuid4, editable=False, unique=True)
    failure_reason = models.CharField(max_length=64, blank=True, help_text=_("Short code grouping failures."))
    # The software stack uploaded for its nodes (clusters/software/<version>/), and its content hash.
    software_version = models.CharField(max_length=32, blank=True)
    software_hash = models.CharField(max_length=64, blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["organization__name", "name"]
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="unique_cluster_name_per_org")]

    def __str__(self) -> str:
        return f"{self.organization.slug}/{self.name}"

    def get_absolute_url(self) -> str:
        return reverse("clusters:cluster_detail", kwargs={"pk": self.pk})

    @property
    def holds_capacity(self) -> bool:
        return self.state in HOLDING_STATES

    @property
    def short_launch_id(self) -> str:
        return self.launch_id.hex[:8]

    @property
    def is_busy(self) -> bool:
        return self.state in (ClusterState.SCHEDULED, ClusterState.CREATING, ClusterState.DELETING)

    def lifecycle_name(self) -> str:
        return str(self)

    def transition(self, to: str, *, error: str = "", reason: str = "", actor=None) -> None:
        """Move the lifecycle to ``to`` (saved), with a timeline entry; failures also notify.

        The one place a state changes, as a compare-and-set on ``TRANSITIONS`` (``portal.core.jobs.states``): the row
        is updated only while its state is still the one this copy read. An illegal move raises
        ``IllegalTransition``; a lost race reloads the copy and raises ``StateChanged``, so a stale copy never
        overwrites a newer state (a delete requested while a worker held the cluster in memory stays a delete).
        """
        error_message, failure_reason = self.error_message, self.failure_reason
        if to == ClusterState.FAILED:
            error_message, failure_reason = error, reason or "error"
        elif to in (ClusterState.SCHEDULED, ClusterState.READY, ClusterState.DELETED):
            error_message, failure_reason = "", ""
        previous = self.move(to, error_message=error_message, failure_reason=failure_reason, updated=timezone.now())
        kind = TimelineKind.LAUNCH if to in (ClusterState.SCHEDULED, ClusterState.CREATING) else TimelineKind.CLUSTER
        said = message(timeline_texts.STATE_CHANGED, name=self.name, before=previous, after=str(to))
        title = said.english()
        timeline.record(
            # A shared entry: customers read it, so the portal's words, not AWS's (portal/core/provider_errors.py).
            self.organization_id, kind, said, source=self, actor=actor,
            body=(message(timeline_texts.FAILURE, reason=self.failure_reason or "error") if to == ClusterState.FAILED
                  else ""),
            severity="high" if to == ClusterState.FAILED else "",
            visibility=Visibility.SHARED, tags=["cluster", to],
        )
        if to == ClusterState.FAILED:
            notify(Event(kind="cluster_failed", title=title, organization_id=self.organization_id,
                         severity="high", body=error, url=self.get_absolute_url()))


class Stack(models.Model):
    """One CloudFormation stack of a cluster; ``status`` is CloudFormation's own."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="stacks")
    role = models.CharField(max_length=16, choices=StackRole.choices)
    order = models.PositiveSmallIntegerField()
    blueprint = models.ForeignKey(Blueprint, on_delete=models.PROTECT, related_name="stacks")
    content_hash = models.CharField(max_length=64, blank=True, help_text=_("Hash of the template that ran."))
    stack_name = models.CharField(max_length=128, unique=True)
    stack_id = models.CharField(max_length=256, blank=True)
    status = models.CharField(max_length=64, blank=True)
    status_reason = models.TextField(blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    outputs = models.JSONField(default=dict, blank=True)
    resources_total = models.PositiveIntegerField(default=0)
    resources_done = models.PositiveIntegerField(default=0)
    updated = models.DateTimeField(auto_now=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["cluster", "order"]
        constraints = [models.UniqueConstraint(fields=["cluster", "role"], name="unique_stack_role_per_cluster")]

    def __str__(self) -> str:
        return self.stack_name

    def get_absolute_url(self) -> str:
        return self.cluster.get_absolute_url()


class StackEvent(models.Model):
    """A CloudFormation stack event, stored once (``event_id`` is CloudFormation's own id)."""

    stack = models.ForeignKey(Stack, on_delete=models.CASCADE, related_name="events")
    event_id = models.CharField(max_length=256, unique=True)
    timestamp = models.DateTimeField(db_index=True)
    logical_id = models.CharField(max_length=256)
    physical_id = models.CharField(max_length=1024, blank=True)
    resource_type = models.CharField(max_length=256)
    status = models.CharField(max_length=64)
    reason = models.TextField(blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-timestamp", "-id"]

    def __str__(self) -> str:
        return f"{self.timestamp:%H:%M:%S} {self.logical_id} {self.status}"

    @property
    def is_failure(self) -> bool:
        return self.status.endswith("_FAILED")


class LaunchJob(Job):
    """One request to launch, retry or delete a cluster: who, when, what happened (log, error).

    A job of ``portal.core.jobs``: ``dispatched_at``/``attempts`` let the periodic sweep send jobs a down broker never
    received; ``heartbeat``/``lease_until`` let it find jobs whose worker died and keep two workers from advancing
    the same job at once. Any job not finished may be claimed.
    """

    FINISHED_FIELD = "finished"
    LEASE_SETTING = "CLUSTERS_LEASE_SECONDS"

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=16, choices=ClusterJobKind.choices, default=ClusterJobKind.LAUNCH)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING, db_index=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    log = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text=_("Times the job was sent to the broker."))
    polls = models.PositiveIntegerField(default=0)
    aws_errors = models.PositiveIntegerField(default=0, help_text=_("Retryable AWS errors in a row."))
    deadline = models.DateTimeField(null=True, blank=True,
                                    help_text=_("After this the job fails the cluster instead of polling on."))

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["finished", "dispatched_at"], name="launchjob_sweep")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.cluster} ({self.status})"

    def get_absolute_url(self) -> str:
        return self.cluster.get_absolute_url()

    @property
    def is_finished(self) -> bool:
        return self.finished is not None

    def add_log(self, line: str) -> None:
        """Stamped in the display time zone, like every time on the page that shows the log."""
        self.log += f"{timezone.localtime():%Y-%m-%d %H:%M:%S} {line}\n"


class LaunchSubmission(models.Model):
    """One launch request, remembered by the key its client sent (the form's hidden key, the API's
    ``Idempotency-Key`` header): a resubmission gets the cluster the first one made, never a second."""

    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=128)
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="submissions")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:  # internal bookkeeping, read only through the launch service (no access rule needed)
        constraints = [models.UniqueConstraint(fields=["organization", "key"], name="unique_launch_submission_key")]

    def __str__(self) -> str:
        return f"{self.key} → {self.cluster_id}"
