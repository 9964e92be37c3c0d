"""The audit trail's page: staff read every event; lead SAs and customers those of their organizations."""
from __future__ import annotations

from portal.core.audit.filtersets import AuditEventFilterSet
from portal.core.audit.models import AuditEvent
from portal.core.generic import ObjectListView


class AuditEventListView(ObjectListView):
    queryset = AuditEvent.objects.select_related("organization")
    filterset_class = AuditEventFilterSet
    template_name = "audit/event_list.html"
    partial_template_name = "audit/htmx/event_table.html"
    csv_fields = (
        ("occurred_at", "occurred_at"), ("kind", "kind"), ("actor", "actor_name"),
        ("organization", "organization.slug"), ("ip_address", "ip_address"), ("method", "method"),
        ("target", "target"), ("outcome", "outcome"), ("user_agent", "user_agent"),
    )
    csv_filename = "audit-trail.csv"
