"""Fixed vocabularies of clusters."""
from django.db import models
from django.utils.translation import gettext_lazy as _


class ClusterState(models.TextChoices):
    SCHEDULED = "scheduled", _("Scheduled")
    CREATING = "creating", _("Creating")
    READY = "ready", _("Ready")
    FAILED = "failed", _("Failed")
    DELETING = "deleting", _("Deleting")
    DELETED = "deleted", _("Deleted")


class Orchestrator(models.TextChoices):
    PARALLELCLUSTER = "parallelcluster", _("AWS ParallelCluster (Slurm)")
    HYPERPOD = "hyperpod", _("SageMaker HyperPod (Slurm)")
    HYPERPOD_EKS = "hyperpod-eks", _("SageMaker HyperPod (EKS)")


class StackRole(models.TextChoices):
    """What a stack is for; a full-stack launch creates them in this order."""

    NETWORK = "network", _("Network")
    STORAGE = "storage", _("Storage")
    CLUSTER = "cluster", _("Cluster")
    OBSERVABILITY = "observability", _("Observability")


class ClusterJobKind(models.TextChoices):
    LAUNCH = "launch", _("Launch")
    RETRY = "retry", _("Retry")
    DELETE = "delete", _("Delete")


class JobStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")


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
