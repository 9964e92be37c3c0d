"""Every proposal, approval, step and result of a remediation goes on the organization's timeline (shared with
the customer, in the portal's words) and to its notification channels: the Slack webhook and e-mail of each
notification setting that wants it, and, when the faults the action answers are linked to an interaction logged
from a Slack thread (or the action was escalated), a reply in that thread (``extra["interaction"]``, which the
Slack bridge's listener follows). Steps and refusals are told at low severity, so a channel may leave them out.
One function, called inside the transaction that changes the action."""
from __future__ import annotations

from clusters.remediation import texts
from clusters.remediation.models import RemediationAction
from portal.core import timeline
from portal.core.choices import TimelineKind, Visibility
from portal.core.notifications import Event, notify
from portal.core.stored_text import Message, message


def interaction_of(action) -> int | None:
    """The interaction the action's story belongs to: its escalation's, else the one its faults are linked to."""
    if action.escalation_id:
        return (RemediationAction.objects.filter(pk=action.pk).values_list("escalation__interaction_id", flat=True)
                .first())
    return (action.fault_rows.exclude(fault__interaction=None).order_by("fault_id")
            .values_list("fault__interaction_id", flat=True).first()) if action.pk else None


def record(action, title: Message, body: str = "", *, actor=None, severity: str = "", notify_too: bool = True,
           step: bool = False) -> None:
    """``title``: what happened, a message of ``clusters.remediation.texts`` (stored as codes, read in each
    reader's language on the timeline; notifications carry its English)."""
    cluster = action.cluster
    entry = message(texts.ENTRY, action=action.pk, cluster=cluster.name, what=title)
    full = entry.english()
    timeline.record(action.organization_id, TimelineKind.FAULT, entry, source=action, body=body,
                    visibility=Visibility.SHARED, severity=severity, actor=actor,
                    tags=["remediation", action.kind, action.state])
    if notify_too:
        extra = {"remediation": action.pk, "cluster": cluster.pk, "nodes": list(action.nodes)}
        interaction = interaction_of(action)
        if interaction:
            extra["interaction"] = interaction
        notify(Event(kind=f"remediation.{'step' if step else action.state}", title=full,
                     organization_id=action.organization_id, severity=severity or ("low" if step else "normal"),
                     body=body[:500], url=action.get_absolute_url(), visibility=Visibility.SHARED, extra=extra))
