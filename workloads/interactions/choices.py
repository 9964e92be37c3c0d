"""Vocabularies of support interactions and enablement sessions."""
from django.db import models

from portal.vocabulary import InteractionStatus


class InteractionKind(models.TextChoices):
    MEETING = "meeting", "Meeting"
    CHAT = "chat", "Chat thread"
    SUPPORT_CASE = "support_case", "Support case"
    ONBOARDING = "onboarding", "Onboarding session"
    WORKSHOP = "workshop", "Workshop"
    EMAIL = "email", "E-mail"
    OTHER = "other", "Other"


class HistoryKind(models.TextChoices):
    COMMENT = "comment", "Comment"
    CREATED = "created", "Opened"
    STATUS = "status", "Status change"
    OWNER = "owner", "Reassignment"
    ESCALATION = "escalation", "Escalation"
    AWS = "aws", "AWS Support communication"
    FAULT = "fault", "GPU fault"


class SyncStatus(models.TextChoices):
    NEVER = "", "Not synced"
    OK = "ok", "Synced"
    FAILED = "failed", "Sync failed"


# AWS Support case statuses (DescribeCases) and the portal status each one means.
AWS_CASE_STATUS = {
    "opened": InteractionStatus.WAITING_AWS,
    "reopened": InteractionStatus.WAITING_AWS,
    "unassigned": InteractionStatus.WAITING_AWS,
    "work-in-progress": InteractionStatus.WAITING_AWS,
    "pending-customer-action": InteractionStatus.WAITING_CUSTOMER,
    "resolved": InteractionStatus.RESOLVED,
}


class EnablementKind(models.TextChoices):
    LECTURE = "lecture", "Lecture"
    LAB = "lab", "Hands-on lab"
    WORKSHOP = "workshop", "Workshop"
    ONBOARDING = "onboarding", "Onboarding"
