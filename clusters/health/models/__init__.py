"""What the portal keeps of cluster health, one module per concern: reports, node verdicts, the current state and
pushes (:mod:`.reports`), GPU faults (:mod:`.faults`), NCCL validation jobs and runs (:mod:`.validation`), each
cluster's ingestion settings and tokens (:mod:`.config`), the controller agent's
work (:mod:`.agent`), and the SNS alert endpoint's memory (:mod:`.alerts`).
Everything is re-exported here: ``from clusters.health.models import GpuFault`` stays the way to import."""
from clusters.health.models.agent import AgentWorkItem
from clusters.health.models.alerts import SnsMessage
from clusters.health.models.config import TOKEN_PREFIX, ClusterHealthConfig, hash_token
from clusters.health.models.faults import INTERACTION_OTHER_ORGANIZATION, GpuFault, check_same_organization, stamp_weeks
from clusters.health.models.reports import ClusterHealthState, HealthPush, HealthReport, NodeHealth, PushStatus
from clusters.health.models.slurm import SlurmNode
from clusters.health.models.validation import JOB_TOKEN_PREFIX, ValidationJob, ValidationRun

__all__ = [
    "AgentWorkItem", "INTERACTION_OTHER_ORGANIZATION", "JOB_TOKEN_PREFIX", "TOKEN_PREFIX", "ClusterHealthConfig", "ClusterHealthState",
    "GpuFault", "HealthPush", "HealthReport", "NodeHealth", "PushStatus", "SlurmNode", "SnsMessage",
    "ValidationJob", "ValidationRun", "check_same_organization", "hash_token", "stamp_weeks",
]
