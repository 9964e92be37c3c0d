"""How a customer asks for help when the portal does not let them log an interaction themselves.

Interactions are logged by the program's lead SAs; a customer who opens the form is told where to ask
instead: their organization's Slack channel and their lead SAs by name (one query each).
"""
from __future__ import annotations

from portal.core import access
from portal.core.choices import MembershipRole
from portal.core.models import Membership
from workloads.interactions import hooks


def ways_to_ask(user) -> list[dict]:
    """One row per organization the user belongs to as a customer: its name, Slack channels, lead SAs."""
    org_ids = access.roles_of(user).get(access.CUSTOMER, frozenset())
    rows: dict[int, dict] = {}
    leads = (Membership.objects.filter(organization_id__in=org_ids, role=MembershipRole.LEAD_SA, user__is_active=True)
             .select_related("organization", "user").order_by("organization__name", "user__last_name", "user_id"))
    for membership in leads:
        row = rows.setdefault(membership.organization_id,
                              {"organization": membership.organization, "channels": [], "leads": []})
        row["leads"].append(membership.user)
    channels = hooks.CUSTOMER_CHANNELS(org_ids)
    for link in channels:
        row = rows.setdefault(link.organization_id, {"organization": link.organization, "channels": [], "leads": []})
        row["channels"].append(link.name or link.channel_id)
    return sorted(rows.values(), key=lambda r: r["organization"].name)
