"""Vocabularies of the engagement model."""
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


class EscalationState(models.TextChoices):
    # States, not the columns of when they happened ("Requested" at 12:00): a context of their own.
    REQUESTED = "requested", pgettext_lazy("escalation state", "Requested")
    ACCEPTED = "accepted", pgettext_lazy("escalation state", "Accepted")
    ANSWERED = "answered", pgettext_lazy("escalation state", "Answered")
    CLOSED = "closed", pgettext_lazy("escalation state", "Closed")


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

    ONBOARDED = "onboarded", _("Onboarded")
    CLUSTER_VALIDATED = "cluster_validated", _("Cluster validated")
    TRAINING_STARTED = "training_started", _("Training started")
    FIRST_CHECKPOINT = "first_checkpoint", _("First checkpoint")
    MODEL_TRAINED = "model_trained", _("Model trained")
    MODEL_RELEASED = "model_released", _("Model released")


class Modality(models.TextChoices):
    TEXT = "text", _("Text")
    CODE = "code", _("Code")
    MULTIMODAL = "multimodal", _("Multimodal (vision-language)")
    SPEECH = "speech", _("Speech")
    VISION = "vision", _("Vision")
    SCIENCE = "science", _("Scientific data")
    OTHER = "other", _("Other")
