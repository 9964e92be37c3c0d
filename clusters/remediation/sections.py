"""What remediation adds to the lead SA's home (registered in apps.py ``ready()``): the actions that failed in the
last days, first on the page, each with what failed and what happens next, since a failed action is work the lead
SA has to pick up (propose again, or follow up with the customer)."""
from __future__ import annotations

import datetime

from django.utils import timezone

from clusters.remediation import failure
from clusters.remediation.choices import ActionState
from clusters.remediation.models import RemediationAction, RemediationPolicy
from portal.core import access

DAYS = 7
LIMIT = 20


def lead_failed_section(request) -> dict:
    """Failed actions of the organizations the user leads, finished in the last ``DAYS`` days, newest first."""
    user = request.user
    led = access.led_organizations(user)
    since = timezone.now() - datetime.timedelta(days=DAYS)
    actions = list(RemediationAction.objects.restrict(user)
                   .filter(organization_id__in=led, state=ActionState.FAILED, finished_at__gte=since)
                   .select_related("cluster", "organization").order_by("-finished_at")[:LIMIT])
    cooldowns = dict(RemediationPolicy.objects.filter(organization_id__in={a.organization_id for a in actions})
                     .values_list("organization_id", "cooldown_hours"))
    default = RemediationPolicy._meta.get_field("cooldown_hours").default
    for action in actions:
        action.told = failure.told(action, cooldowns.get(action.organization_id, default))
    return {"actions": actions, "days": DAYS}
