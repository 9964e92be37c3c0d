"""Demo seed of workloads, quotas and capacity, after the case study: 127 p5.48xlarge and 24 trn1.32xlarge
across the 12 organizations, reservations (some ending within 14 days) and two pending change requests.
Idempotent: rows are looked up by their natural keys and never changed on a second run."""
from __future__ import annotations

import datetime
from decimal import Decimal

from django.utils import timezone

from sandbox.program import ORGANIZATIONS
from workloads.choices import RequestStatus
from workloads.models import CapacityReservation, InstanceQuota, QuotaChangeRequest, Workload

P5, TRN1 = "p5.48xlarge", "trn1.32xlarge"
GPU_STACK = [{"name": "cuda", "version": "12.4"}, {"name": "nccl", "version": "2.21.5"},
             {"name": "aws-ofi-nccl", "version": "1.11.0"}, {"name": "efa-installer", "version": "1.34.0"},
             {"name": "pytorch", "version": "2.4.0"}]
NEURON_STACK = [{"name": "neuron-sdk", "version": "2.20.0"}, {"name": "efa-installer", "version": "1.34.0"},
                {"name": "pytorch", "version": "2.1.2"}]


def fw(name, version, label=None):
    item = {"name": name, "version": version}
    if label:
        item["label"] = label
    return item


# slug: (workload name, fields, quota (type, region, count))
WORKLOADS = {
    "kotoba-labs": ("Kotoba-100B", dict(model_family="Own (Llama-style)", architecture="dense", parameters_billions=100,
                    modality="text", target_languages=["ja", "en"], training_stage="pretraining",
                    frameworks=[fw("megatron-lm", "0.8.0")], orchestrator="parallelcluster_slurm",
                    fsx_lustre_size_gib=48000, fsx_lustre_throughput=250, s3_bucket="kotoba-pretrain-corpus",
                    s3_prefix="v3/", data_repository_path="/data", openzfs_home_gib=512), (P5, "ap-northeast-1", 16)),
    "shirakawa-ai": ("Shirakawa-405B-tourism", dict(model_family="Llama 3.1", architecture="dense", parameters_billions=405,
                     modality="text", target_languages=["multi"], training_stage="continued_pretraining",
                     frameworks=[fw("nemo", "2.0.0")], orchestrator="hyperpod_slurm", fsx_lustre_size_gib=96000,
                     fsx_lustre_throughput=500, s3_bucket="shirakawa-ckpt", s3_prefix="405b/",
                     data_repository_path="/fsx"), (P5, "ap-northeast-1", 36)),  # 32 on the block, 4 on HyperPod
    "mirai-code": ("Mirai-Code-8B", dict(model_family="Llama 3.1", architecture="dense", parameters_billions=8,
                   modality="code", target_languages=["ja", "code"], training_stage="fine_tuning",
                   frameworks=[fw("torchtitan", "0.1.0"), fw("pytorch-fsdp", "2.4.0")], orchestrator="hyperpod_eks",
                   fsx_lustre_size_gib=4800, fsx_lustre_throughput=250), (P5, "ap-northeast-1", 8)),
    "sakura-vision": ("Sakura-VL-32B", dict(model_family="Own", architecture="multimodal", parameters_billions=32,
                      modality="vision_language", target_languages=["ja", "en"], training_stage="pretraining",
                      frameworks=[fw("nxd", "0.9.0")], software=NEURON_STACK, orchestrator="parallelcluster_slurm",
                      target_instance_type=TRN1, fsx_lustre_size_gib=24000, fsx_lustre_throughput=250,
                      s3_bucket="sakura-vl-data", s3_prefix="images/", data_repository_path="/data"), (TRN1, "us-east-1", 16)),
    "aozora-docs": ("Aozora-DocVLM", dict(model_family="Qwen2-VL", architecture="multimodal", parameters_billions=7,
                    modality="vision_language", target_languages=["ja"], training_stage="fine_tuning",
                    frameworks=[fw("deepspeed", "0.14.4")], orchestrator="parallelcluster_slurm"), (P5, "ap-northeast-1", 8)),
    "hokuto-speech": ("Hokuto-ASR", dict(model_family="Own (Conformer)", architecture="speech", parameters_billions=2,
                      modality="speech", target_languages=["ja"], training_stage="pretraining",
                      frameworks=[fw("nemo", "2.0.0")], orchestrator="eks"), (P5, "ap-northeast-1", 4)),
    "tsubasa-robotics": ("Tsubasa-VLA", dict(model_family="Own", architecture="vla", parameters_billions=7,
                         modality="vision_language", target_languages=["en"], training_stage="pretraining",
                         frameworks=[fw("pytorch-fsdp", "2.4.0")], orchestrator="hyperpod_eks"), (P5, "us-west-2", 8)),
    "kumo-finance": ("Kumo-13B", dict(model_family="Llama 2", architecture="dense", parameters_billions=13,
                     modality="text", target_languages=["ja"], training_stage="continued_pretraining",
                     frameworks=[fw("megatron-lm", "0.8.0")], orchestrator="parallelcluster_slurm"), (P5, "ap-northeast-1", 8)),
    "minato-medical": ("Minato-Med-70B", dict(model_family="Llama 3.1", architecture="dense", parameters_billions=70,
                       modality="text", target_languages=["ja", "en"], training_stage="continued_pretraining",
                       frameworks=[fw("nemo", "2.0.0")], orchestrator="hyperpod_slurm"), (P5, "ap-northeast-1", 16)),
    "yamabiko-research": ("Yamabiko-MoE-8x22B", dict(model_family="Mixtral-style", architecture="moe", parameters_billions=176,
                          modality="text", target_languages=["ja", "en"], training_stage="pretraining",
                          frameworks=[fw("megatron-lm", "0.9.0")], orchestrator="parallelcluster_slurm"), (P5, "ap-northeast-1", 16)),
    "kaze-weather": ("Kaze-Climate", dict(model_family="Own (ViT)", architecture="other", architecture_other="Vision transformer",
                     parameters_billions=Decimal("1.5"), modality="time_series", training_stage="pretraining",
                     frameworks=[fw("other", "0.4", label="Modulus")], orchestrator="parallelcluster_slurm"), (P5, "us-east-2", 7)),
    "hoshi-materials": ("Hoshi-Materials", dict(model_family="Own (graph transformer)", architecture="other",
                        architecture_other="Graph transformer", parameters_billions=3, modality="other",
                        training_stage="pretraining", frameworks=[fw("nxd", "0.9.0")], software=NEURON_STACK,
                        target_instance_type=TRN1, orchestrator="parallelcluster_slurm"), (TRN1, "us-east-1", 8)),
}

