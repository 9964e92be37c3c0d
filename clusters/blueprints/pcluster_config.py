"""A cluster's ParallelCluster 3 configuration: exactly what its stack hands to ParallelCluster.

The blueprint's ``Custom::PclusterCluster`` property ``ClusterConfiguration`` is the one source;
here it is evaluated with the cluster's parameters and the earlier stacks' outputs
(:mod:`clusters.blueprints.cfn_resolve`), so the printed YAML carries the same ``Iam``, storage, custom
actions, capacity wiring and placement as the deployed cluster. Values of stacks that do not exist
yet (a preview) are shown as ``<network:PrivateSubnetId>`` placeholders.

CloudFormation passes every custom-resource property as text; the printed file gives numbers and
booleans their YAML types, which is how ``pcluster create-cluster`` reads a file.
"""
from __future__ import annotations

import re
from typing import Any

import yaml

from clusters.blueprints import catalog, cfn_resolve
from clusters.choices import StackRole

_WIRED_FROM = {"PublicSubnetId": "network", "PrivateSubnetId": "network", "SecurityGroupId": "network",
               "PlacementGroupName": "network", "BucketName": "storage", "LustreFileSystemId": "storage",
               "OpenZfsRootVolumeId": "storage"}
_NUMBER = re.compile(r"-?\d+")


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if value in ("true", "false"):
        return value == "true"
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        return int(value)
    return value


def build(region: str, params: dict[str, str], outputs: dict[str, str], *, wired_unknown: str = "placeholder") -> dict:
    """The configuration mapping. Wired values missing from ``outputs`` become placeholders."""
    template = catalog.template("parallelcluster")
    names = set(template.get("Parameters") or {})
    values = {k: str(v) for k, v in params.items() if k in names}
    for name in names:
        if outputs.get(name):
            values[name] = str(outputs[name])
        elif name in _WIRED_FROM and not values.get(name) and name != "OpenZfsRootVolumeId":
            values[name] = f"<{_WIRED_FROM[name]}:{name}>"
    values.setdefault("ClusterName", params.get("ClusterName") or "<cluster name>")
    fragment = template["Resources"]["PclusterCluster"]["Properties"]["ClusterConfiguration"]
    resolved = cfn_resolve.resolve(template, fragment, values, pseudo={"Region": region})
    return _typed(resolved)


def generate(region: str, params: dict[str, str], outputs: dict[str, str]) -> str:
    return yaml.safe_dump(build(region, params, outputs), sort_keys=False, default_flow_style=False)


def for_cluster(cluster) -> str | None:
    """The cluster's configuration, or ``None`` when its blueprint is not ParallelCluster."""
    if cluster.blueprint is None or cluster.blueprint.kind != "parallelcluster":
        return None
    params = {k: str(v) for k, v in (cluster.parameters.get(StackRole.CLUSTER) or {}).items()}
    return generate(cluster.region, params, cluster.outputs or {})
