"""Demo interactions, modeled on the case study: Kotoba Labs' NCCL falling back to sockets (resolved, with its
lesson), Shirakawa AI's FSx throughput and a critical open EFA issue. Idempotent."""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from workloads.interactions import services
from workloads.interactions.models import ChallengeTag, Interaction
from workloads.interactions.taxonomy import ensure_taxonomy
from workloads.models import Workload

INTERACTIONS = (
    {
        "org": "kotoba-labs", "kind": "support_case", "summary": "All-reduce at 4 GB/s: NCCL fell back to sockets",
        "body": "nccl-tests on 2 × p5.48xlarge reach only 4 GB/s busbw. Log excerpt:\n\n```\n"
                "NCCL INFO NET/Socket : Using [0]eth0:10.1.0.12<0>\nNCCL INFO Using network Socket\n```",
        "status": "resolved", "severity": "high", "visibility": "shared", "days_ago": 21,
        "tags": ["nccl-configuration", "efa-networking"],
        "resolution": "The container image lacked the aws-ofi-nccl plugin; rebuilt on the EFA-enabled base image.",
        "lesson": "Check `NCCL INFO NET/OFI Selected Provider is efa` in the first run of every new image; "
                  "a missing aws-ofi-nccl plugin silently falls back to TCP sockets.",
    },
    {
        "org": "shirakawa-ai", "kind": "meeting", "summary": "Checkpoints of the 405B model take 40 minutes",
        "body": "FSx for Lustre at 125 MB/s/TiB; checkpoint writes saturate throughput.",
        "status": "waiting_customer", "severity": "normal", "visibility": "shared", "days_ago": 9,
        "tags": ["fsx-lustre-throughput", "checkpointing"], "resolution": "", "lesson": "",
    },
    {
        "org": "sakura-vision", "kind": "support_case", "summary": "EFA devices missing on 3 of 16 trn1 nodes",
        "body": "`fi_info -p efa` returns nothing on three nodes after the last AMI update.",
        "status": "waiting_aws", "severity": "critical", "visibility": "shared", "days_ago": 3,
        "tags": ["efa-networking", "neuron-sdk"], "resolution": "", "lesson": "",
    },
    {
        "org": "kotoba-labs", "kind": "chat", "summary": "Capacity block renewal for December",
        "body": "Internal: the program may shift 8 nodes from another participant.",
        "status": "open", "severity": "normal", "visibility": "internal", "days_ago": 5,
        "tags": ["capacity-quota"], "resolution": "", "lesson": "",
    },
    {
        "org": "mirai-code", "kind": "onboarding", "summary": "Onboarding: ParallelCluster and Slurm basics",
        "body": "Walked through sbatch, srun --label, and the shared FSx mount.",
        "status": "resolved", "severity": "low", "visibility": "shared", "days_ago": 30,
        "tags": ["slurm"], "resolution": "Team launched its first job.",
        "lesson": "New teams need a one-page srun/sbatch cheat sheet with the partition names on day one.",
    },
)



def seed(context: dict) -> None:
    ensure_taxonomy(ChallengeTag)
    orgs = context["organizations"]
    leads = context["leads"]
    tags = {t.slug: t for t in ChallengeTag.objects.all()}
    now = timezone.now()
    for spec in INTERACTIONS:
        org = orgs[spec["org"]]
        if Interaction.objects.filter(organization=org, summary=spec["summary"]).exists():
            continue
        owner = org.memberships.filter(role="lead_sa").first()
        owner = owner.user if owner else leads["lead"]
        occurred = now - timedelta(days=spec["days_ago"])
        workload = Workload.objects.filter(organization=org).order_by("pk").first()
        obj = Interaction.objects.create(
            organization=org, workload=workload, kind=spec["kind"], summary=spec["summary"], body=spec["body"], occurred_at=occurred,
            status=spec["status"], severity=spec["severity"], visibility=spec["visibility"], owner=owner,
            created_by=owner, resolution=spec["resolution"], lesson=spec["lesson"], last_activity_at=occurred,
            first_response_at=occurred + timedelta(hours=2),
            resolved_at=occurred + timedelta(days=2) if spec["status"] == "resolved" else None,
        )
        obj.tags.set([tags[s] for s in spec["tags"]])
        services.created(obj, owner)

