"""What the portal keeps of node remediation: each organization's consent policy, and each action with its nodes,
the faults it answers, its steps and its lifecycle.

An action's ``state`` is the portal's lifecycle (a compare-and-set state machine, ``RemediationAction.transition``);
the provider's own answers are on its steps. ``RemediationNode`` rows hold the guardrail that two open actions
never touch the same node: a unique constraint over the open ones, so even racing requests make one action.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

from clusters.remediation.choices import (
    TRANSITIONS,
    ActionKind,
    ActionState,
    ConsentMode,
    FaultOutcome,
    PolicyChangeState,
    ProviderEventKind,
    StepStatus,
)
from portal.core import stored_text
from portal.core.jobs.models import Job
from portal.core.querysets import RestrictedQuerySet


class RemediationPolicy(models.Model):
    """How an organization consents to remediation, set by its lead SA with the customer's agreement."""

    organization = models.OneToOneField("portal.Organization", on_delete=models.CASCADE,
                                        related_name="remediation_policy")
    mode = models.CharField(max_length=12, choices=ConsentMode.choices, default=ConsentMode.APPROVAL)
    automatic_kinds = models.JSONField(default=list, blank=True,
                                       help_text=_("Fault kinds remediated automatically (choices.AUTOMATIC_RULES)."))
    max_nodes = models.PositiveSmallIntegerField(
        # xgettext:no-python-format
        default=1, help_text=_("Nodes of one cluster in remediation at once (never more than 10 % of the cluster)."))
    cooldown_hours = models.PositiveSmallIntegerField(default=24, help_text=_("Hours between two actions on one node."))
    agreed_with = models.CharField(max_length=200, blank=True,
                                   help_text=_("The customer engineer who approved the last change that widened it."))
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    updated = models.DateTimeField(auto_now=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        verbose_name = _("remediation policy")
        verbose_name_plural = _("remediation policies")

    def __str__(self) -> str:
        return f"remediation policy of {self.organization_id}: {self.mode}"

    def get_absolute_url(self) -> str:
        return reverse("remediation:policy_edit", kwargs={"org_pk": self.organization_id})


class RemediationPolicyChange(models.Model):
    """A change of an organization's consent that gives the portal more power over its nodes, proposed by a lead
    SA: it takes effect only when a customer engineer of the organization approves it (``consent.approve``). The
    values are the whole policy as it would be; ``before`` is the policy it was proposed against. At most one waits
    per organization: a later save of the policy replaces it (withdrawn)."""

    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE,
                                     related_name="remediation_policy_changes")
    mode = models.CharField(max_length=12, choices=ConsentMode.choices)
    automatic_kinds = models.JSONField(default=list, blank=True)
    max_nodes = models.PositiveSmallIntegerField()
    cooldown_hours = models.PositiveSmallIntegerField()
    before = models.JSONField(default=dict, help_text=_("The policy's values when the change was proposed."))
    widens = models.JSONField(default=list, help_text=_("What the change widens, in words."))
    state = models.CharField(max_length=10, choices=PolicyChangeState.choices, default=PolicyChangeState.PENDING)
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    proposed_at = models.DateTimeField(default=timezone.now)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    why = models.CharField(max_length=250, blank=True, help_text=_("Why the customer engineer declined it."))

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-proposed_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["organization"], condition=models.Q(state="pending"),
                                               name="remediation_one_pending_policy_change")]

    def __str__(self) -> str:
        return f"consent change {self.pk} of {self.organization_id}: {self.state}"

    def get_absolute_url(self) -> str:
        return reverse("remediation:policy_edit", kwargs={"org_pk": self.organization_id})


