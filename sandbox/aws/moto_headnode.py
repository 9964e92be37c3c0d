"""SSM Run Command on an emulated head node, for moto's server.

The portal acts on a cluster by sending shell commands to its head node (ParallelCluster) or its
controller node (HyperPod Slurm) with SSM ``SendCommand`` (``AWS-RunShellScript``) and reading the
result with ``GetCommandInvocation``. moto accepts the command and answers every invocation with an
empty success, so nothing the portal sends would ever do anything. This module gives the embedded
endpoint a head node: each entry of the ``commands`` parameter is matched against a registry of
handlers (``@headnode_command(r"^sbatch\\b")``), which see the cluster as moto knows it and return
an exit status, stdout and stderr (and, if they emulate a slow command, how long it runs). A command
no handler claims fails as a shell would, with ``command not found`` and exit status 127.

The handlers live beside the commands they emulate (Slurm's job commands in
:mod:`sandbox.aws.moto_sbatch`); a module registers its handlers when it is imported, and
:func:`apply` (called by :func:`sandbox.aws.moto_install.install`) imports those listed in
``HANDLER_MODULES``.
"""

from __future__ import annotations

import copy
import datetime
import importlib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from moto.cloudformation import models as cfn_models
from moto.core.exceptions import JsonRESTError
from moto.core.utils import utcnow
from moto.sagemaker.models import sagemaker_backends
from moto.ssm import models as ssm_models

from sandbox.aws import moto_hyperpod_nodes
from sandbox.aws.moto_pcluster import PclusterCluster

RUN_SHELL_SCRIPT = "AWS-RunShellScript"
PLUGIN = "aws:runShellScript"
# Modules whose import registers head-node commands (they import this module for the decorator).
HANDLER_MODULES: tuple[str, ...] = ("sandbox.aws.moto_sbatch",)
# HyperPod nodes are SSM targets named sagemaker-cluster:<cluster id>_<instance group>-<instance id>.
HYPERPOD_TARGET = re.compile(r"^sagemaker-cluster:(?P<cluster_id>[^_]+)_(?P<node>.+)$")


@dataclass(frozen=True)
class Node:
    """One compute node of an emulated cluster: its hostname, instance type and Slurm node name.

    ParallelCluster names a node in Slurm ``<queue>-st-<compute resource>-<n>`` and keeps the instance's
    hostname (``ip-10-1-45-12``) as its ``NodeHostName``; HyperPod's Slurm names are the hostnames
    (``name`` left empty)."""

    hostname: str
    instance_type: str
    instance_id: str = ""
    name: str = ""

    @property
    def slurm_name(self) -> str:
        return self.name or self.hostname

    @property
    def address(self) -> str:
        return self.hostname.removeprefix("ip-").replace("-", ".")


@dataclass
class HeadNodeCluster:
    """The cluster a head node belongs to, as moto knows it.

    ``state`` is the head node's own memory (Slurm jobs, node states): kept on moto's SSM backend,
    so moto's reset forgets it with everything else.
    """

    name: str
    orchestrator: str  # "parallelcluster" or "hyperpod"
    nodes: list[Node]
    configuration: dict[str, Any]
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """What a handler knows: where the command runs and the command line itself."""

    region: str
    account: str
    instance_id: str
    cluster: HeadNodeCluster | None
    command: str

    @property
    def argv(self) -> list[str]:
        """The command's first line split on blanks (enough for the commands the portal sends)."""
        return self.command.strip().splitlines()[0].split() if self.command.strip() else []


@dataclass(frozen=True)
class Result:
    """What a command printed and how it ended; ``seconds`` it stays InProgress first."""

    exit_status: int = 0
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0


Handler = Callable[[Context], Result]
_handlers: list[tuple[re.Pattern[str], Handler]] = []
_lock = threading.Lock()
_throttled = {"SendCommand": 0}


def throttle(times: int = 1) -> None:
    """The next ``times`` ``SendCommand`` calls answer ThrottlingException, as SSM does under load."""
    with _lock:
        _throttled["SendCommand"] = times


def _check_throttle() -> None:
    with _lock:
        if _throttled["SendCommand"] <= 0:
            return
        _throttled["SendCommand"] -= 1
    raise JsonRESTError("ThrottlingException", "Rate exceeded")


def headnode_command(pattern: str) -> Callable[[Handler], Handler]:
    """Register a handler for the commands whose text matches ``pattern`` (``re.search``)."""
    compiled = re.compile(pattern)

    def register(handler: Handler) -> Handler:
        with _lock:
            _handlers[:] = [(p, h) for p, h in _handlers if p.pattern != compiled.pattern]
            _handlers.append((compiled, handler))
        return handler

    return register


def run(context: Context) -> Result:
    """Run one command through the first handler that claims it."""
    for pattern, handler in list(_handlers):
        if pattern.search(context.command.lstrip()):
            return handler(context)
    name = context.argv[0] if context.argv else ""
    return Result(127, "", f"bash: line 1: {name}: command not found\n")


def _pcluster_nodes(configuration: dict[str, Any]) -> list[Node]:
    """ParallelCluster's static nodes: ``<queue>-st-<compute resource>-<n>`` for each MinCount, on instances
    whose hostnames are their private addresses (``ip-10-1-45-12`` …, one /24 per compute resource)."""
    nodes: list[Node] = []
    ordinal = 0
    for queue in (configuration.get("Scheduling") or {}).get("SlurmQueues") or []:
        for resource in queue.get("ComputeResources") or []:
            instance_type = resource.get("InstanceType") or ((resource.get("Instances") or [{}])[0]).get("InstanceType", "")
            count = int(resource.get("MinCount") or resource.get("MaxCount") or 0)
            nodes.extend(Node(f"ip-10-1-{45 + ordinal}-{11 + i}", str(instance_type),
                              name=f"{queue['Name']}-st-{resource['Name']}-{i}") for i in range(1, count + 1))
            ordinal += 1
    return nodes


