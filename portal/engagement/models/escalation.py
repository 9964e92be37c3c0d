"""Escalations: an interaction's question routed to a team behind the account team, with its answer.

The teams and the people who answer for them (``EscalationTarget``, ``Specialist``) are the core's
(``portal.core.models``): the access policy reads them."""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from portal.core.querysets import RestrictedQuerySet
from portal.engagement.choices import OPEN_STATES, EscalationState


class EscalationQuerySet(RestrictedQuerySet):
    def open(self) -> EscalationQuerySet:
        return self.filter(state__in=OPEN_STATES)


class Escalation(models.Model):
    """One question an interaction raises to a team, its answer, and where it stands.

    Internal: customers never see it (the policy gives them no access); a lead SA who wants the customer
    to read an answer shares it on the interaction as a comment. State changes are compare-and-set
    (``portal.engagement.services.transition``), so two people cannot accept the same escalation.
    """

    interaction = models.ForeignKey("interactions.Interaction", on_delete=models.CASCADE, related_name="escalations")
    target = models.ForeignKey("portal.EscalationTarget", on_delete=models.PROTECT, related_name="escalations")
    assignee = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="assigned_escalations")
    state = models.CharField(max_length=16, choices=EscalationState.choices, default=EscalationState.REQUESTED)
    question = models.TextField(help_text=_("Markdown. What the team is asked, with what was tried."))
    answer = models.TextField(blank=True, help_text=_("Markdown. Internal unless a lead SA shares it."))
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    requested_at = models.DateTimeField(default=timezone.now)
    accepted_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    state_changed_at = models.DateTimeField(default=timezone.now)

    objects = EscalationQuerySet.as_manager()

    class Meta:
        ordering = ["requested_at", "id"]
        indexes = [models.Index(fields=["target", "state", "requested_at"], name="escalation_target_open")]

    def __str__(self) -> str:
        return f"{self.target} · {self.interaction}"

    def get_absolute_url(self) -> str:
        return reverse("engagement:escalation_detail", kwargs={"pk": self.pk})

    @property
    def is_open(self) -> bool:
        return self.state in OPEN_STATES

    @property
    def age(self) -> timedelta:
        """From the request to now, or to the close."""
        return (self.closed_at or timezone.now()) - self.requested_at

    @property
    def in_state_for(self) -> timedelta:
        return timezone.now() - self.state_changed_at

    @property
    def time_to_answer(self) -> timedelta | None:
        return None if self.answered_at is None else self.answered_at - self.requested_at
