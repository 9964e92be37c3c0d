"""Every proposal, approval, step and result of a remediation goes on the organization's timeline (shared with
the customer, in the portal's words) and to its notification channels (Slack thread and e-mail). One function,
called inside the transaction that changes the action."""
from __future__ import annotations

from portal import timeline
from portal.choices import TimelineKind, Visibility
from portal.notifications import Event, notify


def record(action, title: str, body: str = "", *, actor=None, severity: str = "", notify_too: bool = True) -> None:
    cluster = action.cluster
    full = f"Remediation {action.pk} on {cluster.name}: {title}"
    timeline.record(action.organization_id, TimelineKind.FAULT, full, source=action, body=body,
                    visibility=Visibility.SHARED, severity=severity, actor=actor,
                    tags=["remediation", action.kind, action.state])
    if notify_too:
        notify(Event(kind=f"remediation.{action.state}", title=full, organization_id=action.organization_id,
                     severity=severity or "normal", body=body[:500], url=action.get_absolute_url(),
                     visibility=Visibility.SHARED,
                     extra={"remediation": action.pk, "cluster": cluster.pk, "nodes": list(action.nodes)}))
