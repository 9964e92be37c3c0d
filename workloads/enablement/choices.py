"""Vocabulary of enablement sessions."""
from django.db import models
from django.utils.translation import gettext_lazy as _


class EnablementKind(models.TextChoices):
    LECTURE = "lecture", _("Lecture")
    LAB = "lab", _("Hands-on lab")
    WORKSHOP = "workshop", _("Workshop")
    ONBOARDING = "onboarding", _("Onboarding")
