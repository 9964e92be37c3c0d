"""The curated list of escalation targets: the teams behind the account team in the engagement model (the rows
are the core's ``EscalationTarget``, which the access policy reads for specialists).

Loaded by a data migration and by ``seed_demo``; editing a name here and migrating again (or running the
demo seed) updates the row with the same slug. New teams are added here, not in the admin, so every
environment routes escalations to the same places.
"""
from __future__ import annotations

TARGETS: tuple[dict, ...] = (
    {"slug": "frameworks", "name": "WWSO Frameworks specialists", "kind": "specialists",
     "description": "Distributed-training frameworks, NCCL/EFA tuning, Neuron SDK, performance."},
    {"slug": "ec2", "name": "Amazon EC2 service team", "kind": "service_team",
     "description": "Instances, capacity reservations, Capacity Blocks, EFA hardware."},
    {"slug": "s3", "name": "Amazon S3 service team", "kind": "service_team",
     "description": "Buckets, throughput, data repository associations from the S3 side."},
    {"slug": "fsx", "name": "Amazon FSx service team", "kind": "service_team",
     "description": "FSx for Lustre and OpenZFS: throughput, metadata, striping."},
    {"slug": "hyperpod", "name": "SageMaker HyperPod service team", "kind": "service_team",
     "description": "HyperPod clusters, lifecycle scripts, node recovery."},
    {"slug": "account-manager", "name": "Account manager", "kind": "account",
     "description": "Commercial questions, credits, contracts; triage of escalations without a team."},
)

# Escalations recorded before targets existed were a flag and a reason: the account team triages them.
LEGACY_TARGET = "account-manager"


def sync(model) -> dict[str, object]:
    """Create or update the curated targets on ``model`` (the live or the historical model)."""
    rows = {}
    for spec in TARGETS:
        row, _ = model.objects.update_or_create(
            slug=spec["slug"], defaults={k: v for k, v in spec.items() if k != "slug"}
        )
        rows[spec["slug"]] = row
    return rows
