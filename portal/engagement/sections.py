"""Sections this app adds to other pages (registered in apps.py ready()).

- the lead SA's home: the open escalations of the organizations they lead, oldest first, with their state, and
  the Slack captures of their organizations' channels that did not log in the last two weeks, with why.
"""
from __future__ import annotations

import datetime

from django.utils import timezone

from portal.core import access
from portal.core.choices import CycleStatus
from portal.engagement import carry, cycles, outcomes
from portal.engagement.choices import MilestoneKind
from portal.engagement.models import Escalation, Milestone, SlackCapture, TrainedModel

LEAD_LIMIT = 25


def lead_escalations_section(request) -> dict:
    led = access.led_organizations(request.user)
    rows = list(Escalation.objects.restrict(request.user).open().filter(interaction__organization_id__in=led)
                .select_related("target", "assignee", "interaction__organization")
                .order_by("requested_at", "id")[:LEAD_LIMIT])
    return {"escalations": rows}


CAPTURE_DAYS = 14


def lead_failed_captures_section(request) -> dict:
    """Slack messages captured in the lead SA's organizations' channels that did not become interactions in
    the last two weeks, with the reason the capturer was told in Slack."""
    led = access.led_organizations(request.user)
    since = timezone.now() - datetime.timedelta(days=CAPTURE_DAYS)
    rows = list(SlackCapture.objects.restrict(request.user)
                .filter(link__organization_id__in=led, status__in=[SlackCapture.FAILED, SlackCapture.REFUSED],
                        created__gte=since)
                .select_related("link__organization", "user").order_by("-created")[:LEAD_LIMIT])
    return {"captures": rows, "days": CAPTURE_DAYS}


def organization_outcomes_section(request, organization) -> dict:
    reached = outcomes.current(organization, request.user)
    return {
        "organization": organization,
        "milestones": [(kind, label, reached.get(kind)) for kind, label in MilestoneKind.choices],
        "any_milestone": bool(reached),
        "trained_models": list(TrainedModel.objects.restrict(request.user).filter(organization=organization)),
        "can_change": access.can_in_organization(request.user, access.CHANGE, Milestone, organization.pk),
    }


def organization_wind_down_section(request, organization) -> dict:
    """What the organization still holds in a cycle it did not continue into (its running clusters, quotas and
    reservations in force), so that its page does not read "No clusters yet" while they run."""
    if organization.participations.filter(cycle__status=CycleStatus.ACTIVE).exists():
        return {"organization": organization, "wind_down": [], "active": None}  # it continues: nothing left behind
    rows = carry.wind_down_rows(request.user, organization=organization)
    return {"organization": organization, "wind_down": rows, "active": cycles.active() if rows else None}
