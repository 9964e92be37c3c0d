"""Every saved change of a workload, quota or reservation is appended to the organization's timeline.

Hooked on django-simple-history's own signal, so the page, the API, the admin and the demo all record
the same way, in the transaction that saved the change.
"""
from __future__ import annotations

from django.dispatch import receiver
from simple_history.signals import post_create_historical_record

from portal.core import timeline
from portal.core.choices import TimelineKind
from workloads import history
from workloads.models import CapacityReservation, InstanceQuota, Workload

TRACKED = {
    Workload: (TimelineKind.WORKLOAD, "Workload"),
    InstanceQuota: (TimelineKind.QUOTA, "Quota"),
    CapacityReservation: (TimelineKind.QUOTA, "Capacity reservation"),
}


@receiver(post_create_historical_record)
def record_on_timeline(sender, instance, history_instance, **kwargs):
    spec = TRACKED.get(type(instance))
    if spec is None:
        return
    kind, noun = spec
    action = history_instance.history_type
    if action == "+":
        title, body = f"{noun} created: {instance}", ""
    elif action == "-":
        title, body = f"{noun} deleted: {instance}", ""
    else:
        changes = history.describe(type(instance), history_instance)
        if not changes:
            return
        title = f"{noun} updated: {instance} ({', '.join(c.label.lower() for c in changes)})"
        body = "\n".join(c.text() for c in changes)
    timeline.record(
        instance.organization_id, kind, title, source=instance if action != "-" else None, body=body,
        actor=history_instance.history_user, tags=[noun.lower()],
    )