def _state(account: str, region: str, key: str) -> dict[str, Any]:
    backend = ssm_models.ssm_backends[account][region]
    return backend.__dict__.setdefault("geniac_headnodes", {}).setdefault(key, {})


def _pcluster_of(account: str, region: str, instance_id: str) -> HeadNodeCluster | None:
    for stack in list(cfn_models.cloudformation_backends[account][region].stacks.values()):
        if stack.status == "DELETE_COMPLETE":
            continue
        for resource in list(getattr(stack.resource_map, "_parsed_resources", {}).values()):
            if isinstance(resource, PclusterCluster) and resource.instance_id == instance_id:
                configuration = getattr(resource, "configuration", {}) or {}
                return HeadNodeCluster(resource.ref, "parallelcluster", _pcluster_nodes(configuration), configuration,
                                       _state(account, region, f"pcluster:{resource.ref}"))
    return None


def _hyperpod_of(account: str, region: str, cluster_id: str) -> HeadNodeCluster | None:
    for cluster in list(sagemaker_backends[account][region].clusters.values()):
        if cluster.arn.rsplit("/", 1)[-1] != cluster_id and cluster.cluster_name != cluster_id:
            continue
        groups = {g["InstanceGroupName"]: g for g in cluster.instance_groups}
        moto_hyperpod_nodes.prepare(cluster)  # the nodes' hostnames, as ListClusterNodes gives them
        nodes = [Node(n.hostname, n.instance_type, n.instance_id) for n in cluster.nodes.values()
                 if "controller" not in n.instance_group_name.lower() and "login" not in n.instance_group_name.lower()]
        return HeadNodeCluster(cluster.cluster_name, "hyperpod", nodes, {"InstanceGroups": list(groups.values())},
                               _state(account, region, f"hyperpod:{cluster.cluster_name}"))
    return None


def cluster_of(account: str, region: str, target: str) -> HeadNodeCluster | None:
    """The cluster whose head node (or HyperPod node target) ``target`` is, else None."""
    match = HYPERPOD_TARGET.match(target)
    if match is not None:
        return _hyperpod_of(account, region, match.group("cluster_id"))
    return _pcluster_of(account, region, target)


def _iso_duration(seconds: float) -> str:
    return f"PT{max(seconds, 0):.3f}S"


def _invocation(command: Any, instance_id: str, account: str, region: str) -> tuple[dict[str, Any], datetime.datetime]:
    """Run every command line on one instance; the finished invocation and when it finishes."""
    cluster = cluster_of(account, region, instance_id)
    outputs, errors, status, seconds = [], [], 0, 0.0
    for line in (command.parameters or {}).get("commands", []):
        result = run(Context(region, account, instance_id, cluster, str(line)))
        outputs.append(result.stdout)
        errors.append(result.stderr)
        status, seconds = result.exit_status, seconds + result.seconds
        if status != 0:  # the portal's scripts stop at the first failure (set -e)
            break
    start = command.requested_date_time
    end = start + datetime.timedelta(seconds=seconds)
    outcome = "Success" if status == 0 else "Failed"
    finished = {
        "CommandId": command.command_id,
        "InstanceId": instance_id,
        "Comment": command.comment,
        "DocumentName": command.document_name,
        "PluginName": PLUGIN,
        "ResponseCode": status,
        "ExecutionStartDateTime": start.isoformat(),
        "ExecutionElapsedTime": _iso_duration(seconds),
        "ExecutionEndDateTime": end.isoformat(),
        "Status": outcome,
        "StatusDetails": outcome,
        "StandardOutputContent": "".join(outputs)[:24000],  # SSM keeps the first 24,000 characters
        "StandardOutputUrl": "",
        "StandardErrorContent": "".join(errors)[:8000],
        "StandardErrorUrl": "",
    }
    return finished, end


def _in_progress(finished: dict[str, Any]) -> dict[str, Any]:
    running = copy.deepcopy(finished)
    running.update({"Status": "InProgress", "StatusDetails": "InProgress", "ResponseCode": -1,
                    "ExecutionEndDateTime": "", "StandardOutputContent": "", "StandardErrorContent": ""})
    return running


def apply() -> None:
    """Make ``AWS-RunShellScript`` commands run on the emulated head node; import the known handlers."""
    for name in HANDLER_MODULES:
        importlib.import_module(name)

    backend_class = ssm_models.SimpleSystemManagerBackend
    original_send = backend_class.send_command
    original_get = ssm_models.Command.get_invocation

    def send_command(self: Any, *args: Any, **kwargs: Any) -> Any:
        _check_throttle()
        command = original_send(self, *args, **kwargs)
        if command.document_name != RUN_SHELL_SCRIPT:
            return command
        results = {}
        for index, invocation in enumerate(command.invocations):
            finished, end = _invocation(command, invocation["InstanceId"], self.account_id, self.region_name)
            command.invocations[index] = finished
            results[invocation["InstanceId"]] = end
        command.geniac_finishes = results
        if any(i["Status"] == "Failed" for i in command.invocations):
            command.status, command.error_count = "Failed", sum(i["Status"] == "Failed" for i in command.invocations)
        return command

    def get_invocation(self: Any, instance_id: str, plugin_name: str | None) -> dict[str, Any]:
        invocation = original_get(self, instance_id, plugin_name)
        end = getattr(self, "geniac_finishes", {}).get(instance_id)
        if end is not None and utcnow() < end:
            return _in_progress(invocation)
        return invocation

    backend_class.send_command = send_command
    ssm_models.Command.get_invocation = get_invocation
