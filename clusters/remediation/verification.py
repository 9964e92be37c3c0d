"""Did the action work? The answered faults stay "remediating" until their node reports without them (then they
are cleared, linked to the action), or until they are reported again after the action (then they are open
again, the action failed, and a repeat is escalated to the EC2 service team with the evidence).

A fault is settled by the first health report of its node after the node came back (``NodeHealth.seen_at``
after ``executed_at``): reported in it, the fault came back; absent from it, the fault is gone. An action that
answers no fault (proposed from a node) is done once its nodes report a healthy verdict.
"""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from clusters.health.models import GpuFault, NodeHealth
from clusters.remediation.choices import ActionKind, ActionState, FaultOutcome
from clusters.remediation.models import RemediationAction, RemediationFault
from portal.core import escalation_targets as targets
from portal.core.choices import NodeVerdict
from portal.core.models import EscalationTarget
from workloads.interactions import services as interactions
from workloads.interactions.models import Interaction

PENDING, CLEARED, RETURNED = "pending", "cleared", "returned"


def check(action: RemediationAction) -> str:
    """Settle what the nodes' reports since ``executed_at`` tell; returns PENDING, CLEARED or RETURNED."""
    since = action.executed_at
    seen = dict(NodeHealth.objects.filter(cluster=action.cluster, hostname__in=action.nodes, seen_at__gt=since)
                .values_list("hostname", "verdict"))
    rows = list(action.fault_rows.select_related("fault").filter(outcome=FaultOutcome.REMEDIATING))
    if not action.fault_rows.exists():
        return CLEARED if len(seen) == len(action.nodes) and set(seen.values()) == {NodeVerdict.HEALTHY} else PENDING
    now = timezone.now()
    returned = False
    with transaction.atomic():
        for row in rows:
            fault = row.fault
            again = _again(action, fault)
            if again is not None:
                returned = True
                row.outcome, row.settled_at = FaultOutcome.RETURNED, now
                row.save(update_fields=["outcome", "settled_at"])
                if again.pk != fault.pk:
                    RemediationFault.objects.get_or_create(action=action, fault=again,
                                                           defaults={"outcome": FaultOutcome.RETURNED,
                                                                     "settled_at": now})
            elif fault.cleared_at is not None or fault.hostname in seen:
                if fault.cleared_at is None:
                    GpuFault.objects.filter(pk=fault.pk, cleared_at__isnull=True).update(cleared_at=now)
                row.outcome, row.settled_at = FaultOutcome.CLEARED, now
                row.save(update_fields=["outcome", "settled_at"])
    if returned:
        return RETURNED
    left = action.fault_rows.filter(outcome=FaultOutcome.REMEDIATING).exists()
    return PENDING if left else CLEARED


def _again(action: RemediationAction, fault: GpuFault) -> GpuFault | None:
    """The fault as reported after the action (the same row, seen again, or a new row with its key)."""
    if fault.cleared_at is None and fault.last_seen > action.executed_at:
        return fault
    return (GpuFault.objects.filter(cluster_id=fault.cluster_id, hostname=fault.hostname, kind=fault.kind,
                                    xid=fault.xid, gpu=fault.gpu, device=fault.device, cleared_at__isnull=True,
                                    last_seen__gt=action.executed_at).exclude(pk=fault.pk).first())


def after_return(action: RemediationAction) -> None:
    """Escalate to the EC2 service team after a second failed replacement of one node, or when one XID has hit
    several nodes of the cluster. Inside the failing transaction; once per node and cluster (the interaction)."""
    host = action.nodes[0] if len(action.nodes) == 1 else ""
    failed_replacements = sum(host in nodes for nodes in RemediationAction.objects.filter(
        cluster=action.cluster, kind=ActionKind.REPLACE, state=ActionState.FAILED,
        failure_reason="fault_returned").values_list("nodes", flat=True)) if host else 0
    xids = set(action.fault_rows.exclude(fault__xid=None).values_list("fault__xid", flat=True))
    since = timezone.now() - timedelta(days=settings.REMEDIATION_XID_SPREAD_DAYS)
    spread = {xid: set(GpuFault.objects.filter(cluster=action.cluster, xid=xid, first_seen__gte=since)
                       .values_list("hostname", flat=True)) for xid in xids}
    wide = {xid: hosts for xid, hosts in spread.items() if len(hosts) >= settings.REMEDIATION_XID_SPREAD_NODES}
    if failed_replacements < 2 and not wide:
        return
    why = (f"{host} failed {failed_replacements} replacements" if failed_replacements >= 2 else
           "; ".join(f"XID {xid} on {len(hosts)} nodes ({', '.join(sorted(hosts))})" for xid, hosts in wide.items()))
    escalate(action, why)


def evidence(action: RemediationAction, why: str) -> str:
    """What the EC2 team needs: the fault history, XIDs, GPU serials (UUIDs) where reported, the actions taken."""
    hosts = set(action.nodes)
    faults = GpuFault.objects.filter(cluster=action.cluster, hostname__in=hosts).order_by("first_seen")
    actions = RemediationAction.objects.filter(cluster=action.cluster).order_by("proposed_at")
    lines = [f"Why: {why}.", f"Cluster: {action.cluster.name} ({action.cluster.get_orchestrator_display()}, "
             f"{action.cluster.instance_type}, region {action.cluster.region}).", "", "Fault history:"]
    for f in faults[:100]:
        lines.append(f"- {f.first_seen:%Y-%m-%d %H:%M} {f.hostname} {f.where}: {f.meaning}"
                     f"{f' (XID {f.xid})' if f.xid else ''}{f' GPU {f.uuid}' if f.uuid else ''}"
                     f"{'' if f.cleared_at is None else f', cleared {f.cleared_at:%Y-%m-%d %H:%M}'}")
    lines += ["", "Actions taken:"]
    for a in actions[:50]:
        if hosts & set(a.nodes):
            new = (a.progress or {}).get("new_instances") or {}
            lines.append(f"- {a.proposed_at:%Y-%m-%d %H:%M} {a.kind_words} {', '.join(a.nodes)}: "
                         f"{a.get_state_display()}{f' ({a.failure_reason})' if a.failure_reason else ''}"
                         f"{f', new instances {new}' if new else ''}")
    return "\n".join(lines)


def escalate(action: RemediationAction, why: str) -> None:
    target = EscalationTarget.objects.filter(slug="ec2").first() or targets.sync(EscalationTarget)["ec2"]
    summary = f"Repeated GPU fault on {', '.join(action.nodes)} of {action.cluster.name}"[:200]
    interaction = Interaction.objects.filter(organization_id=action.organization_id, summary=summary).first()
    if interaction is None:
        interaction = Interaction.objects.create(
            organization_id=action.organization_id, kind="other", summary=summary, severity="high",
            body=evidence(action, why))
        interactions.created(interaction, None)
    escalation = interactions.escalate(interaction, None, evidence(action, why), target=target)
    GpuFault.objects.filter(pk__in=action.fault_rows.values("fault_id"), interaction__isnull=True).update(
        interaction=interaction)
    RemediationAction.objects.filter(pk=action.pk).update(escalation=escalation)
    action.escalation = escalation
