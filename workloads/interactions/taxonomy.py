"""The curated taxonomy of challenges such programs meet, and the text signatures that suggest them.

A signature is ``{"match": regex}`` or ``{"match": regex, "unless": regex}``; both are matched
case-insensitively against an interaction's summary and body. Names and descriptions are stored in English and
shown in the reader's language (``ChallengeTag.label``, ``ChallengeTag.explanation``).
"""
from __future__ import annotations

from django.utils.translation import gettext_noop


def _tag(slug: str, name: str, description: str, *signatures: str | tuple[str, str]) -> dict:
    """One entry; a signature is a regex, or a (regex, unless-regex) pair."""
    return {
        "slug": slug, "name": name, "description": description,
        "signatures": [{"match": sig} if isinstance(sig, str) else {"match": sig[0], "unless": sig[1]}
                       for sig in signatures],
    }


TAXONOMY: tuple[dict, ...] = (
    _tag("nccl-configuration", gettext_noop("NCCL configuration"),
         gettext_noop("NCCL environment, plugins and topology: falling back to sockets, wrong NCCL_* settings."),
         r"NET/Socket",
         r"Using network Socket",
         r"NCCL WARN",
         r"\bNCCL_(SOCKET_IFNAME|PROTO|ALGO|DEBUG|NET)\b"),
    _tag("efa-networking", gettext_noop("EFA networking"),
         gettext_noop("Elastic Fabric Adapter: the provider, aws-ofi-nccl, security group rules, libfabric."),
         (r"NCCL INFO", r"Selected Provider is efa|Using network AWS Libfabric"),
         r"\bFI_PROVIDER\b|\bFI_EFA_",
         r"aws-ofi-nccl|libfabric|fi_info",
         r"\bEFA\b.*(security group|not found|missing|fail)"),
    _tag("fsx-lustre-throughput", gettext_noop("FSx for Lustre throughput"),
         gettext_noop("Storage throughput per TiB, metadata load, striping, small files."),
         r"FSx|Lustre",
         r"throughput per (unit|TiB)|MB/s/TiB"),
    _tag("s3-data-repository", gettext_noop("S3 data repository association"),
         gettext_noop("Linking FSx for Lustre to S3: auto import/export, lazy loading, release."),
         r"data repository association|\bDRA\b|auto[- ]?(import|export)"),
    _tag("capacity-quota", gettext_noop("Capacity and quota"),
         gettext_noop("Instance quotas, On-Demand Capacity Reservations, Capacity Blocks for ML."),
         r"InsufficientInstanceCapacity|capacity (block|reservation)|\bODCR\b|\bcr-[0-9a-f]{8,}",
         r"(service )?quota|VcpuLimitExceeded"),
    _tag("container-images", gettext_noop("Container images"),
         gettext_noop("Building, pushing and pulling training images; ECR; image size; driver mismatch."),
         r"\bECR\b|docker|enroot|pyxis|container image|Dockerfile"),
    _tag("slurm", gettext_noop("Slurm"),
         gettext_noop("Scheduling, partitions, sbatch/srun, ParallelCluster queues."),
         r"\bslurm|\bsbatch\b|\bsrun\b|\bsqueue\b|\bscontrol\b"),
    _tag("checkpointing", gettext_noop("Checkpointing"),
         gettext_noop("Saving and restoring training state: speed, consistency, storage."),
         r"checkpoint"),
    _tag("hyperpod-node-recovery", gettext_noop("HyperPod node recovery"),
         gettext_noop("SageMaker HyperPod health checks, automatic node replacement, resume."),
         r"HyperPod.*(recover|replace|reboot|fault)|node recovery|auto[- ]resume"),
    _tag("neuron-sdk", gettext_noop("Neuron SDK"),
         gettext_noop("Trainium and Inferentia: Neuron compiler, runtime, NeuronX Distributed."),
         r"\bNeuron|neuronx|neuron-cc|Trainium|trn1"),
    _tag("iam-vpc", gettext_noop("IAM and VPC"),
         gettext_noop("Roles, policies, trust relationships, subnets, security groups, endpoints."),
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
