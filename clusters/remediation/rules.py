"""What the portal recommends for a fault, what each action does and how long it takes, and the guardrails an
action must pass. The recommendation reads the verdicts the XID and remapped-rows rules gave the fault
(``clusters/health/readers/xid.py``, ``clusters/health/readers/summary.py``); nothing here writes."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from clusters.choices import ClusterState, Orchestrator
from clusters.health.models import GpuFault, NodeHealth
from clusters.health.readers import xid
from clusters.health.validation import agent
from clusters.remediation.choices import AUTOMATIC_RULES, ActionKind, ActionState
from clusters.remediation.models import RemediationNode, RemediationPolicy
from portal.core.choices import NodeVerdict

KINDS_BY_ORCHESTRATOR = {
    Orchestrator.HYPERPOD: (ActionKind.REBOOT, ActionKind.REPLACE, ActionKind.CHECK, ActionKind.DRAIN),
    Orchestrator.PARALLELCLUSTER: (ActionKind.REBOOT, ActionKind.REPLACE, ActionKind.DRAIN),
}

WHAT_IT_DOES = {
    (Orchestrator.HYPERPOD, ActionKind.REBOOT): (
        _("HyperPod reboots the instance (BatchRebootClusterNodes); jobs on the node are interrupted."),
        _("5 to 15 minutes")),
    (Orchestrator.HYPERPOD, ActionKind.REPLACE): (
        _("HyperPod terminates the instance and brings up a new one in its place (BatchReplaceClusterNodes); "
          "the node's local disks are lost."), _("15 to 45 minutes")),
    (Orchestrator.HYPERPOD, ActionKind.CHECK): (
        _("HyperPod runs its deep health checks on the instance (StartClusterHealthCheck: GPU stress and "
          "connectivity); the node takes no jobs meanwhile, and HyperPod reports it Failure if it fails them."),
        _("30 minutes to 2 hours")),
    (Orchestrator.HYPERPOD, ActionKind.DRAIN): (
        _("Slurm on the controller stops scheduling jobs on the node (state=DRAIN) with the fault as its reason, "
          "through the portal's agent there; running jobs finish."), _("at once")),
    (Orchestrator.PARALLELCLUSTER, ActionKind.REBOOT): (
        _("Slurm reboots the node once its jobs end (scontrol reboot ASAP nextstate=RESUME)."),
        _("5 to 15 minutes after its jobs end")),
    (Orchestrator.PARALLELCLUSTER, ActionKind.REPLACE): (
        _("Slurm powers the node down (state=POWER_DOWN_FORCE); ParallelCluster terminates the instance and "
          "launches a new one when the queue needs it."), _("10 to 30 minutes")),
    (Orchestrator.PARALLELCLUSTER, ActionKind.DRAIN): (
        _("Slurm stops scheduling jobs on the node (state=DRAIN) with the fault as its reason; running jobs finish."),
        _("at once")),
}

# Stored in English on the action (``refusal``); shown in the reader's language by ``refusals.shown``.
RULE_WORDS = {
    "cluster_deleting": gettext_noop("the cluster is being deleted"),
    "cluster_not_ready": gettext_noop("the cluster is not ready"),
    "kind_unsupported": gettext_noop("this orchestrator has no such action"),
    "unknown_node": gettext_noop("the node has not reported to the portal"),
    "no_nodes": gettext_noop("no node was named"),
    "node_busy": gettext_noop("the node is already in another remediation"),
    "max_nodes": gettext_noop("too many nodes of the cluster would be in remediation at once"),
    "cooldown": gettext_noop("the node was remediated too recently"),
    "declined": gettext_noop("a customer engineer declined it"),
    "cycle_archived": gettext_noop("the cluster's program cycle was archived"),
    "provider_acted": gettext_noop("HyperPod replaced or rebooted the node on its own"),
    "agent_absent": gettext_noop("the portal's agent on the cluster's controller has not contacted the portal lately"),
}


@dataclass(frozen=True)
class Refusal:
    rule: str
    text: str
    params: dict = field(default_factory=dict)  # what the detail is made of, to write it in the reader's language


def recommend(fault) -> str | None:
    """The action for one fault, or None when the fault needs no node action: the verdict ingestion gave it from
    the XID table (``clusters/health/readers/xid.py``) or the remapped-rows rules, so the fault's advice, the node's
    verdict and this recommendation are one source and read the same (XID 79: reboot, replace if it recurs)."""
    if fault.kind == "row_remap_failure":
        return ActionKind.REPLACE
    if fault.verdict == NodeVerdict.REPLACE:
        return ActionKind.REPLACE
    if fault.verdict in (NodeVerdict.REBOOT, NodeVerdict.RESET_GPU):
        return ActionKind.REBOOT
    return None


def recommend_for(faults) -> str | None:
    """The strongest recommendation among ``faults`` (replace before reboot)."""
    kinds = {recommend(f) for f in faults} - {None}
    return ActionKind.REPLACE if ActionKind.REPLACE in kinds else (ActionKind.REBOOT if kinds else None)


def automatic_rule(fault) -> str:
    """The key of ``AUTOMATIC_RULES`` the fault falls under ("" for none)."""
    key = f"xid_{fault.xid}" if fault.kind == "xid" else fault.kind
    return key if key in AUTOMATIC_RULES else ""


def recurs(fault) -> bool:
    """Whether the fault's XID is one the table replaces on recurrence and an earlier fault of the same code was
    seen on the same node of the cluster."""
    if fault.kind != "xid" or fault.xid not in xid.REPLACE_IF_RECURS:
        return False
    return (GpuFault.objects.filter(cluster_id=fault.cluster_id, hostname=fault.hostname, kind="xid", xid=fault.xid,
                                    first_seen__lt=fault.first_seen).exclude(pk=fault.pk).exists())


def automatic_kind(fault) -> str:
    """The action an automatic rule takes for ``fault``: the rule's first step, a replacement when the XID table
    says so for a recurrence (XID 79: reboot the node; replace it if it recurs)."""
    kind = AUTOMATIC_RULES[automatic_rule(fault)][1]
    return ActionKind.REPLACE if recurs(fault) else kind


def describe(orchestrator: str, kind: str) -> tuple[str, str]:
    return WHAT_IT_DOES.get((orchestrator, kind), ("", ""))


def policy_for(organization_id: int) -> RemediationPolicy:
    """The organization's policy, or the default one (every action needs a customer's approval), unsaved."""
    return (RemediationPolicy.objects.filter(organization_id=organization_id).first()
            or RemediationPolicy(organization_id=organization_id))


def node_limit(policy: RemediationPolicy, cluster) -> int:
    """Nodes of ``cluster`` in remediation at once: the policy's number, never above 10 % of the cluster (and
    always at least one, or a cluster under ten nodes could never be remediated)."""
    return max(1, min(policy.max_nodes, cluster.node_count // 10))


def refusal(cluster, kind: str, nodes: list[str], policy: RemediationPolicy) -> Refusal | None:
    """The first guardrail the action breaks, or None. Call under the cluster's remediation lock."""
    def refuse(rule: str, detail: str = "", **params) -> Refusal:
        return Refusal(rule, f"Refused: {RULE_WORDS[rule]}{f' ({detail})' if detail else ''}.", params)

    if cluster.state in (ClusterState.DELETING, ClusterState.DELETED):
        return refuse("cluster_deleting")
    if cluster.state != ClusterState.READY:
        return refuse("cluster_not_ready", cluster.get_state_display().lower(), state=cluster.state)
    if kind not in KINDS_BY_ORCHESTRATOR.get(cluster.orchestrator, ()):
        return refuse("kind_unsupported", f"{ActionKind(kind).label.lower()} on {cluster.get_orchestrator_display()}",
                      kind=kind, orchestrator=cluster.orchestrator)
    if cluster.orchestrator == Orchestrator.HYPERPOD and kind == ActionKind.DRAIN and agent.absent(cluster):
        return refuse("agent_absent")  # HyperPod's Slurm is reached through it alone
    if not nodes:
        return refuse("no_nodes")
    known = set(NodeHealth.objects.filter(cluster=cluster, hostname__in=nodes).values_list("hostname", flat=True))
    unknown = [n for n in nodes if n not in known]
    if unknown:
        return refuse("unknown_node", ", ".join(unknown), nodes=unknown)
    busy = list(RemediationNode.objects.filter(cluster=cluster, hostname__in=nodes, active=True)
                .values_list("hostname", "action_id"))
    if busy:
        return refuse("node_busy", ", ".join(f"{host} in action {pk}" for host, pk in busy),
                      busy=[[host, pk] for host, pk in busy])
    limit = node_limit(policy, cluster)
    active = RemediationNode.objects.filter(cluster=cluster, active=True).count()
    if active + len(nodes) > limit:
        return refuse("max_nodes", f"{active} in remediation, at most {limit} of {cluster.node_count} at once",
                      active=active, limit=limit, count=cluster.node_count)
    hours = max(policy.cooldown_hours, settings.REMEDIATION_MIN_COOLDOWN_HOURS)  # a policy saved below the floor
    since = timezone.now() - timedelta(hours=hours)
    recent = sorted({host for host, progress in RemediationNode.objects.filter(
        cluster=cluster, hostname__in=nodes, released_at__gte=since,
        action__state__in=(ActionState.DONE, ActionState.FAILED))
        .exclude(action__kind=ActionKind.CHECK)  # a health check changes nothing on the node: it starts no cool-down
        .values_list("hostname", "action__progress")
        if not (progress or {}).get("untouched")})  # a failed action that never reached the node starts none
    if recent:
        return refuse("cooldown", f"{', '.join(recent)} within {hours} h", nodes=recent, hours=hours)
    return None
