"""The curated taxonomy of challenges such programs meet, and the text signatures that suggest them.

A signature is ``{"match": regex}`` or ``{"match": regex, "unless": regex}``; both are matched
case-insensitively against an interaction's summary and body.
"""
from __future__ import annotations


def _tag(slug: str, name: str, description: str, *signatures: str | tuple[str, str]) -> dict:
    """One entry; a signature is a regex, or a (regex, unless-regex) pair."""
    return {
        "slug": slug, "name": name, "description": description,
        "signatures": [{"match": sig} if isinstance(sig, str) else {"match": sig[0], "unless": sig[1]}
                       for sig in signatures],
    }


TAXONOMY: tuple[dict, ...] = (
    _tag("nccl-configuration", "NCCL configuration",
         "NCCL environment, plugins and topology: falling back to sockets, wrong NCCL_* settings.",
         r"NET/Socket",
         r"Using network Socket",
         r"NCCL WARN",
         r"\bNCCL_(SOCKET_IFNAME|PROTO|ALGO|DEBUG|NET)\b"),
    _tag("efa-networking", "EFA networking",
         "Elastic Fabric Adapter: the provider, aws-ofi-nccl, security group rules, libfabric.",
         (r"NCCL INFO", r"Selected Provider is efa|Using network AWS Libfabric"),
         r"\bFI_PROVIDER\b|\bFI_EFA_",
         r"aws-ofi-nccl|libfabric|fi_info",
         r"\bEFA\b.*(security group|not found|missing|fail)"),
    _tag("fsx-lustre-throughput", "FSx for Lustre throughput",
         "Storage throughput per TiB, metadata load, striping, small files.",
         r"FSx|Lustre",
         r"throughput per (unit|TiB)|MB/s/TiB"),
    _tag("s3-data-repository", "S3 data repository association",
         "Linking FSx for Lustre to S3: auto import/export, lazy loading, release.",
         r"data repository association|\bDRA\b|auto[- ]?(import|export)"),
    _tag("capacity-quota", "Capacity and quota",
         "Instance quotas, On-Demand Capacity Reservations, Capacity Blocks for ML.",
         r"InsufficientInstanceCapacity|capacity (block|reservation)|\bODCR\b|\bcr-[0-9a-f]{8,}",
         r"(service )?quota|VcpuLimitExceeded"),
    _tag("container-images", "Container images",
         "Building, pushing and pulling training images; ECR; image size; driver mismatch.",
         r"\bECR\b|docker|enroot|pyxis|container image|Dockerfile"),
    _tag("slurm", "Slurm",
         "Scheduling, partitions, sbatch/srun, ParallelCluster queues.",
         r"\bslurm|\bsbatch\b|\bsrun\b|\bsqueue\b|\bscontrol\b"),
    _tag("checkpointing", "Checkpointing",
         "Saving and restoring training state: speed, consistency, storage.",
         r"checkpoint"),
    _tag("hyperpod-node-recovery", "HyperPod node recovery",
         "SageMaker HyperPod health checks, automatic node replacement, resume.",
         r"HyperPod.*(recover|replace|reboot|fault)|node recovery|auto[- ]resume"),
    _tag("neuron-sdk", "Neuron SDK",
         "Trainium and Inferentia: Neuron compiler, runtime, NeuronX Distributed.",
         r"\bNeuron|neuronx|neuron-cc|Trainium|trn1"),
    _tag("iam-vpc", "IAM and VPC",
         "Roles, policies, trust relationships, subnets, security groups, endpoints.",
         r"AccessDenied|not authorized to perform|\bIAM\b|AssumeRole",
         r"\bVPC\b|subnet|security group|NAT gateway"),
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
