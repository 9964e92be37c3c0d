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
    HYPERPOD_EKS = "hyperpod-eks", "SageMaker HyperPod (EKS)"


class StackRole(models.TextChoices):
    """What a stack is for; a full-stack launch creates them in this order."""

    NETWORK = "network", "Network"
    STORAGE = "storage", "Storage"
    CLUSTER = "cluster", "Cluster"
    OBSERVABILITY = "observability", "Observability"


class JobKind(models.TextChoices):
    LAUNCH = "launch", "Launch"
    RETRY = "retry", "Retry"
    DELETE = "delete", "Delete"


class JobStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


# The lifecycle's legal moves; Cluster.transition refuses anything else.
TRANSITIONS: dict[str, frozenset[str]] = {
    ClusterState.SCHEDULED: frozenset({ClusterState.CREATING, ClusterState.FAILED, ClusterState.DELETING}),
    ClusterState.CREATING: frozenset({ClusterState.READY, ClusterState.FAILED}),
    ClusterState.READY: frozenset({ClusterState.DELETING}),
    ClusterState.FAILED: frozenset({ClusterState.SCHEDULED, ClusterState.DELETING}),
    ClusterState.DELETING: frozenset({ClusterState.DELETED, ClusterState.FAILED}),
    ClusterState.DELETED: frozenset(),
}

# CloudFormation stack statuses, grouped by what they mean for the portal.
STACK_DONE = frozenset({"CREATE_COMPLETE", "UPDATE_COMPLETE"})
STACK_FAILED = frozenset({
    "CREATE_FAILED", "ROLLBACK_COMPLETE", "ROLLBACK_FAILED",
    "DELETE_FAILED", "UPDATE_ROLLBACK_COMPLETE", "UPDATE_ROLLBACK_FAILED", "IMPORT_ROLLBACK_COMPLETE",
})
STACK_GONE = frozenset({"DELETE_COMPLETE"})
