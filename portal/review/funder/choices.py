from django.db import models
from django.utils.translation import gettext_lazy as _


class ReportKind(models.TextChoices):
    QUARTERLY = "quarterly", _("Quarterly report")
    CYCLE_END = "cycle_end", _("End-of-cycle report")


class ReportStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    ISSUED = "issued", _("Issued")
    SUPERSEDED = "superseded", _("Superseded")
