"""What the portal knows of a Slurm cluster's node names: the scheduler's name of each hostname.

Health reports and people name a node by its hostname (``ip-10-1-45-13``); Slurm by its node name, which on
ParallelCluster is ``<queue>-st-<compute resource>-<n>`` and on HyperPod the hostname. Commands sent to Slurm take
node names, so the portal learns them from the cluster (``clusters.health.validation.slurm_names``) and keeps them here."""
from __future__ import annotations

from django.db import models
from django.utils import timezone

from portal.core.querysets import RestrictedQuerySet


class SlurmNode(models.Model):
    """One node of a cluster as Slurm lists it: its node name, hostname and address, when last listed."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="slurm_nodes")
    hostname = models.CharField(max_length=255)
    node_name = models.CharField(max_length=255)
    address = models.CharField(max_length=64, blank=True)
    seen_at = models.DateTimeField(default=timezone.now)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["cluster", "node_name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "hostname"], name="health_slurm_node_one_per_host"),
            models.UniqueConstraint(fields=["cluster", "node_name"], name="health_slurm_node_one_per_name"),
        ]

    def __str__(self) -> str:
        return f"{self.hostname} is {self.node_name}"
