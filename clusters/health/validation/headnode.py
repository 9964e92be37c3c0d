"""Commands on a cluster's Slurm controller: how the portal acts inside a cluster.

A validation job is submitted with ``sbatch`` on the head node (ParallelCluster) or the controller node
(HyperPod Slurm); node remediation sends ``scontrol`` the same way. Two transports, one interface
(``send`` answers a command id, ``invocation`` where it stands):

- ParallelCluster: SSM Run Command on the head node, found from the cluster's own stack (its
  ``HeadNodeInstanceId`` output). AWS's errors come back as ``portal.core.aws.AwsError`` (``retryable`` for
  throttling), for the caller's retry with backoff.
- HyperPod Slurm: HyperPod nodes are not SSM ``SendCommand`` targets, so each command is a work item for the
  agent on the controller (``validation.agent``, docs/DECISIONS.md 42); the target is :data:`AGENT`. The agent runs
  kinds of work, never shell text: each command is a :class:`Work`, which carries both the shell line SSM runs
  and the kind and payload the agent builds the same command from.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from clusters import provider_states
from clusters.choices import Orchestrator, StackRole
from clusters.health.choices import WorkKind, WorkState
from clusters.health.models import AgentWorkItem
from clusters.health.validation import agent, slurm_names
from portal.core import aws

DOCUMENT = "AWS-RunShellScript"
AGENT = "geniac-agent"  # the target of a HyperPod Slurm cluster: its controller's agent
AGENT_COMMAND = "agent-"  # an agent command id: agent-<work item id>
_SUBMITTED = re.compile(r"^(?:Submitted batch job )?(\d+)(?:;\S+)?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Invocation:
    status: str  # Pending, InProgress, Success, Failed, TimedOut, Cancelled ...
    exit_status: int
    stdout: str
    stderr: str

    @property
    def finished(self) -> bool:
        """Every status of SSM's enum decided in ``clusters.provider_states`` (``Cancelling`` is not finished)."""
        return not provider_states.ssm_running(self.status)


def _call(method, **kwargs):
    try:
        return method(**kwargs)
    except aws.AWS_EXCEPTIONS as exc:
        raise aws.translate(exc) from exc


def target(cluster) -> str:
    """The SSM target of the cluster's head node (ParallelCluster), or :data:`AGENT` (HyperPod Slurm)."""
    if cluster.orchestrator == Orchestrator.HYPERPOD:
        return AGENT
    stack = cluster.stacks.filter(role=StackRole.CLUSTER).first()
    if stack is None:
        raise aws.AwsError("the cluster has no cluster stack to find its head node in")
    cloudformation = aws.client("cloudformation", organization=cluster.organization, region=cluster.region)
    found = _call(cloudformation.describe_stacks, StackName=stack.stack_id or stack.stack_name)["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs", [])}
    if not outputs.get("HeadNodeInstanceId"):
        raise aws.AwsError(f"stack {stack.stack_name} has no HeadNodeInstanceId output")
    return outputs["HeadNodeInstanceId"]


@dataclass(frozen=True)
class Work:
    """One command for Slurm: the shell line (SSM) and the kind and payload the agent builds the same command from."""

    kind: str
    payload: dict
    line: str


def listing() -> Work:
    """Slurm's node listing (``slurm_names.COMMAND``)."""
    return Work(WorkKind.NODES, {}, slurm_names.COMMAND)


def _job_id(slurm_job_id: str) -> str:
    if not slurm_job_id.isdigit():
        raise ValueError(f"not a Slurm job id: {slurm_job_id!r}")
    return slurm_job_id


def submission(script: str, nodelist: list[str] = ()) -> Work:
    """``sbatch --parsable`` of ``script``; ``nodelist`` (Slurm's names) is the allocation when given."""
    line = sbatch_command(script)
    nodelist = list(nodelist)
    if nodelist:
        line = line.replace("sbatch --parsable",
                            f"sbatch --parsable --nodes={len(nodelist)} --nodelist={','.join(nodelist)}", 1)
    return Work(WorkKind.VALIDATION, {"action": "sbatch", "script": script, "nodelist": nodelist}, line)


