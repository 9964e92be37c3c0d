"""A cluster's ParallelCluster 3 configuration, from its parameters and its stacks' outputs.

The same text the blueprint's ``Custom::PclusterCluster`` receives, for a lead SA to read, download
or feed to ``pcluster`` by hand. Before the network and storage stacks exist their ids are shown as
``<network:PrivateSubnetId>`` placeholders.
"""
from __future__ import annotations

from clusters import pcluster
from clusters.choices import StackRole

_WIRED_FROM = {"PublicSubnetId": "network", "PrivateSubnetId": "network", "SecurityGroupId": "network",
               "PlacementGroupName": "network", "LustreFileSystemId": "storage", "OpenZfsRootVolumeId": "storage"}


def generate(region: str, params: dict[str, str], outputs: dict[str, str], tags: dict[str, str] | None = None) -> str:
    def value(name: str, default: str = "") -> str:
        found = outputs.get(name) or params.get(name)
        if found:
            return str(found)
        if name in _WIRED_FROM:
            return f"<{_WIRED_FROM[name]}:{name}>"
        return default

    reservation = params.get("CapacityReservationId") or None
    queue = pcluster.Queue(
        name=params.get("QueueName") or "compute",
        instance_type=params.get("ComputeInstanceType") or "p5.48xlarge",
        min_count=int(float(params.get("ComputeMinCount") or 0)),
        max_count=int(float(params.get("ComputeMaxCount") or 2)),
        efa=True,
        placement_group=value("PlacementGroupName") or None,
        capacity_reservation_id=reservation,
        capacity_block=params.get("CapacityType") == "CAPACITY_BLOCK",
        subnet_id=value("PrivateSubnetId"),
    )
    spec = pcluster.ClusterSpec(
        region=region,
        subnet_id=value("PublicSubnetId"),
        queues=(queue,),
        os=params.get("Os") or "alinux2023",
        head_node_instance_type=params.get("HeadNodeInstanceType") or "m5.8xlarge",
        security_group_id=value("SecurityGroupId") or None,
        key_name=params.get("KeyName") or None,
        lustre_file_system_id=value("LustreFileSystemId") or None,
        openzfs_volume_id=(outputs.get("OpenZfsRootVolumeId") or params.get("OpenZfsRootVolumeId")) or None,
        tags=tags or {},
    )
    return pcluster.generate(spec)


def for_cluster(cluster) -> str | None:
    """The cluster's configuration, or ``None`` when its blueprint is not ParallelCluster."""
    if cluster.blueprint is None or cluster.blueprint.kind != "parallelcluster":
        return None
    params = {k: str(v) for k, v in (cluster.parameters.get(StackRole.CLUSTER) or {}).items()}
    return generate(cluster.region, params, cluster.outputs or {},
                    tags={"geniac:launch-id": str(cluster.launch_id), "geniac:organization": cluster.organization.slug})