# (slug, reservation id, kind, count, zone, days from today to start, days from today to end)
RESERVATIONS = (
    ("kotoba-labs", "cr-0a1b2c3d4e5f60001", "odcr", 16, "ap-northeast-1a", -60, 120),
    ("shirakawa-ai", "cr-0a1b2c3d4e5f60002", "capacity_block", 32, "ap-northeast-1c", -20, 10),
    ("mirai-code", "cr-0a1b2c3d4e5f60003", "capacity_block", 8, "ap-northeast-1a", -7, 6),
    # HyperPod organizations reserve through SageMaker training plans, not EC2 reservations.
    ("sakura-vision", "sakura-trn1-cycle2", "training_plan", 16, "us-east-1b", -30, 90),
    ("yamabiko-research", "cr-0a1b2c3d4e5f60005", "capacity_block", 16, "ap-northeast-1d", -13, 1),
    ("minato-medical", "cr-0a1b2c3d4e5f60006", "odcr", 16, "ap-northeast-1c", -40, 60),
    ("hoshi-materials", "hoshi-trn1-cycle2", "training_plan", 8, "us-east-1b", -10, 45),
)

PENDING = (
    ("kotoba-labs", 24, "Scaling the 100B run from 16 to 24 nodes for the final 400B tokens, to finish within the cycle."),
    ("mirai-code", 4, "Fine-tuning needs fewer nodes than planned: hand 4 instances back to the program."),
)


def seed(context: dict) -> None:
    orgs = context["organizations"]
    leads = context["leads"]
    pm = context["pm"]
    lead_of = {spec.slug: leads[spec.lead] for spec in ORGANIZATIONS}
    today = timezone.localdate()
    start, end = today - datetime.timedelta(days=60), today + datetime.timedelta(days=120)
    quotas = {}
    for slug, (name, fields, (itype, region, count)) in WORKLOADS.items():
        org = orgs[slug]
        defaults = {"target_instance_type": P5, "target_instance_count": count, "software": GPU_STACK,
                    "status": "training", "lead_sa": lead_of[slug], **fields}
        workload, created = Workload.objects.get_or_create(organization=org, name=name, defaults=defaults)
        if created and slug == "kotoba-labs":
            # A second version, so the document shows a readable history from the start.
            workload.frameworks = [fw("megatron-lm", "0.9.0"), fw("other", "0.7", label="Megatron-Energon")]
            workload.target_instance_count = 16
            workload.status = "training"
            workload._history_user = lead_of[slug]
            workload.save()
        quotas[slug], _ = InstanceQuota.objects.get_or_create(
            organization=org, instance_type_name=itype, region=region,
            defaults={"count": count, "start": start, "end": end, "notes": "Cycle 2 allocation."},
        )
    for slug, rid, kind, count, zone, from_day, to_day in RESERVATIONS:
        quota = quotas[slug]
        if kind == "training_plan":
            rid = f"arn:aws:sagemaker:{quota.region}:{orgs[slug].aws_account_id}:training-plan/{rid}"
        CapacityReservation.objects.get_or_create(
            reservation_id=rid,
            defaults={"organization": orgs[slug], "kind": kind, "instance_type_name": quota.instance_type_name, "count": count,
                      "region": quota.region, "availability_zone": zone, "quota": quota,
                      "start": today + datetime.timedelta(days=from_day), "end": today + datetime.timedelta(days=to_day)},
        )
    for slug, requested, justification in PENDING:
        quota = quotas[slug]
        QuotaChangeRequest.objects.get_or_create(
            organization=orgs[slug], justification=justification,
            defaults={"quota": quota, "instance_type_name": quota.instance_type_name, "region": quota.region,
                      "current_count": quota.count, "requested_count": requested, "start": quota.start, "end": quota.end,
                      "status": RequestStatus.PENDING, "requested_by": lead_of[slug]},
        )
    context["workloads"] = {w.organization.slug: w for w in Workload.objects.select_related("organization")}
    context.setdefault("pm", pm)
