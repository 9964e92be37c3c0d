"""Program cycles: the program runs in cycles; organizations take part per cycle, and quotas, reservations,
clusters, reviews, enablement and outcomes belong to one."""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from portal.engagement.choices import CarryKind, CycleStatus
from portal.querysets import RestrictedQuerySet


def active_cycle_id() -> int | None:
    """The default of every ``cycle`` foreign key: new rows belong to the active cycle."""
    return Cycle.objects.filter(status=CycleStatus.ACTIVE).values_list("pk", flat=True).first()


def cycle_field(related_name: str = "+") -> models.ForeignKey:
    """The ``cycle`` foreign key other apps' models carry (null only for rows of a program without a cycle)."""
    return models.ForeignKey(
        "engagement.Cycle", null=True, blank=True, default=active_cycle_id, on_delete=models.PROTECT,
        related_name=related_name, help_text=_("The program cycle this belongs to (the active one by default)."),
    )


class Cycle(models.Model):
    """One cycle of the program. Exactly one is active at a time; archived ones are read-only history."""

    number = models.PositiveSmallIntegerField(unique=True)
    name = models.CharField(max_length=100, unique=True)
    starts_on = models.DateField(null=True, blank=True)
    ends_on = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=CycleStatus.choices, default=CycleStatus.PLANNED)
    lessons_carried = models.TextField(
        _("lessons carried over"), blank=True, help_text=_("Markdown: what the previous cycle taught, copied when it began.")
    )
    blueprints = models.ManyToManyField("clusters.Blueprint", blank=True, related_name="cycles")
    organizations = models.ManyToManyField("portal.Organization", through="CycleParticipation", related_name="cycles")
    created = models.DateTimeField(auto_now_add=True)
    # Who scheduled, moved or cancelled a start, and when (the schedule page writes the reason).
    history = HistoricalRecords(excluded_fields=["lessons_carried"])

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(fields=["status"], condition=models.Q(status="active"), name="one_active_cycle"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("engagement:cycle_detail", kwargs={"pk": self.pk})

    def clean(self) -> None:
        if self.starts_on and self.ends_on and self.ends_on < self.starts_on:
            raise ValidationError({"ends_on": gettext("A cycle cannot end before it starts.")})

    @property
    def is_archived(self) -> bool:
        return self.status == CycleStatus.ARCHIVED


class CycleParticipation(models.Model):
    """An organization taking part in a cycle, with the lead SAs assigned to it for that cycle."""

    cycle = models.ForeignKey(Cycle, on_delete=models.CASCADE, related_name="participations")
    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="participations")
    lead_sas = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    continues = models.BooleanField(default=True, help_text=_("Takes part in the next cycle when it starts."))
    joined = models.DateTimeField(auto_now_add=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["cycle", "organization__name"]
        constraints = [models.UniqueConstraint(fields=["cycle", "organization"], name="unique_cycle_participation")]

    def __str__(self) -> str:
        return f"{self.organization} in {self.cycle}"


class CycleCarry(models.Model):
    """A live row moved from the cycle that ended into the next one when it started (a running cluster, a quota or
    reservation in force, a model still in training). The row itself now belongs to the new cycle; this keeps where
    it came from, so the old cycle's report still counts it and pages label it "carried over".

    Bookkeeping written only by ``portal.engagement.carry`` and read through the rows it points at (no access rule
    of its own: it says nothing the row does not)."""

    cycle = models.ForeignKey(Cycle, on_delete=models.CASCADE, related_name="carried_in")
    from_cycle = models.ForeignKey(Cycle, on_delete=models.CASCADE, related_name="carried_out")
    kind = models.CharField(max_length=16, choices=CarryKind.choices)
    object_id = models.PositiveBigIntegerField()
    organization = models.ForeignKey("portal.Organization", on_delete=models.CASCADE, related_name="+")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cycle", "kind", "object_id"]
        constraints = [models.UniqueConstraint(fields=["cycle", "kind", "object_id"], name="unique_cycle_carry")]
        indexes = [models.Index(fields=["from_cycle", "kind"], name="carry_from_kind")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.object_id}: {self.from_cycle_id} → {self.cycle_id}"
