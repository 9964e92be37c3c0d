"""Fixed vocabularies of clusters."""
from django.db import models


class ClusterState(models.TextChoices):
    SCHEDULED = "scheduled", "Scheduled"
    CREATING = "creating", "Creating"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"
    DELETING = "deleting", "Deleting"
    DELETED = "deleted", "Deleted"


class Orchestrator(models.TextChoices):
    PARALLELCLUSTER = "parallelcluster", "AWS ParallelCluster (Slurm)"
    HYPERPOD = "hyperpod", "SageMaker HyperPod (Slurm)"
