"""Slurm's ``scontrol`` on the emulated head node (``sandbox.aws.moto_headnode``): the commands node remediation
sends, and ``scontrol show node`` to read what they did.

Node states live in the head node's memory (``cluster.state["slurm_nodes"]``). A drain keeps the node DRAIN with
its reason; ``scontrol reboot ASAP nextstate=RESUME`` reboots it and it comes back IDLE (healthy, as a rebooted
node whose fault was transient does); ``state=POWER_DOWN_FORCE`` powers it down and ParallelCluster brings it
back IDLE on a new instance (a new instance id). Nodes are named as the scheduler names them
(ParallelCluster: ``<queue>-st-<compute resource>-<n>``, the hostname being ``NodeHostName``); a name the cluster
does not have, a hostname included, fails as scontrol does. ``scontrol show nodes --json`` answers the shape of
Slurm's data parser (``nodes[].name``, ``hostname``, ``address``, ``state``), which is how the portal learns the
names. A node that comes back from a reboot or a replacement pushes its health to the portal when the cluster's
exporters are configured (:func:`configure_exporters`, the stand-in for the exporters the software stack installs).
Imported by ``sandbox.aws.moto_install.install`` (importing it registers the handlers).
"""
from __future__ import annotations

import json
import shlex
import threading

from moto.moto_api._internal import mock_random

from sandbox.aws.moto_headnode import Context, HeadNodeCluster, Result, headnode_command
from sandbox.aws.moto_hyperpod_nodes import post_report

# Seconds from the command to the node's pushes: its exporter pushes on an interval once the node is back, so the
# portal, which counts a report only after it saw the command end, gets one after that.
REPORT_DELAYS = (2.0, 6.0, 20.0)


def _instance_id() -> str:
    return "i-" + "".join(mock_random.choice("0123456789abcdef") for _ in range(17))


def _nodes(context: Context) -> dict[str, dict]:
    """Every node's Slurm state by Slurm node name, created IDLE from the cluster's configuration the first time."""
    state = context.cluster.state.setdefault("slurm_nodes", {})
    for node in context.cluster.nodes:
        state.setdefault(node.slurm_name, {"state": "IDLE", "reason": "", "instance_id": node.instance_id or
                                           _instance_id(), "reboots": 0, "replacements": 0,
                                           "hostname": node.hostname, "address": node.address})
    return state


def configure_exporters(cluster: HeadNodeCluster, url: str, token: str) -> None:
    """Where the cluster's node exporters push (the portal's ingestion URL and token); "" for nowhere."""
    cluster.state["exporters"] = {"url": url, "token": token}


def _report_back(cluster: HeadNodeCluster, hostnames: list[str]) -> None:
    exporters = cluster.state.get("exporters") or {}
    url, token = exporters.get("url", ""), exporters.get("token", "")
    if not url.startswith(("http://", "https://")) or not token:
        return
    for hostname in hostnames:  # the same exporter text and push as HyperPod's nodes
        for delay in REPORT_DELAYS:
            timer = threading.Timer(delay, post_report, args=(url, token, hostname))
            timer.daemon = True
            timer.start()


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
    if wanted not in ("DRAIN", "POWER_DOWN_FORCE", "RESUME", "IDLE"):
        return Result(1, "", f"scontrol: error: Invalid node state specified: {wanted}\n")
    for name in names:
        node = nodes[name]
        if wanted == "DRAIN":
            node.update(state="DRAIN", reason=options.get("reason", ""))
        elif wanted == "POWER_DOWN_FORCE":  # ParallelCluster terminates it and launches a new instance
            node.update(state="IDLE", reason="", instance_id=_instance_id(), replacements=node["replacements"] + 1)
        else:
            node.update(state="IDLE", reason="")
    if wanted == "POWER_DOWN_FORCE":
        _report_back(context.cluster, [nodes[n]["hostname"] for n in names])
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
    _report_back(context.cluster, [nodes[n]["hostname"] for n in names])
    return Result(0, "", "")


def _json(nodes: dict[str, dict], names: list[str]) -> str:
    """Slurm's data parser shape (``scontrol show nodes --json``), the members the portal reads."""
    return json.dumps({"nodes": [{"name": n, "hostname": nodes[n]["hostname"], "address": nodes[n]["address"],
                                  "state": [nodes[n]["state"]] + (["DRAIN"] if nodes[n]["state"] == "DRAIN" else []),
                                  "reason": nodes[n]["reason"], "instance_id": nodes[n]["instance_id"]}
                                 for n in names],
                       "meta": {"plugin": {"type": "openapi/v0.0.39", "name": "Slurm OpenAPI v0.0.39"}},
                       "errors": [], "warnings": []}, indent=2) + "\n"


@headnode_command(r"^scontrol\s+show\s+nodes?\b")
def show_node(context: Context) -> Result:
    if context.cluster is None:
        return Result(1, "", "scontrol: error: Unable to contact slurm controller\n")
    words = shlex.split(context.command)[3:]
    as_json = "--json" in words
    words = [w for w in words if w != "--json"]
    nodes = _nodes(context)
    names = words or sorted(nodes)
    refused = _unknown(names, nodes)
    if refused:
        return refused
    if as_json:
        return Result(0, _json(nodes, names), "")
    text = "".join(f"NodeName={n} NodeAddr={nodes[n]['address']} NodeHostName={nodes[n]['hostname']} "
                   f"State={nodes[n]['state']} Reason={nodes[n]['reason'] or '(null)'} "
                   f"InstanceId={nodes[n]['instance_id']}\n" for n in names)
    return Result(0, text, "")


@headnode_command(r"^sinfo\b")
def sinfo(context: Context) -> Result:
    """``sinfo --Node --noheader --format="%N %n %o"``: node name, hostname and address, one line per node and
    partition (every emulated node is in one partition)."""
    if context.cluster is None:
        return Result(1, "", "sinfo: error: Unable to contact slurm controller (connect failure)\n")
    words = shlex.split(context.command)[1:]
    fields = next((w.split("=", 1)[1] for w in words if w.startswith("--format=")), "%N %n %o")
    nodes = _nodes(context)
    values = {"%N": lambda n: n, "%n": lambda n: nodes[n]["hostname"], "%o": lambda n: nodes[n]["address"],
              "%t": lambda n: nodes[n]["state"].lower()}
    lines = [" ".join(values.get(f, lambda _n: "")(name) for f in fields.split()) for name in nodes]
    header = [] if "--noheader" in words or "-h" in words else ["NODELIST HOSTNAMES NODE_ADDR"]
    return Result(0, "".join(f"{line}\n" for line in header + lines), "")
