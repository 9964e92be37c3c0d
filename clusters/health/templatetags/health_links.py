"""Template tags of the fault ↔ interaction link, for pages of other apps."""
from __future__ import annotations

from django import template
from django.db.models import F

from clusters.health.models import GpuFault
from portal.core import access

register = template.Library()

FAULTS_SHOWN = 100


@register.simple_tag(takes_context=True)
def linked_faults(context, interaction) -> list[GpuFault]:
    """The faults linked to an interaction that the signed-in user may see, open ones first (one query)."""
    user = context["request"].user
    return list(GpuFault.objects.restrict(user, access.VIEW).filter(interaction=interaction)
                .select_related("cluster").order_by(F("cleared_at").desc(nulls_first=True), "-severity_rank", "hostname")[:FAULTS_SHOWN])
