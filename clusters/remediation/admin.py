"""Node remediation in the admin, for staff to find an action, its steps and faults, and an organization's consent
policy. Read-only: actions are proposed and moved through their lifecycle by the remediation services (guardrails,
consent, the worker), and a policy is set on its page with its version check, so the admin adds and edits neither."""
from django.contrib import admin

from clusters.remediation.models import (
    RemediationAction,
    RemediationFault,
    RemediationNode,
    RemediationPolicy,
    RemediationStep,
)


class _ReadOnly:
    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class StepInline(_ReadOnly, admin.TabularInline):
    model = RemediationStep
    fields = ("at", "name", "status", "summary", "detail")
    extra = 0


class FaultInline(_ReadOnly, admin.TabularInline):
    model = RemediationFault
    fields = ("fault", "outcome", "settled_at")
    raw_id_fields = ("fault",)
    extra = 0


class NodeInline(_ReadOnly, admin.TabularInline):
    model = RemediationNode
    fields = ("hostname", "active", "released_at")
    extra = 0


@admin.register(RemediationAction)
class RemediationActionAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = ("pk", "organization", "cluster", "kind", "state", "automatic", "failure_reason", "proposed_at",
                    "finished_at")
    list_filter = ("state", "kind", "automatic", "organization")
    search_fields = ("key", "cluster__name", "reason")
    raw_id_fields = ("cluster", "proposed_by", "approved_by", "escalation")
    inlines = (NodeInline, FaultInline, StepInline)


@admin.register(RemediationPolicy)
class RemediationPolicyAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = ("organization", "mode", "automatic_kinds", "max_nodes", "cooldown_hours", "agreed_with",
                    "updated")
    list_filter = ("mode",)
