"""Slurm's names for a cluster's nodes: learned from the cluster, kept per cluster, used whenever the portal speaks
to Slurm.

People and health reports name a node by its hostname; ``scontrol``, ``sbatch --nodelist`` and ``srun -w`` take
Slurm's node name, which on ParallelCluster is ``<queue>-st-<compute resource>-<n>`` (the hostname is the node's
``NodeHostName``), so a hostname sent to Slurm fails with ``Invalid node name specified``. HyperPod's Slurm names its
nodes by their hostnames. The listing comes from the cluster itself: :data:`COMMAND` run on the head node (SSM), or
``scontrol show nodes --json`` posted by the cluster's agent; :func:`parse` reads either, :func:`store` keeps it.
"""
from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from clusters.choices import Orchestrator
from clusters.health.models import SlurmNode
from portal.core import json_input

# Node name, hostname and address, one line per node and partition: compact enough for SSM's 24,000 characters of
# output on a cluster of several hundred nodes (``scontrol show nodes --json`` writes about 3 kB per node).
COMMAND = 'sinfo --Node --noheader --format="%N %n %o"'


class Unknown(ValueError):
    """Hostnames the cluster's Slurm does not list."""

    def __init__(self, cluster, hostnames: list[str]):
        super().__init__(f"Slurm on {cluster.name} lists no node with the hostname {', '.join(hostnames)}.")
        self.hostnames = hostnames


def parse(text: str) -> dict[str, tuple[str, str]]:
    """Hostname → (node name, address) from ``scontrol show nodes --json`` or :data:`COMMAND`'s lines. Raises
    ``ValueError`` on text that is neither."""
    found: dict[str, tuple[str, str]] = {}
    stripped = text.strip()
    if stripped.startswith("{"):
        nodes = json_input.loads(stripped).get("nodes")
        if not isinstance(nodes, list):
            raise ValueError("no nodes list in scontrol's JSON")
        for node in nodes:
            name = str(node.get("name") or "")
            if name:
                found[str(node.get("hostname") or name)] = (name, str(node.get("address") or ""))
        return found
    for line in stripped.splitlines():
        words = line.split()
        if len(words) < 2 or words[0] == "NODELIST":
            if words and words[0] != "NODELIST":
                raise ValueError(f"not a node line: {line[:80]!r}")
            continue
        found[words[1]] = (words[0], words[2] if len(words) > 2 else "")
    return found


def store(cluster, listed: dict[str, tuple[str, str]]) -> None:
    """Make the cluster's known names exactly what Slurm listed now (nodes gone are forgotten, renamed ones
    follow), in one transaction: a reader sees the old listing or the new one."""
    now = timezone.now()
    with transaction.atomic():
        SlurmNode.objects.filter(cluster=cluster).delete()
        SlurmNode.objects.bulk_create([SlurmNode(cluster=cluster, hostname=h, node_name=name, address=address,
                                                 seen_at=now) for h, (name, address) in listed.items()])


def names(cluster) -> dict[str, str]:
    """Hostname → Slurm node name, as last learned (HyperPod: every hostname is its own name)."""
    return dict(SlurmNode.objects.filter(cluster=cluster).values_list("hostname", "node_name"))


def to_slurm(cluster, hostnames: Iterable[str], known: dict[str, str] | None = None) -> list[str]:
    """The Slurm names of ``hostnames``, in their order; ``Unknown`` names those Slurm did not list."""
    hostnames = list(hostnames)
    known = names(cluster) if known is None else known
    if not known and cluster.orchestrator == Orchestrator.HYPERPOD:
        return hostnames
    missing = [h for h in hostnames if h not in known and h not in known.values()]
    if missing:
        raise Unknown(cluster, missing)
    return [known.get(h, h) for h in hostnames]


def to_hostnames(cluster, node_names: Iterable[str]) -> list[str]:
    """The hostnames of Slurm ``node_names`` (a name not known stays as it is)."""
    back = {name: host for host, name in names(cluster).items()}
    return [back.get(n, n) for n in node_names]
