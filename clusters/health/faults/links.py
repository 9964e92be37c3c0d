"""GPU faults linked to support interactions: what each user may see of the link.

A fault shows its interaction (id and summary) only to users for whom
``Interaction.objects.restrict(user)`` contains it, so a customer never learns of an internal
interaction through a fault. The visible part is annotated in the fault query itself: listing
faults costs no extra query per row.
"""
from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import OuterRef, QuerySet, Subquery
from django.utils.translation import gettext

from clusters.health.models import GpuFault, check_same_organization
from portal.core import access
from portal.core.signals import Hook
from workloads.interactions import services
from workloads.interactions.models import Interaction

LINK_CHOICES_SHOWN = 50


def with_visible_interaction(faults: QuerySet, user) -> QuerySet:
    """Annotate ``visible_interaction_id`` / ``visible_interaction_summary`` (None when not visible)."""
    visible = Interaction.objects.restrict(user, access.VIEW).filter(pk=OuterRef("interaction_id")).order_by()
    return faults.annotate(
        visible_interaction_id=Subquery(visible.values("pk")[:1]),
        visible_interaction_summary=Subquery(visible.values("summary")[:1]),
    )


# (faults, user) -> the faults annotated with ``remediating_action``. The remediation app, which builds on health,
# provides it in its ready(): this module imports nothing of it.
REMEDIATING = Hook("health: the remediation action each fault is under", provider="remediation")


def with_remediation(faults: QuerySet, user) -> QuerySet:
    """Annotate ``remediating_action``: the id of the remediation action the fault is "remediating" under, among
    the actions the user may see (None otherwise), in the fault query itself (no query per row)."""
    return REMEDIATING(faults, user)


def visible_link(fault: GpuFault, user) -> tuple[int, str] | None:
    """The fault's interaction as ``(id, summary)`` when the user may see it, else None."""
    if fault.interaction_id is None:
        return None
    if hasattr(fault, "visible_interaction_id"):  # annotated by with_visible_interaction (or set by link)
        if fault.visible_interaction_id != fault.interaction_id:
            return None
        return fault.interaction_id, fault.visible_interaction_summary
    row = Interaction.objects.restrict(user, access.VIEW).filter(pk=fault.interaction_id).values_list(
        "pk", "summary").first()
    return (row[0], row[1]) if row else None


def link(fault: GpuFault, interaction: Interaction | None, user) -> GpuFault:
    """Link (or unlink, with None) a fault to an interaction taken from
    ``Interaction.objects.restrict(user)``. Refused for another organization's interaction and for
    users who may not change the fault. Saves the link column only, so an ingestion running at the
    same time keeps its figures."""
    check_same_organization(fault.cluster.organization_id, interaction)
    with transaction.atomic():
        if not access.can(user, access.CHANGE, fault):
            raise PermissionDenied(gettext("Only the organization's lead SAs link faults to interactions."))
        # The link as stored, locked: two people relinking the same fault record each move once.
        before_id = (GpuFault.objects.select_for_update().filter(pk=fault.pk)
                     .values_list("interaction_id", flat=True).first())
        fault.interaction = interaction
        fault.save(update_fields=["interaction"])
        services.fault_linked(describe(fault), before_id=before_id,
                              after_id=interaction.pk if interaction is not None else None, actor=user)
    fault.visible_interaction_id = interaction.pk if interaction is not None else None
    fault.visible_interaction_summary = interaction.summary if interaction is not None else None
    return fault


def describe(fault: GpuFault) -> str:
    """How an interaction's history names a fault: "ip-10-0-0-1 GPU 3 on p5-train: GPU has fallen off the bus"."""
    return f"{fault.hostname} {fault.where} on {fault.cluster.name}: {fault.meaning}"


def link_choices(user, organization_id: int) -> list[Interaction]:
    """Open interactions of the organization a lead SA may pick (one query for the whole table)."""
    return list(Interaction.objects.restrict(user, access.VIEW).open().filter(organization_id=organization_id)
                .only("pk", "summary", "visibility")[:LINK_CHOICES_SHOWN])
