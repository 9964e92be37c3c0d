"""What the health pages show of remediation: the action each GPU fault is being remediated under. Health sits below
this app, so it declares the need (``clusters.health.faults.links.REMEDIATING``) and this app provides it in ``ready``."""
from __future__ import annotations

from django.db.models import OuterRef, QuerySet, Subquery

from clusters.remediation.choices import FaultOutcome
from clusters.remediation.models import RemediationFault
from portal.core import access


def remediating_action(faults: QuerySet, user) -> QuerySet:
    """Annotate ``remediating_action``: the id of the action the fault is "remediating" under, among the actions
    ``user`` may see (None otherwise), in the fault query itself (no query per row)."""
    rows = RemediationFault.objects.restrict(user, access.VIEW)
    under = rows.filter(fault=OuterRef("pk"), outcome=FaultOutcome.REMEDIATING).order_by("-action_id")
    return faults.annotate(remediating_action=Subquery(under.values("action_id")[:1]))
