"""What interactions add to other apps' pages: the organization page (open interactions, oldest
first, and the quick-log form) and the lead SA's home (everything open in their organizations)."""
from __future__ import annotations

from portal.core import access
from workloads.interactions import services
from workloads.interactions.desk.forms import InteractionQuickForm
from workloads.interactions.models import Interaction

OPEN_LIMIT = 25


def organization_section(request, organization, form=None) -> dict:
    user = request.user
    open_qs = services.open_for(user, organization).prefetch_related("tags")
    rows = list(open_qs[: OPEN_LIMIT + 1])
    can_log = access.can_in_organization(user, access.CHANGE, Interaction, organization.pk)
    return {
        "open_interactions": rows[:OPEN_LIMIT],
        "more_open": len(rows) > OPEN_LIMIT,
        "can_log": can_log,
        "form": (form or InteractionQuickForm()) if can_log else None,
    }


def lead_home_section(request) -> dict:
    rows = list(services.open_for(request.user).prefetch_related("tags")[: OPEN_LIMIT * 2])
    return {"open_interactions": rows}
