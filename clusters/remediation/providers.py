"""The ways a remediation reaches a node: SageMaker HyperPod's node API and Slurm on a ParallelCluster head node
through SSM ``SendCommand``, each through the organization's assumed role (``portal.core.aws``), and Slurm on a
HyperPod controller through the portal's agent there (a drain: ``SlurmAgent``, docs/DECISIONS.md 42).

Each provider answers three questions for the worker: which provider node is this hostname, please act on these
nodes, and are they back. Errors leave as ``portal.core.aws.AwsError`` (throttling is retryable) or ``Failed`` with a
reason of ``portal.core.provider_errors.REMEDIATION_FAILURES``.
"""
from __future__ import annotations

import shlex

from clusters import provider_states
from clusters.choices import Orchestrator
from clusters.health.choices import WorkKind
from clusters.health.validation import agent, headnode
from clusters.remediation.choices import ActionKind
from portal.core import aws

BATCH_LIMIT = 25  # node ids per BatchReboot/BatchReplaceClusterNodes request (botocore's model: 1 to 25)
MAX_PAGES = 200  # ListClusterNodes pages of 100: a 20,000-node cluster
EVENT_PAGE = 100  # ListClusterEvents' MaxResults (the model's maximum)
CHECK_LIMIT = 500  # instance ids per instance group in one StartClusterHealthCheck (the model's list size)
# What a deep health check the portal starts runs: the single-node stress test and the node's connectivity
# (MultiNodeTrainingValidation needs the whole group idle; HyperPod's own documentation keeps it for new groups).
DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")


class Failed(Exception):
    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


def _call(method, **params):
    try:
        return method(**params)
    except aws.AWS_EXCEPTIONS as exc:
        raise aws.translate(exc) from exc


