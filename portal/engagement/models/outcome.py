"""Outcomes: what each organization achieved in the program (milestones) and the models it trained."""
from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from portal.core import instance_types
from portal.core.model_fields import HttpsURLField
from portal.core.models import cycle_field
from portal.core.querysets import RestrictedQuerySet
from portal.engagement.choices import MilestoneKind, Modality


def not_in_future(value) -> None:
    if value and value > timezone.localdate():
        raise ValidationError(_("A milestone is recorded once it is reached, not planned."))


class Milestone(models.Model):
    """One milestone an organization reached, with its date; at most one of each kind per organization and cycle."""

    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="milestones")
    cycle = cycle_field("milestones")
    kind = models.CharField(max_length=32, choices=MilestoneKind.choices)
    reached_on = models.DateField(validators=[not_in_future])
    note = models.CharField(max_length=300, blank=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    updated = models.DateTimeField(auto_now=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["organization__name", "reached_on", "id"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "cycle", "kind"], name="unique_milestone_per_org_cycle"),
        ]

    def __str__(self) -> str:
        return f"{self.organization}: {self.get_kind_display()} {self.reached_on:%Y-%m-%d}"

    def get_absolute_url(self) -> str:
        return reverse("engagement:outcomes", kwargs={"slug": self.organization.slug})


class TrainedModel(models.Model):
    """A model an organization trained in the program: size, modality, data, the compute it used, the release."""

    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="trained_models")
    cycle = cycle_field("trained_models")
    name = models.CharField(max_length=200)
    parameters_billions = models.DecimalField(
        _("parameters (billions)"), max_digits=8, decimal_places=2, validators=[MinValueValidator(Decimal("0.01"))]
    )
    modality = models.CharField(max_length=16, choices=Modality.choices, default=Modality.TEXT)
    tokens_billions = models.DecimalField(
        _("training tokens (billions)"), max_digits=10, decimal_places=1, null=True, blank=True,
        validators=[MinValueValidator(Decimal("0.1"))],
    )
    instance_type = models.CharField(max_length=32, help_text=_("e.g. p5.48xlarge, trn1.32xlarge"))
    instance_count = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    release_url = HttpsURLField(_("release link"), max_length=500, blank=True)
    released_on = models.DateField(null=True, blank=True, validators=[not_in_future])
    notes = models.TextField(blank=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["organization__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "name"], name="unique_trained_model_name"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("engagement:outcomes", kwargs={"slug": self.organization.slug})

    def clean(self) -> None:
        super().clean()
        if self.instance_type and instance_types.find(self.instance_type) is None:
            raise ValidationError({"instance_type": gettext("Unknown instance type “%(name)s”.") % {"name": self.instance_type}})
