"""Fixed vocabularies of workloads, quotas and capacity. Each list ends with "other" where the domain is open."""
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


class Architecture(models.TextChoices):
    DENSE = "dense", _("Dense transformer")
    MOE = "moe", _("Mixture of experts")
    MULTIMODAL = "multimodal", _("Multimodal")
    VLA = "vla", _("Vision-language-action")
    SPEECH = "speech", _("Speech")
    DIFFUSION = "diffusion", _("Diffusion")
    OTHER = "other", _("Other")


class Modality(models.TextChoices):
    TEXT = "text", _("Text")
    CODE = "code", _("Code")
    VISION_LANGUAGE = "vision_language", _("Vision and language")
    SPEECH = "speech", _("Speech")
    TIME_SERIES = "time_series", _("Time series / scientific")
    OTHER = "other", _("Other")


class TrainingStage(models.TextChoices):
    PRETRAINING = "pretraining", _("Pre-training")
    CONTINUED = "continued_pretraining", _("Continued pre-training")
    FINE_TUNING = "fine_tuning", _("Fine-tuning")
    OTHER = "other", _("Other")


class Orchestrator(models.TextChoices):
    PCLUSTER_SLURM = "parallelcluster_slurm", _("AWS ParallelCluster (Slurm)")
    HYPERPOD_SLURM = "hyperpod_slurm", _("SageMaker HyperPod (Slurm)")
    HYPERPOD_EKS = "hyperpod_eks", _("SageMaker HyperPod (EKS)")
    EKS = "eks", _("Amazon EKS")
    OTHER = "other", _("Other")


class WorkloadStatus(models.TextChoices):
    PLANNING = "planning", _("Planning")
    PREPARING = "preparing", _("Preparing")
    TRAINING = "training", _("Training")
    EVALUATING = "evaluating", _("Evaluating")
    COMPLETED = "completed", _("Completed")
    PAUSED = "paused", _("Paused")


class FsxThroughput(models.IntegerChoices):
    """FSx for Lustre PERSISTENT_2 throughput per unit of storage (MB/s/TiB)."""

    T125 = 125, _("125 MB/s/TiB")
    T250 = 250, _("250 MB/s/TiB")
    T500 = 500, _("500 MB/s/TiB")
    T1000 = 1000, _("1000 MB/s/TiB")


class ReservationKind(models.TextChoices):
    ODCR = "odcr", _("On-Demand Capacity Reservation")
    CAPACITY_BLOCK = "capacity_block", _("Capacity Block for ML")
    # HyperPod does not draw on EC2 reservations: its reserved capacity comes from a SageMaker training plan.
    TRAINING_PLAN = "training_plan", _("SageMaker training plan (HyperPod)")


class RequestStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    APPROVED = "approved", pgettext_lazy("state", "Approved")  # not the "Approved" (at) of a date column
    REJECTED = "rejected", _("Rejected")


# Structured lists kept in JSON: each item is {"name": <key>, "version": "..."} ("label" too for "other").
FRAMEWORKS = {
    "megatron-lm": "Megatron-LM",
    "nemo": "NVIDIA NeMo",
    "torchtitan": "torchtitan",
    "deepspeed": "DeepSpeed",
    "pytorch-fsdp": "PyTorch FSDP",
    "nxd": "NxD / Neuron (Trainium)",
    "hf-transformers": "Hugging Face Transformers",
    "other": _("Other"),
}

SOFTWARE_COMPONENTS = {
    "cuda": "CUDA",
    "neuron-sdk": "Neuron SDK",
    "nccl": "NCCL",
    "aws-ofi-nccl": "aws-ofi-nccl",
    "efa-installer": _("EFA installer"),
    "pytorch": "PyTorch",
    "container-image": _("Container image"),
    "other": _("Other"),
}

LANGUAGES = {
    "ja": _("Japanese"),
    "en": _("English"),
    "zh": _("Chinese"),
    "ko": _("Korean"),
    "code": _("Programming languages"),
    "multi": _("Many (multilingual)"),
}

EXPIRY_THRESHOLDS = (14, 7, 1)