class RemediationAction(Job):
    """A reboot, replacement or drain of one or more nodes of a cluster, from proposal to a clean report.

    A job of ``portal.core.jobs`` once approved: a lease so two deliveries never step it at once, a sweep for what the
    broker lost; the worker claims an approved, running or verifying action."""

    STATUS_FIELD = "state"
    CREATED_FIELD = "approved_at"
    CLAIMABLE = (ActionState.APPROVED, ActionState.RUNNING, ActionState.VERIFYING)
    TRANSITIONS = TRANSITIONS
    LEASE_SETTING = "REMEDIATION_LEASE_SECONDS"

    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="remediations")
    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="remediations")
    kind = models.CharField(max_length=8, choices=ActionKind.choices)
    nodes = models.JSONField(default=list, help_text=_("Hostnames as the health reports name them."))
    state = models.CharField(max_length=10, choices=ActionState.choices, default=ActionState.PROPOSED, db_index=True)
    key = models.CharField(max_length=128, help_text=_("Idempotency key: a repeated request lands on this action."))
    reason = models.TextField(blank=True, help_text=_("Why the action is proposed."))
    automatic = models.BooleanField(default=False)
    refused_rule = models.CharField(max_length=32, blank=True)
    refusal = models.CharField(max_length=300, blank=True, help_text=_("Which rule refused the action, in words."))
    repeats = models.PositiveIntegerField(
        default=0, help_text=_("Proposals refused again for the same nodes, kind and rule within the window, counted "
                               "here rather than recorded again."))
    error = models.TextField(blank=True, help_text=_("The provider's text (lead SAs and staff only)."))
    failure_reason = models.CharField(max_length=32, blank=True)
    provider_nodes = models.JSONField(default=dict, blank=True, help_text=_("Hostname → provider node id."))
    progress = models.JSONField(default=dict, blank=True, help_text=_("What the worker has done (command ids, phase)."))
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    approved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    proposed_at = models.DateTimeField(default=timezone.now)
    approved_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    executed_at = models.DateTimeField(null=True, blank=True, help_text=_("When the provider reported the node back."))
    finished_at = models.DateTimeField(null=True, blank=True)
    fault_seen_at = models.DateTimeField(null=True, blank=True, help_text=_("First sight of the oldest fault answered."))
    polls = models.PositiveIntegerField(default=0)
    aws_errors = models.PositiveSmallIntegerField(default=0)
    deadline = models.DateTimeField(null=True, blank=True)
    escalation = models.ForeignKey("engagement.Escalation", null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-proposed_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["organization", "key"], name="remediation_one_per_key")]
        indexes = [models.Index(fields=["cluster", "state"], name="remediation_cluster_state")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {', '.join(self.nodes)} ({self.state})"

    @property
    def kind_words(self) -> str:
        """The kind as the journal's English lines name it ("replace"), whatever language the request that writes
        them is in: a stored English sentence never carries a Japanese word ("交換 of ip-…")."""
        with translation.override("en"):
            return str(self.get_kind_display()).lower()

    def get_absolute_url(self) -> str:
        return reverse("remediation:action_detail", kwargs={"pk": self.pk})

    @property
    def is_open(self) -> bool:
        return self.state in (ActionState.PROPOSED, ActionState.APPROVED, ActionState.RUNNING, ActionState.VERIFYING)

    def lifecycle_name(self) -> str:
        return f"action {self.pk}"

    def transition(self, to: str, **fields) -> None:
        """Move to ``to`` as a compare-and-set on the state this copy read (``Lifecycle.move``); ``fields`` are
        written with it. A finished state releases the action's nodes (their guardrail rows), in the same UPDATE's
        transaction."""
        self.move(to, **fields)
        if self.is_final(to):
            RemediationNode.objects.filter(action=self, active=True).update(active=False, released_at=timezone.now())


class RemediationNode(models.Model):
    """One node of an action: at most one open action per node of a cluster (the constraint over active rows)."""

    action = models.ForeignKey(RemediationAction, on_delete=models.CASCADE, related_name="node_rows")
    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="+")
    hostname = models.CharField(max_length=255)
    active = models.BooleanField(default=True)
    released_at = models.DateTimeField(null=True, blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "hostname"], condition=models.Q(active=True),
                                               name="remediation_one_open_action_per_node")]
        indexes = [models.Index(fields=["cluster", "hostname", "released_at"], name="remediation_node_cooldown")]

    def __str__(self) -> str:
        return f"{self.hostname} in action {self.action_id}"


