"""Slurm's ``scontrol`` on the emulated head node (``clusters.aws.moto_headnode``): the commands node remediation
sends, and ``scontrol show node`` to read what they did.

Node states live in the head node's memory (``cluster.state["slurm_nodes"]``). A drain keeps the node DRAIN with
its reason; ``scontrol reboot ASAP nextstate=RESUME`` reboots it and it comes back IDLE (healthy, as a rebooted
node whose fault was transient does); ``state=POWER_DOWN_FORCE`` powers it down and ParallelCluster brings it
back IDLE on a new instance (a new instance id). A node name the cluster does not have fails as scontrol does.
Imported by ``clusters.aws.moto_install.install`` (importing it registers the handlers).
"""
from __future__ import annotations

import shlex

from moto.moto_api._internal import mock_random

from clusters.aws.moto_headnode import Context, Result, headnode_command


def _instance_id() -> str:
    return "i-" + "".join(mock_random.choice("0123456789abcdef") for _ in range(17))


def _nodes(context: Context) -> dict[str, dict]:
    """Every node's Slurm state, created IDLE from the cluster's configuration the first time."""
    state = context.cluster.state.setdefault("slurm_nodes", {})
    for node in context.cluster.nodes:
        state.setdefault(node.hostname, {"state": "IDLE", "reason": "", "instance_id": node.instance_id or
                                         _instance_id(), "reboots": 0, "replacements": 0})
    return state


def _options(args: list[str]) -> tuple[dict[str, str], list[str]]:
    options, words = {}, []
    for arg in args:
        name, sep, value = arg.partition("=")
        if sep:
            options[name.lower()] = value
        else:
            words.append(arg)
    return options, words


def _unknown(names: list[str], nodes: dict) -> Result | None:
    missing = [n for n in names if n not in nodes]
    if missing or not names:
        return Result(1, "", f"scontrol: error: Invalid node name specified: {','.join(missing) or '(none)'}\n")
    return None


@headnode_command(r"^scontrol\s+update\b")
def update(context: Context) -> Result:
    if context.cluster is None:
        return Result(1, "", "scontrol: error: Unable to contact slurm controller\n")
    options, _words = _options(shlex.split(context.command)[2:])
    nodes = _nodes(context)
    names = [n for n in options.get("nodename", "").split(",") if n]
    refused = _unknown(names, nodes)
    if refused:
        return refused
    wanted = options.get("state", "").upper()
    for name in names:
        node = nodes[name]
        if wanted == "DRAIN":
            node.update(state="DRAIN", reason=options.get("reason", ""))
        elif wanted == "POWER_DOWN_FORCE":  # ParallelCluster terminates it and launches a new instance
            node.update(state="IDLE", reason="", instance_id=_instance_id(), replacements=node["replacements"] + 1)
        elif wanted in ("RESUME", "IDLE"):
            node.update(state="IDLE", reason="")
        else:
            return Result(1, "", f"scontrol: error: Invalid node state specified: {wanted}\n")
    return Result(0, "", "")


@headnode_command(r"^scontrol\s+reboot\b")
def reboot(context: Context) -> Result:
    if context.cluster is None:
        return Result(1, "", "scontrol: error: Unable to contact slurm controller\n")
    _options_, words = _options(shlex.split(context.command)[2:])
    names = [n for w in words if w.upper() != "ASAP" for n in w.split(",") if n]
    nodes = _nodes(context)
    refused = _unknown(names, nodes)
    if refused:
        return refused
    for name in names:  # the reboot is emulated as done at once; nextstate=RESUME brings the node back
        nodes[name].update(state="IDLE", reason="", reboots=nodes[name]["reboots"] + 1)
    return Result(0, "", "")


@headnode_command(r"^scontrol\s+show\s+node\b")
def show_node(context: Context) -> Result:
    if context.cluster is None:
        return Result(1, "", "scontrol: error: Unable to contact slurm controller\n")
    words = shlex.split(context.command)[3:]
    nodes = _nodes(context)
    names = words or sorted(nodes)
    refused = _unknown(names, nodes)
    if refused:
        return refused
    text = "".join(f"NodeName={n} State={nodes[n]['state']} Reason={nodes[n]['reason'] or '(null)'} "
                   f"InstanceId={nodes[n]['instance_id']}\n" for n in names)
    return Result(0, text, "")
