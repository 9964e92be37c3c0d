"""Fixed vocabularies of workloads, quotas and capacity. Each list ends with "other" where the domain is open."""
from django.db import models


class Architecture(models.TextChoices):
    DENSE = "dense", "Dense transformer"
    MOE = "moe", "Mixture of experts"
    MULTIMODAL = "multimodal", "Multimodal"
    VLA = "vla", "Vision-language-action"
    SPEECH = "speech", "Speech"
    DIFFUSION = "diffusion", "Diffusion"
    OTHER = "other", "Other"


class Modality(models.TextChoices):
    TEXT = "text", "Text"
    CODE = "code", "Code"
    VISION_LANGUAGE = "vision_language", "Vision and language"
    SPEECH = "speech", "Speech"
    TIME_SERIES = "time_series", "Time series / scientific"
    OTHER = "other", "Other"


class TrainingStage(models.TextChoices):
    PRETRAINING = "pretraining", "Pre-training"
    CONTINUED = "continued_pretraining", "Continued pre-training"
    FINE_TUNING = "fine_tuning", "Fine-tuning"
    OTHER = "other", "Other"


class Orchestrator(models.TextChoices):
    PCLUSTER_SLURM = "parallelcluster_slurm", "AWS ParallelCluster (Slurm)"
    HYPERPOD_SLURM = "hyperpod_slurm", "SageMaker HyperPod (Slurm)"
    HYPERPOD_EKS = "hyperpod_eks", "SageMaker HyperPod (EKS)"
    EKS = "eks", "Amazon EKS"
    OTHER = "other", "Other"


class WorkloadStatus(models.TextChoices):
    PLANNING = "planning", "Planning"
    PREPARING = "preparing", "Preparing"
    TRAINING = "training", "Training"
    EVALUATING = "evaluating", "Evaluating"
    COMPLETED = "completed", "Completed"
    PAUSED = "paused", "Paused"


class FsxThroughput(models.IntegerChoices):
    """FSx for Lustre PERSISTENT_2 throughput per unit of storage (MB/s/TiB)."""

    T125 = 125, "125 MB/s/TiB"
    T250 = 250, "250 MB/s/TiB"
    T500 = 500, "500 MB/s/TiB"
    T1000 = 1000, "1000 MB/s/TiB"


class ReservationKind(models.TextChoices):
    ODCR = "odcr", "On-Demand Capacity Reservation"
    CAPACITY_BLOCK = "capacity_block", "Capacity Block for ML"
    # HyperPod does not draw on EC2 reservations: its reserved capacity comes from a SageMaker training plan.
    TRAINING_PLAN = "training_plan", "SageMaker training plan (HyperPod)"


class RequestStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


# Structured lists kept in JSON: each item is {"name": <key>, "version": "..."} ("label" too for "other").
FRAMEWORKS = {
    "megatron-lm": "Megatron-LM",
    "nemo": "NVIDIA NeMo",
    "torchtitan": "torchtitan",
    "deepspeed": "DeepSpeed",
    "pytorch-fsdp": "PyTorch FSDP",
    "nxd": "NxD / Neuron (Trainium)",
    "hf-transformers": "Hugging Face Transformers",
    "other": "Other",
}

SOFTWARE_COMPONENTS = {
    "cuda": "CUDA",
    "neuron-sdk": "Neuron SDK",
    "nccl": "NCCL",
    "aws-ofi-nccl": "aws-ofi-nccl",
    "efa-installer": "EFA installer",
    "pytorch": "PyTorch",
    "container-image": "Container image",
    "other": "Other",
}

LANGUAGES = {
    "ja": "Japanese",
    "en": "English",
    "zh": "Chinese",
    "ko": "Korean",
    "code": "Programming languages",
    "multi": "Many (multilingual)",
}

EXPIRY_THRESHOLDS = (14, 7, 1)