class RemediationFault(models.Model):
    """A fault an action answers, and what became of it: remediating, cleared (linked to the action) or back."""

    action = models.ForeignKey(RemediationAction, on_delete=models.CASCADE, related_name="fault_rows")
    fault = models.ForeignKey("health.GpuFault", on_delete=models.CASCADE, related_name="remediations")
    outcome = models.CharField(max_length=12, choices=FaultOutcome.choices, default=FaultOutcome.REMEDIATING)
    settled_at = models.DateTimeField(null=True, blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["action", "fault"], name="remediation_fault_once")]

    def __str__(self) -> str:
        return f"fault {self.fault_id} in action {self.action_id}: {self.outcome}"


class RemediationStep(models.Model):
    """One thing the worker did or saw: shared in the portal's words, the provider's text kept for lead SAs."""

    action = models.ForeignKey(RemediationAction, on_delete=models.CASCADE, related_name="steps")
    at = models.DateTimeField(default=timezone.now)
    name = models.CharField(max_length=80)
    status = models.CharField(max_length=8, choices=StepStatus.choices, default=StepStatus.OK)
    summary = models.CharField(max_length=300, help_text=_("What happened, in the portal's words."))
    detail = models.TextField(blank=True, help_text=_("The provider's answer (lead SAs and staff only)."))
    # The summary as a code with parameters (clusters/remediation/texts.py), read in each reader's language;
    # ``summary`` keeps its English (the API's, and the only text of steps written before codes).
    code = models.CharField(max_length=64, blank=True)
    params = models.JSONField(default=dict, blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.name}: {self.status}"

    @property
    def shown_summary(self) -> str:
        """The summary in the reader's language (as stored for a step written before codes)."""
        return stored_text.render(self.code, self.params, self.summary)

class HyperPodEvent(models.Model):
    """One event HyperPod recorded on a cluster (``ListClusterEvents``), kept once (its id is unique per cluster),
    with what the portal did about it: a node HyperPod replaced or rebooted on its own closes the node's open faults
    with the event as their evidence."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="hyperpod_events")
    event_id = models.CharField(max_length=36)
    event_time = models.DateTimeField(db_index=True)
    kind = models.CharField(max_length=16, choices=ProviderEventKind.choices, default=ProviderEventKind.OTHER)
    level = models.CharField(max_length=8, blank=True)
    resource_type = models.CharField(max_length=16, blank=True)
    instance_group = models.CharField(max_length=63, blank=True)
    instance_id = models.CharField(max_length=32, blank=True)
    logical_id = models.CharField(max_length=128, blank=True)
    hostname = models.CharField(max_length=255, blank=True)
    description = models.TextField(blank=True)
    failure = models.TextField(blank=True, help_text=_("HyperPod's failure message, when the event carries one."))
    outcome = models.CharField(max_length=300, blank=True, help_text=_("What the portal did about the event."))
    recorded_at = models.DateTimeField(default=timezone.now)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-event_time", "-pk"]
        constraints = [models.UniqueConstraint(fields=["cluster", "event_id"], name="remediation_hyperpod_event_once")]

    def __str__(self) -> str:
        return f"{self.event_time:%Y-%m-%d %H:%M} {self.hostname or self.instance_id}: {self.description[:80]}"


class HyperPodEventCursor(models.Model):
    """Where the portal's reading of a HyperPod cluster's events stands: the time of the last event read (the next
    read asks from a little before it; events already kept are skipped by id), and the cluster's instances as last
    listed (instance id → hostname and logical id), so an event naming an instance that is gone still finds the
    hostname the health reports used."""

    cluster = models.OneToOneField("clusters.Cluster", on_delete=models.CASCADE, related_name="hyperpod_event_cursor")
    after = models.DateTimeField(null=True, blank=True)
    instances = models.JSONField(default=dict, blank=True)
    polled_at = models.DateTimeField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)

    objects = RestrictedQuerySet.as_manager()

    def __str__(self) -> str:
        return f"HyperPod events of cluster {self.cluster_id} read to {self.after}"
