"""Vocabularies of support interactions."""
from django.db import models
from django.utils.translation import gettext_lazy as _

from portal.core.choices import InteractionStatus


class InteractionKind(models.TextChoices):
    MEETING = "meeting", _("Meeting")
    CHAT = "chat", _("Chat thread")
    SUPPORT_CASE = "support_case", _("Support case")
    ONBOARDING = "onboarding", _("Onboarding session")
    WORKSHOP = "workshop", _("Workshop")
    EMAIL = "email", _("E-mail")
    OTHER = "other", _("Other")


class HistoryKind(models.TextChoices):
    COMMENT = "comment", _("Comment")
    CREATED = "created", _("Opened")
    STATUS = "status", _("Status change")
    OWNER = "owner", _("Reassignment")
    ESCALATION = "escalation", _("Escalation")
    AWS = "aws", _("AWS Support communication")
    FAULT = "fault", _("GPU fault")


class SyncStatus(models.TextChoices):
    NEVER = "", _("Not synced")
    OK = "ok", _("Synced")
    FAILED = "failed", _("Sync failed")


# AWS Support case statuses (DescribeCases) and the portal status each one means.
AWS_CASE_STATUS = {
    "opened": InteractionStatus.WAITING_AWS,
    "reopened": InteractionStatus.WAITING_AWS,
    "unassigned": InteractionStatus.WAITING_AWS,
    "work-in-progress": InteractionStatus.WAITING_AWS,
    "pending-customer-action": InteractionStatus.WAITING_CUSTOMER,
    "resolved": InteractionStatus.RESOLVED,
}

