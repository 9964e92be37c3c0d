"""Enablement: lectures, labs, workshops and onboarding sessions, with attendance and satisfaction."""
from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from portal.core.models import cycle_field
from portal.core.querysets import RestrictedQuerySet
from workloads.enablement.choices import EnablementKind


class EnablementSession(models.Model):
    """A program-wide session. Its ``audience`` (the organizations invited) decides who sees it:
    customers see the sessions their organization was invited to, lead SAs those of their
    organizations, program managers all of them."""

    kind = models.CharField(max_length=16, choices=EnablementKind.choices, default=EnablementKind.WORKSHOP)
    topic = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    date = models.DateField()
    audience = models.ManyToManyField("portal.Organization", related_name="enablement_sessions")
    cycle = cycle_field("enablement_sessions")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created = models.DateTimeField(auto_now_add=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        db_table = "workloads_enablementsession"
        ordering = ["-date", "-id"]

    def __str__(self) -> str:
        return f"{self.topic} ({self.date:%Y-%m-%d})"

    def get_absolute_url(self) -> str:
        return reverse("enablement:enablement_detail", kwargs={"pk": self.pk})


class EnablementAttendance(models.Model):
    """One attendee of a session, from one organization, with the satisfaction score they gave."""

    session = models.ForeignKey(EnablementSession, on_delete=models.CASCADE, related_name="attendances")
    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="+")
    attendee = models.CharField(max_length=200)
    satisfaction = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(5)],
        help_text=_("1 (poor) to 5 (excellent); empty when the attendee gave no score."),
    )
    comment = models.TextField(blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        db_table = "workloads_enablementattendance"
        ordering = ["organization__name", "attendee"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(satisfaction__isnull=True) | models.Q(satisfaction__gte=1, satisfaction__lte=5),
                name="satisfaction_1_to_5",
            )
        ]

    def __str__(self) -> str:
        return f"{self.attendee} · {self.session}"
