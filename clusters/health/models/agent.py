"""Work for the agent on a cluster's Slurm controller (HyperPod Slurm, docs/DECISIONS.md 42).

HyperPod nodes are not SSM ``SendCommand`` targets, so the portal does not send commands to the controller: it
queues work items, and the agent there (``clusters/software/<version>/scripts/geniac_agent.py``) long-polls for
them with the cluster's ingestion token, runs each once and posts its result. An item is a job of
``portal.core.jobs`` without a Celery task: the agent's poll is its claim (one conditional UPDATE taking the lease),
the result its finish (compare-and-set: a second post of the same item changes nothing), and a claim whose lease
runs out goes back to the queue (``clusters.health.validation.agent.requeue``)."""
from __future__ import annotations

from django.db import models
from django.utils import timezone

from clusters.health.choices import WORK_OPEN, WorkKind, WorkState
from portal.core.jobs.models import Job
from portal.core.querysets import RestrictedQuerySet


class AgentWorkItem(Job):
    """One thing the controller agent runs: its kind and payload (what the agent builds its command from), where it
    stands, and what the agent answered (exit status, standard output and error)."""

    STATUS_FIELD = "state"
    CREATED_FIELD = "created_at"
    CLAIMABLE = WORK_OPEN  # a claimed item whose lease ran out is claimable again (lease_free)
    OPEN = WORK_OPEN
    LEASE_SETTING = "AGENT_LEASE_SECONDS"

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="agent_work")
    kind = models.CharField(max_length=12, choices=WorkKind.choices)
    payload = models.JSONField(default=dict, blank=True)
    comment = models.CharField(max_length=100, blank=True)
    state = models.CharField(max_length=8, choices=WorkState.choices, default=WorkState.QUEUED, db_index=True)
    exit_status = models.IntegerField(null=True, blank=True)
    stdout = models.TextField(blank=True)
    stderr = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["cluster", "state"], name="health_agent_work_queue")]

    def __str__(self) -> str:
        return f"{self.kind} {self.pk} of cluster {self.cluster_id} ({self.state})"
