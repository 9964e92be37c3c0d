"""Vocabularies of the engagement model."""
from django.db import models


class TargetKind(models.TextChoices):
    SPECIALISTS = "specialists", "Specialists"
    SERVICE_TEAM = "service_team", "Service team"
    ACCOUNT = "account", "Account team"


class EscalationState(models.TextChoices):
    REQUESTED = "requested", "Requested"
    ACCEPTED = "accepted", "Accepted"
    ANSWERED = "answered", "Answered"
    CLOSED = "closed", "Closed"


OPEN_STATES = (EscalationState.REQUESTED, EscalationState.ACCEPTED, EscalationState.ANSWERED)

# Transition name → (states it leaves from, state it reaches, who may take it).
# "team": a specialist of the escalation's target; "owner": a lead SA of the interaction's organization.
TRANSITIONS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "accept": ((EscalationState.REQUESTED,), EscalationState.ACCEPTED, "team"),
    "release": ((EscalationState.ACCEPTED,), EscalationState.REQUESTED, "team"),
    "answer": ((EscalationState.ACCEPTED,), EscalationState.ANSWERED, "team"),
    "follow_up": ((EscalationState.ANSWERED,), EscalationState.ACCEPTED, "owner"),
    "close": ((EscalationState.REQUESTED, EscalationState.ACCEPTED, EscalationState.ANSWERED),
              EscalationState.CLOSED, "owner"),
}


class MilestoneKind(models.TextChoices):
    """The milestones of an organization's cycle, in the order they usually come."""

    ONBOARDED = "onboarded", "Onboarded"
    CLUSTER_VALIDATED = "cluster_validated", "Cluster validated"
    TRAINING_STARTED = "training_started", "Training started"
    FIRST_CHECKPOINT = "first_checkpoint", "First checkpoint"
    MODEL_TRAINED = "model_trained", "Model trained"
    MODEL_RELEASED = "model_released", "Model released"


class Modality(models.TextChoices):
    TEXT = "text", "Text"
    CODE = "code", "Code"
    MULTIMODAL = "multimodal", "Multimodal (vision-language)"
    SPEECH = "speech", "Speech"
    VISION = "vision", "Vision"
    SCIENCE = "science", "Scientific data"
    OTHER = "other", "Other"


class CycleStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    ACTIVE = "active", "Active"
    ARCHIVED = "archived", "Archived"


class CarryKind(models.TextChoices):
    """What moves into the next cycle when it starts, for the organizations that continue."""

    CLUSTER = "cluster", "Cluster not deleted"
    QUOTA = "quota", "Quota in force"
    RESERVATION = "reservation", "Capacity reservation in force"
    TRAINED_MODEL = "trained_model", "Model still in training"
