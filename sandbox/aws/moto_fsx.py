"""FSx as ParallelCluster reads it, where moto falls short.

ParallelCluster checks a shared ``FsxOpenZfs`` storage by describing its volume, and every FSx
file system's network interfaces (their security group rules must open Lustre's or NFS's ports).
moto has no ``DescribeVolumes`` and describes file systems without ``VpcId`` and
``NetworkInterfaceIds``; the storage blueprint's file systems get both (see
:mod:`sandbox.aws.moto_resources`) and the root volume of an OpenZFS file system (mounted at /home)
is answered here, in the shape AWS returns.

A file system is described with its OpenZFS configuration as ``DescribeFileSystems`` shapes it
(``OpenZFSFileSystemConfiguration``): the ``RootVolumeConfiguration`` a create request carries is not part of
it (moto echoed the request back); it configures the root volume, which ``DescribeVolumes`` answers with it.
"""
from __future__ import annotations

import json
from typing import Any

from moto.core.exceptions import JsonRESTError
from moto.core.utils import get_service_model
from moto.fsx.models import FileSystem
from moto.fsx.responses import FSxResponse


class _VolumeNotFound(JsonRESTError):
    def __init__(self, volume_id: str) -> None:
        super().__init__("VolumeNotFound", f"Volume {volume_id} does not exist")


def _members(shape_name: str) -> set[str]:
    return set(get_service_model("fsx").shape_for(shape_name).members)


def _root_configuration(fs: Any) -> dict[str, Any]:
    """The root volume's OpenZFS configuration: FSx's defaults, then what the create request asked for."""
    asked = (fs.open_zfs_configuration or {}).get("RootVolumeConfiguration") or {}
    return {"VolumePath": "/fsx", "RecordSizeKiB": 128, "DataCompressionType": "NONE", "ReadOnly": False,
            "CopyTagsToSnapshots": False, **asked}


def _file_system_configuration(configuration: dict[str, Any]) -> dict[str, Any]:
    """The OpenZFS configuration as DescribeFileSystems gives it: only the members of its output shape."""
    kept = _members("OpenZFSFileSystemConfiguration")
    return {key: value for key, value in configuration.items() if key in kept}


def _root_volumes(backend: Any) -> dict[str, dict[str, Any]]:
    volumes = {}
    for fs in backend.file_systems.values():
        root = (fs.open_zfs_configuration or {}).get("RootVolumeId")
        if root:
            volumes[root] = {
                "FileSystemId": fs.file_system_id, "VolumeId": root, "Name": "fsx", "VolumeType": "OPENZFS",
                "Lifecycle": "AVAILABLE",
                "ResourceARN": f"arn:aws:fsx:{backend.region_name}:{backend.account_id}:volume/{fs.file_system_id}/{root}",
                "OpenZFSConfiguration": _root_configuration(fs),
            }
    return volumes


def describe_volumes(self: FSxResponse) -> str:
    params = json.loads(self.body or "{}")
    known = _root_volumes(self.fsx_backend)
    ids = params.get("VolumeIds") or list(known)
    missing = [i for i in ids if i not in known]
    if missing:
        raise _VolumeNotFound(missing[0])
    return json.dumps({"Volumes": [known[i] for i in ids]})


def apply() -> None:
    original_to_dict = FileSystem.to_dict

    def to_dict(self: Any) -> dict[str, Any]:
        described = original_to_dict(self)
        # AWS describes a file system's network interfaces, not its security groups (DescribeFileSystems' shape).
        described.pop("SecurityGroupIds", None)
        if described.get("OpenZFSConfiguration"):
            described["OpenZFSConfiguration"] = _file_system_configuration(described["OpenZFSConfiguration"])
        if getattr(self, "network_interface_ids", None):
            described.update(VpcId=self.vpc_id, NetworkInterfaceIds=list(self.network_interface_ids))
        return described

    FileSystem.to_dict = to_dict
    FSxResponse.describe_volumes = describe_volumes
