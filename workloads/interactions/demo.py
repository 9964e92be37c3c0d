"""Demo interactions and enablement, modeled on the case study: Kotoba Labs' NCCL falling back to
sockets (resolved, with its lesson), Shirakawa AI's FSx throughput, a critical open EFA issue, and
the program's distributed-training workshop (84 attendees, average 4.75). Idempotent."""
from __future__ import annotations

import datetime
from datetime import timedelta

from django.utils import timezone

from portal import timeline
from portal.choices import TimelineKind
from workloads.interactions import services
from workloads.interactions.taxonomy import ensure_taxonomy
from workloads.models import ChallengeTag, EnablementAttendance, EnablementSession, Interaction, Workload

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

WORKSHOP_TOPIC = "Distributed training on AWS: P5, EFA and FSx for Lustre"


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
    _workshop(orgs, context["pm"])


def _workshop(orgs: dict, pm) -> None:
    session, created = EnablementSession.objects.get_or_create(
        topic=WORKSHOP_TOPIC,
        defaults={"kind": "workshop", "date": datetime.date(2026, 10, 16), "created_by": pm,
                  "description": "Hands-on: launching a cluster from the reference architecture, running nccl-tests, "
                                 "reading the EFA provider line, FSx for Lustre throughput."},
    )
    if not created:
        return
    session.audience.set(orgs.values())
    # 84 participants from the twelve organizations: 63 gave 5, 21 gave 4 (average 4.75).
    org_list = list(orgs.values())
    EnablementAttendance.objects.bulk_create(
        EnablementAttendance(session=session, organization=org_list[i % len(org_list)],
                             attendee=f"Participant {i + 1:02d}", satisfaction=5 if i < 63 else 4)
        for i in range(84)
    )
    for org in org_list:
        timeline.record(org, TimelineKind.ENABLEMENT, f"Workshop: {WORKSHOP_TOPIC}", source=session, actor=pm)