def scancel(slurm_job_id: str) -> Work:
    job = _job_id(slurm_job_id)
    return Work(WorkKind.VALIDATION, {"action": "scancel", "job": job}, f"scancel {job}")


SACCT_FORMAT = "JobID,State,ExitCode,Reason"


def sacct(slurm_job_id: str) -> Work:
    job = _job_id(slurm_job_id)
    return Work(WorkKind.VALIDATION, {"action": "sacct", "job": job, "format": SACCT_FORMAT},
                f"sacct -j {job} -X -n -P -o {SACCT_FORMAT}")


def send(cluster, node: str, commands: list[str | Work], comment: str = "") -> str:
    """Run ``commands`` (one script, stopping at the first failure) on ``node``; the command id. The agent
    (:data:`AGENT`) takes one :class:`Work` per command."""
    if node == AGENT:
        if len(commands) != 1 or not isinstance(commands[0], Work):
            raise ValueError("the controller agent runs one kind of work per command, not shell lines")
        item = agent.queue(cluster, commands[0].kind, commands[0].payload, comment)
        return f"{AGENT_COMMAND}{item.pk}"
    lines = [c.line if isinstance(c, Work) else c for c in commands]
    ssm = aws.client("ssm", organization=cluster.organization, region=cluster.region)
    sent = _call(ssm.send_command, InstanceIds=[node], DocumentName=DOCUMENT, Comment=comment[:100],
                 Parameters={"commands": lines})
    return sent["Command"]["CommandId"]


_AGENT_STATUS = {WorkState.QUEUED: "Pending", WorkState.CLAIMED: "InProgress"}


def _agent_invocation(cluster, command_id: str) -> Invocation:
    pk = command_id.removeprefix(AGENT_COMMAND)
    item = AgentWorkItem.objects.filter(cluster=cluster, pk=int(pk) if pk.isdigit() else 0).first()
    if item is None:
        return Invocation("Failed", -1, "", f"the portal has no work item {pk} of this cluster")
    if item.state in _AGENT_STATUS:
        return Invocation(_AGENT_STATUS[item.state], -1, "", "")
    exit_status = -1 if item.exit_status is None else item.exit_status
    ok = item.state == WorkState.DONE and exit_status == 0
    return Invocation("Success" if ok else "Failed", exit_status, item.stdout, item.stderr)


def invocation(cluster, node: str, command_id: str) -> Invocation:
    if node == AGENT or command_id.startswith(AGENT_COMMAND):
        return _agent_invocation(cluster, command_id)
    ssm = aws.client("ssm", organization=cluster.organization, region=cluster.region)
    try:
        found = _call(ssm.get_command_invocation, CommandId=command_id, InstanceId=node)
    except aws.AwsError as exc:  # SSM shows a new invocation a little after SendCommand: Pending, for a while
        if provider_states.invocation_not_visible_yet(exc, command_id, node):
            return Invocation("Pending", -1, "", "")
        raise
    return Invocation(found["Status"], int(found.get("ResponseCode", -1)), found.get("StandardOutputContent", ""),
                      found.get("StandardErrorContent", ""))


def sbatch_command(script: str) -> str:
    """``sbatch --parsable`` with the script as a quoted heredoc (nothing in it is expanded by the shell)."""
    if "\nGENIAC_JOB\n" in f"\n{script}\n":
        raise ValueError("the script contains the heredoc's end marker")
    return f"sbatch --parsable <<'GENIAC_JOB'\n{script.rstrip()}\nGENIAC_JOB"


def slurm_job_id(stdout: str) -> str | None:
    """The job id sbatch printed (``--parsable``: ``1234`` or ``1234;cluster``), else None."""
    match = _SUBMITTED.search(stdout)
    return match.group(1) if match else None
