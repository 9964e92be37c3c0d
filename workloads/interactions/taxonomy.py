"""The curated taxonomy of challenges such programs meet, and the text signatures that suggest them.

A signature is ``{"match": regex}`` or ``{"match": regex, "unless": regex}``; both are matched
case-insensitively against an interaction's summary and body.
"""
from __future__ import annotations

TAXONOMY: tuple[dict, ...] = (
    {
        "slug": "nccl-configuration",
        "name": "NCCL configuration",
        "description": "NCCL environment, plugins and topology: falling back to sockets, wrong NCCL_* settings.",
        "signatures": [
            {"match": r"NET/Socket"},
            {"match": r"Using network Socket"},
            {"match": r"NCCL WARN"},
            {"match": r"\bNCCL_(SOCKET_IFNAME|PROTO|ALGO|DEBUG|NET)\b"},
        ],
    },
    {
        "slug": "efa-networking",
        "name": "EFA networking",
        "description": "Elastic Fabric Adapter: the provider, aws-ofi-nccl, security group rules, libfabric.",
        "signatures": [
            {"match": r"NCCL INFO", "unless": r"Selected Provider is efa|Using network AWS Libfabric"},
            {"match": r"\bFI_PROVIDER\b|\bFI_EFA_"},
            {"match": r"aws-ofi-nccl|libfabric|fi_info"},
            {"match": r"\bEFA\b.*(security group|not found|missing|fail)"},
        ],
    },
    {
        "slug": "fsx-lustre-throughput",
        "name": "FSx for Lustre throughput",
        "description": "Storage throughput per TiB, metadata load, striping, small files.",
        "signatures": [{"match": r"FSx|Lustre"}, {"match": r"throughput per (unit|TiB)|MB/s/TiB"}],
    },
    {
        "slug": "s3-data-repository",
        "name": "S3 data repository association",
        "description": "Linking FSx for Lustre to S3: auto import/export, lazy loading, release.",
        "signatures": [{"match": r"data repository association|\bDRA\b|auto[- ]?(import|export)"}],
    },
    {
        "slug": "capacity-quota",
        "name": "Capacity and quota",
        "description": "Instance quotas, On-Demand Capacity Reservations, Capacity Blocks for ML.",
        "signatures": [
            {"match": r"InsufficientInstanceCapacity|capacity (block|reservation)|\bODCR\b|\bcr-[0-9a-f]{8,}"},
            {"match": r"(service )?quota|VcpuLimitExceeded"},
        ],
    },
    {
        "slug": "container-images",
        "name": "Container images",
        "description": "Building, pushing and pulling training images; ECR; image size; driver mismatch.",
        "signatures": [{"match": r"\bECR\b|docker|enroot|pyxis|container image|Dockerfile"}],
    },
    {
        "slug": "slurm",
        "name": "Slurm",
        "description": "Scheduling, partitions, sbatch/srun, ParallelCluster queues.",
        "signatures": [{"match": r"\bslurm|\bsbatch\b|\bsrun\b|\bsqueue\b|\bscontrol\b"}],
    },
    {
        "slug": "checkpointing",
        "name": "Checkpointing",
        "description": "Saving and restoring training state: speed, consistency, storage.",
        "signatures": [{"match": r"checkpoint"}],
    },
    {
        "slug": "hyperpod-node-recovery",
        "name": "HyperPod node recovery",
        "description": "SageMaker HyperPod health checks, automatic node replacement, resume.",
        "signatures": [{"match": r"HyperPod.*(recover|replace|reboot|fault)|node recovery|auto[- ]resume"}],
    },
    {
        "slug": "neuron-sdk",
        "name": "Neuron SDK",
        "description": "Trainium and Inferentia: Neuron compiler, runtime, NeuronX Distributed.",
        "signatures": [{"match": r"\bNeuron|neuronx|neuron-cc|Trainium|trn1"}],
    },
    {
        "slug": "iam-vpc",
        "name": "IAM and VPC",
        "description": "Roles, policies, trust relationships, subnets, security groups, endpoints.",
        "signatures": [
            {"match": r"AccessDenied|not authorized to perform|\bIAM\b|AssumeRole"},
            {"match": r"\bVPC\b|subnet|security group|NAT gateway"},
        ],
    },
)


def ensure_taxonomy(tag_model) -> int:
    """Create the curated tags that are missing (idempotent); returns how many were created."""
    created = 0
    for spec in TAXONOMY:
        _, was_created = tag_model.objects.get_or_create(
            slug=spec["slug"],
            defaults={"name": spec["name"], "description": spec["description"], "signatures": spec["signatures"]},
        )
        created += was_created
    return created
