"""Demo remediation: the organization of the seeded faulty node agrees that every action needs its approval, and
its lead SA has proposed replacing that node (the XID 79), through the real service. A customer engineer approves
it on the cluster's health page; the worker replaces the node; the next clean report closes the fault.
Idempotent: the proposal has a fixed key per fault."""
from __future__ import annotations

from clusters.health.models import GpuFault
from clusters.remediation import rules, services
from clusters.remediation.models import RemediationPolicy
from portal.models import Membership


def seed(context: dict) -> dict:
    fault = (GpuFault.objects.filter(cleared_at__isnull=True, kind="xid", xid=79, cluster__state="ready")
             .select_related("cluster__organization").order_by("pk").first())
    if fault is None:
        return context
    cluster = fault.cluster
    RemediationPolicy.objects.get_or_create(organization=cluster.organization,
                                            defaults={"agreed_with": "the customer's ML infrastructure lead"})
    lead = Membership.objects.filter(organization=cluster.organization, role="lead_sa").select_related("user").first()
    kind = rules.recommend(fault) or "reboot"
    if kind in rules.KINDS_BY_ORCHESTRATOR.get(cluster.orchestrator, ()):
        action, _ = services.propose(cluster, kind=kind, nodes=[fault.hostname], actor=lead.user if lead else None,
                                     key=f"demo-fault-{fault.pk}",
                                     reason=f"XID 79 on {fault.hostname}: the GPU fell off the bus.")
        context["remediation_action"] = action
    return context