class HyperPod:
    """``ListClusterNodes`` (with the logical ids) to find the nodes, ``BatchReboot/ReplaceClusterNodes`` to act."""

    def __init__(self, cluster):
        self.client = aws.client("sagemaker", organization=cluster.organization, region=cluster.region)
        self.name = cluster.outputs.get("ClusterName") or cluster.name

    def _nodes(self) -> list[dict]:
        """Every node of the cluster, page by page, with its logical id (HyperPod returns ``NodeLogicalId`` only
        when asked, and only the logical id survives a replacement). A token seen twice, or past ``MAX_PAGES``,
        is the provider's fault: the action fails rather than loops."""
        found, token, seen = [], None, set()
        for _ in range(MAX_PAGES):
            params = {"ClusterName": self.name, "IncludeNodeLogicalIds": True, **({"NextToken": token} if token else {})}
            page = _call(self.client.list_cluster_nodes, **params)
            found += page.get("ClusterNodeSummaries", [])
            token = page.get("NextToken")
            if not token:
                return found
            if token in seen:
                break
            seen.add(token)
        raise Failed(f"HyperPod kept paging the nodes of {self.name} (ListClusterNodes).", "provider_refused")

    def locate(self, hostnames: list[str]) -> dict[str, dict]:
        """Hostname → {"id", "logical"}, from the summaries' ``PrivateDnsHostname`` (its full name or its first
        label, which is what Slurm and the exporters call the node): one listing, no call per node."""
        wanted, mapping = set(hostnames), {}
        for summary in self._nodes():
            host = summary.get("PrivateDnsHostname", "")
            for name in (host, host.split(".")[0]):
                if name in wanted:
                    mapping[name] = {"id": summary["InstanceId"], "logical": summary.get("NodeLogicalId", ""),
                                     "group": summary.get("InstanceGroupName", "")}
        missing = sorted(wanted - set(mapping))
        if missing:
            raise Failed(f"No node of HyperPod cluster {self.name} has the hostname {', '.join(missing)}.",
                         "node_not_found")
        return mapping

    def instances(self) -> dict[str, dict]:
        """Instance id → {"host", "logical", "group"} of every node listed now (hostnames as the health reports
        name them: the first label of ``PrivateDnsHostname``)."""
        return {s["InstanceId"]: {"host": s.get("PrivateDnsHostname", "").split(".")[0],
                                  "logical": s.get("NodeLogicalId", ""), "group": s.get("InstanceGroupName", "")}
                for s in self._nodes()}

    def events(self, after=None) -> list[dict]:
        """The cluster's events since ``after`` (all of them for None), oldest first, page by page
        (``ListClusterEvents``); a token seen twice, or past ``MAX_PAGES``, is the provider's fault."""
        found, token, seen = [], None, set()
        for _ in range(MAX_PAGES):
            params = {"ClusterName": self.name, "SortBy": "EventTime", "SortOrder": "Ascending",
                      "MaxResults": EVENT_PAGE, **({"EventTimeAfter": after} if after else {}),
                      **({"NextToken": token} if token else {})}
            page = _call(self.client.list_cluster_events, **params)
            found += page.get("Events", [])
            token = page.get("NextToken")
            if not token:
                return found
            if token in seen:
                break
            seen.add(token)
        raise Failed(f"HyperPod kept paging the events of {self.name} (ListClusterEvents).", "provider_refused")

    def event(self, event_id: str) -> dict:
        """One event with its metadata (``DescribeClusterEvent``): the node's logical id, a failure's message."""
        return _call(self.client.describe_cluster_event, ClusterName=self.name, EventId=event_id)["EventDetails"]

    def check(self, nodes: list[dict]) -> list[str]:
        """Start HyperPod's deep health checks on ``nodes`` ({"id", "group"} each), one configuration per instance
        group (``StartClusterHealthCheck``)."""
        groups: dict[str, list[str]] = {}
        for node in nodes:
            groups.setdefault(node.get("group") or "", []).append(node["id"])
        if "" in groups:
            raise Failed("HyperPod did not say which instance group a node is in.", "node_not_found")
        configs = [{"InstanceGroupName": group, "InstanceIds": ids[start:start + CHECK_LIMIT],
                    "DeepHealthChecks": list(DEEP_HEALTH_CHECKS)}
                   for group, ids in sorted(groups.items()) for start in range(0, len(ids), CHECK_LIMIT)]
        _call(self.client.start_cluster_health_check, ClusterName=self.name, DeepHealthCheckConfigurations=configs)
        return [f"deep health checks ({', '.join(DEEP_HEALTH_CHECKS)}) started on {group}: {', '.join(ids)}"
                for group, ids in sorted(groups.items())]

    def act(self, kind: str, node_ids: list[str]) -> list[str]:
        """Reboot or replace ``node_ids`` in batches; returns the provider's answer, one line per batch."""
        method = self.client.batch_replace_cluster_nodes if kind == ActionKind.REPLACE else \
            self.client.batch_reboot_cluster_nodes
        lines = []
        for start in range(0, len(node_ids), BATCH_LIMIT):
            batch = node_ids[start:start + BATCH_LIMIT]
            answer = _call(method, ClusterName=self.name, NodeIds=batch)
            failed = answer.get("Failed") or []
            if failed:
                text = "; ".join(f"{f.get('NodeId')}: {f.get('ErrorCode')} {f.get('Message', '')}".strip()
                                 for f in failed)
                reason = "node_not_found" if all(f.get("ErrorCode") == "InstanceIdNotFound" for f in failed) \
                    else "provider_refused"
                raise Failed(f"HyperPod refused the {kind} of {text}", reason)
            lines.append(f"accepted: {', '.join(answer.get('Successful') or batch)}")
        return lines

    def statuses(self, mapping: dict[str, dict]) -> dict[str, tuple[str, str]]:
        """Hostname → (status, instance id) now, found by logical id (a replaced node has a new instance id);
        ``NotFound`` for a node listed under neither (what each status means: ``clusters.provider_states``)."""
        by_logical = {}
        by_id = {}
        for summary in self._nodes():
            status = (summary.get("InstanceStatus") or {}).get("Status", "")
            by_id[summary["InstanceId"]] = (status, summary["InstanceId"])
            if summary.get("NodeLogicalId"):
                by_logical[summary["NodeLogicalId"]] = (status, summary["InstanceId"])
        return {host: by_logical.get(node.get("logical")) or by_id.get(node["id"]) or ("NotFound", "")
                for host, node in mapping.items()}


