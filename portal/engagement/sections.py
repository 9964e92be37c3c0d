"""Sections this app adds to other pages (registered in apps.py ready()).

- the lead SA's home: the open escalations of the organizations they lead, oldest first, with their state.
"""
from __future__ import annotations

from portal import access
from portal.engagement.models import Escalation

LEAD_LIMIT = 25


def lead_escalations_section(request) -> dict:
    led = access._roles(request.user).get(access.LEAD_SA, frozenset())
    rows = list(Escalation.objects.restrict(request.user).open().filter(interaction__organization_id__in=led)
                .select_related("target", "assignee", "interaction__organization")
                .order_by("requested_at", "id")[:LEAD_LIMIT])
    return {"escalations": rows}


ORGANIZATION_SECTIONS: list = []
LEAD_SECTIONS: list = [("engagement/htmx/lead_escalations.html", lead_escalations_section)]
