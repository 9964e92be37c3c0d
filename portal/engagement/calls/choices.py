"""The states of a call and of an application."""
from django.db import models
from django.utils.translation import gettext_lazy as _


class CallStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    OPEN = "open", _("Open")
    CLOSED = "closed", _("Closed for review")
    AWARDED = "awarded", _("Awarded")


class ApplicationStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    SUBMITTED = "submitted", _("Submitted")
    AWARDED = "awarded", _("Awarded")
    DECLINED = "declined", _("Declined")


class Modality(models.TextChoices):
    TEXT = "text", _("Text")
    CODE = "code", _("Code")
    VISION = "vision", _("Vision and language")
    SPEECH = "speech", _("Speech")
    MULTIMODAL = "multimodal", _("Multimodal")
    OTHER = "other", _("Other")