def scontrol(kind: str, nodes: list[str], reason: str) -> str:
    """The Slurm command the head node runs for ``kind`` on ``nodes``, Slurm's node names
    (``clusters.health.validation.slurm_names``: on ParallelCluster they are not the hostnames)."""
    names = ",".join(nodes)
    why = shlex.quote(f"portal remediation: {reason}"[:200])
    if kind == ActionKind.DRAIN:
        return f"scontrol update nodename={names} state=DRAIN reason={why}"
    if kind == ActionKind.REBOOT:
        return f"scontrol reboot ASAP nextstate=RESUME reason={why} {names}"
    return f"scontrol update nodename={names} state=POWER_DOWN_FORCE reason={why}"


def scontrol_work(kind: str, nodes: list[str], reason: str) -> headnode.Work:
    """:func:`scontrol` as a command either transport runs: the shell line for SSM, the kind and payload for the
    controller agent (which builds the same command itself)."""
    return headnode.Work(WorkKind.SCONTROL, {"action": kind, "nodes": list(nodes), "reason": reason[:200]},
                         scontrol(kind, nodes, reason))


class ParallelCluster:
    """SSM ``SendCommand`` (``AWS-RunShellScript``) on the head node, followed with ``GetCommandInvocation``."""

    def __init__(self, cluster):
        self.client = aws.client("ssm", organization=cluster.organization, region=cluster.region)
        self.head = cluster.outputs.get("HeadNodeInstanceId", "")
        if not self.head:
            raise Failed("The cluster's stack names no head node (HeadNodeInstanceId).", "node_not_found")

    def send(self, command: str | headnode.Work) -> str:
        line = command.line if isinstance(command, headnode.Work) else command
        answer = _call(self.client.send_command, InstanceIds=[self.head], DocumentName="AWS-RunShellScript",
                       Parameters={"commands": [line]}, Comment="GENIAC portal node remediation")
        return answer["Command"]["CommandId"]

    def result(self, command_id: str) -> tuple[str, str]:
        """(status, output) of the command on the head node; status is SSM's (Success, Failed, InProgress …)."""
        status, stdout, stderr = self.streams(command_id)
        return status, (stdout + stderr).strip()[:2000]

    def streams(self, command_id: str) -> tuple[str, str, str]:
        """(status, standard output, standard error) of the command on the head node, whole. An invocation SSM does
        not show yet (right after SendCommand) is Pending for a bounded time."""
        try:
            answer = _call(self.client.get_command_invocation, CommandId=command_id, InstanceId=self.head)
        except aws.AwsError as exc:
            if provider_states.invocation_not_visible_yet(exc, command_id, self.head):
                return "Pending", "", ""
            raise
        return (answer.get("Status", ""), answer.get("StandardOutputContent") or "",
                answer.get("StandardErrorContent") or "")


class SlurmAgent:
    """Slurm on a HyperPod controller: each command a work item for the portal's agent there, followed as an SSM
    invocation is (``clusters.health.validation.headnode``). An agent that has not polled lately fails the action
    before anything is queued, with the words that say why; one that goes quiet after leaves the command queued until
    it polls again or the action's deadline passes."""

    def __init__(self, cluster):
        self.cluster = cluster

    def send(self, command: headnode.Work) -> str:
        absent = agent.absent(self.cluster)
        if absent:
            raise Failed(absent, "command_failed")
        return headnode.send(self.cluster, headnode.AGENT, [command], comment="GENIAC portal node remediation")

    def result(self, command_id: str) -> tuple[str, str]:
        status, stdout, stderr = self.streams(command_id)
        return status, (stdout + stderr).strip()[:2000]

    def streams(self, command_id: str) -> tuple[str, str, str]:
        found = headnode.invocation(self.cluster, headnode.AGENT, command_id)
        return found.status, found.stdout, found.stderr


def for_cluster(cluster):
    return HyperPod(cluster) if cluster.orchestrator == Orchestrator.HYPERPOD else ParallelCluster(cluster)


def slurm_for(cluster):
    """Who runs Slurm's commands on ``cluster``: SSM on a ParallelCluster head node, the agent on a HyperPod
    controller."""
    return SlurmAgent(cluster) if cluster.orchestrator == Orchestrator.HYPERPOD else ParallelCluster(cluster)
