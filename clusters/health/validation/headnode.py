"""Shell commands on a cluster's head node through SSM Run Command: how the portal acts inside a cluster.

A validation job is submitted with ``sbatch`` on the head node (ParallelCluster) or the controller node
(HyperPod Slurm); node remediation sends ``scontrol`` the same way. The head node is found from the
cluster's own stack (its ``HeadNodeInstanceId`` output), HyperPod's controller from ``ListClusterNodes``
(its SSM target is ``sagemaker-cluster:<cluster id>_<group>-<instance id>``). AWS's errors come back
as ``portal.core.aws.AwsError`` (``retryable`` for throttling), for the caller's retry with backoff.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from clusters import provider_states
from clusters.choices import Orchestrator, StackRole
from clusters.software import release
from portal.core import aws

DOCUMENT = "AWS-RunShellScript"
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
    """The SSM target of the cluster's head node (ParallelCluster) or controller node (HyperPod)."""
    stack = cluster.stacks.filter(role=StackRole.CLUSTER).first()
    if stack is None:
        raise aws.AwsError("the cluster has no cluster stack to find its head node in")
    if cluster.orchestrator == Orchestrator.HYPERPOD:
        sagemaker = aws.client("sagemaker", organization=cluster.organization, region=cluster.region)
        described = _call(sagemaker.describe_cluster, ClusterName=cluster.name)
        nodes = _call(sagemaker.list_cluster_nodes, ClusterName=cluster.name,
                      InstanceGroupNameContains=release.CONTROLLER_GROUP)["ClusterNodeSummaries"]
        if not nodes:
            raise aws.AwsError(f"HyperPod cluster {cluster.name} has no {release.CONTROLLER_GROUP} node")
        cluster_id = described["ClusterArn"].rsplit("/", 1)[-1]
        return f"sagemaker-cluster:{cluster_id}_{nodes[0]['InstanceGroupName']}-{nodes[0]['InstanceId']}"
    cloudformation = aws.client("cloudformation", organization=cluster.organization, region=cluster.region)
    found = _call(cloudformation.describe_stacks, StackName=stack.stack_id or stack.stack_name)["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs", [])}
    if not outputs.get("HeadNodeInstanceId"):
        raise aws.AwsError(f"stack {stack.stack_name} has no HeadNodeInstanceId output")
    return outputs["HeadNodeInstanceId"]


def send(cluster, node: str, commands: list[str], comment: str = "") -> str:
    """Run ``commands`` (one script, stopping at the first failure) on ``node``; the command id."""
    ssm = aws.client("ssm", organization=cluster.organization, region=cluster.region)
    sent = _call(ssm.send_command, InstanceIds=[node], DocumentName=DOCUMENT, Comment=comment[:100],
                 Parameters={"commands": commands})
    return sent["Command"]["CommandId"]


def invocation(cluster, node: str, command_id: str) -> Invocation:
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
