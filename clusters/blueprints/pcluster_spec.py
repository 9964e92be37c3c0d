"""AWS ParallelCluster 3 cluster configurations for the program's reserved capacity.

The portal knows the facts that decide a configuration (region, subnet, the reservation or
capacity block behind a quota, the Lustre file system of the storage stack) and a lead solutions
architect should not hand-write YAML to combine them. ``generate`` turns a small typed spec into the
configuration file that ``pcluster create-cluster`` takes, and always switches on what accelerated
training needs (EFA; GPU health checks on GPU nodes; a placement group unless a reservation or
capacity block already places the nodes; NVMe at /scratch). The blueprint's own
``ClusterConfiguration`` (printed by :mod:`clusters.blueprints.pcluster_config`) follows the same rules. ``validate`` catches
the structural mistakes ParallelCluster would reject, before a cluster launch is attempted; it also
accepts the configuration as a mapping, the shape the CloudFormation custom resource receives.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

OPERATING_SYSTEMS = ("alinux2023", "ubuntu2204")
CAPACITY_TYPES = ("ONDEMAND", "SPOT", "CAPACITY_BLOCK")
STORAGE_TYPES = ("Ebs", "Efs", "FsxLustre", "FsxOpenZfs", "FsxOntap", "FileCache")

# Families that train over EFA: ParallelCluster must enable EFA on them.
ACCELERATED_FAMILIES = ("p4d", "p4de", "p5", "p5e", "p5en", "trn1", "trn1n")
# Of those, the ones with NVIDIA GPUs: only they get ParallelCluster's GPU health checks (DCGM).
GPU_FAMILIES = ("p4d", "p4de", "p5", "p5e", "p5en")

_QUEUE_NAME = re.compile(r"[a-z][a-z0-9-]{0,24}")
_RESOURCE_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9-]{0,24}")
_RESERVATION_ID = re.compile(r"cr-[0-9a-f]{8}([0-9a-f]{9})?")


def is_accelerated(instance_type: str) -> bool:
    """True for the instance types that need EFA."""
    return instance_type.split(".", 1)[0] in ACCELERATED_FAMILIES


def has_gpus(instance_type: str) -> bool:
    """True for NVIDIA GPU instance types (Trainium has none: no GPU health checks there)."""
    return instance_type.split(".", 1)[0] in GPU_FAMILIES


@dataclass(frozen=True)
class CustomActions:
    """Scripts (s3:// or https:// URLs) run when a node starts and when it is configured."""

    on_node_start: str | None = None
    on_node_configured: str | None = None
    args: tuple[str, ...] = ()

    def to_config(self) -> dict[str, Any]:
        actions: dict[str, Any] = {}
        for key, script in (("OnNodeStart", self.on_node_start), ("OnNodeConfigured", self.on_node_configured)):
            if script:
                actions[key] = {"Script": script, **({"Args": list(self.args)} if self.args else {})}
        return actions


@dataclass(frozen=True)
class Queue:
    """One Slurm queue with one compute resource.

    ``capacity_reservation_id`` targets an On-Demand Capacity Reservation; with
    ``capacity_block=True`` the same id names an EC2 Capacity Block for ML instead.
    """

    name: str
    instance_type: str
    min_count: int = 0
    max_count: int = 1
    efa: bool = False
    placement_group: str | None = None
    capacity_reservation_id: str | None = None
    capacity_block: bool = False
    subnet_id: str | None = None
    custom_actions: CustomActions | None = None
    disable_smt: bool = False  # the reference leaves hyper-threading on

    def to_config(self, default_subnet: str, security_group: str | None) -> dict[str, Any]:
        accelerated, gpus = is_accelerated(self.instance_type), has_gpus(self.instance_type)
        resource: dict[str, Any] = {
            "Name": f"{self.instance_type.split('.', 1)[0]}-nodes",
            "InstanceType": self.instance_type,
            "MinCount": self.max_count if self.capacity_block else self.min_count,
            "MaxCount": self.max_count,
        }
        if self.disable_smt:
            resource["DisableSimultaneousMultithreading"] = True
        if accelerated or self.efa:
            resource["Efa"] = {"Enabled": True}  # GPUDirect RDMA is on by default since 3.0.3 (GdrSupport is a no-op)
        if gpus:
            resource["HealthChecks"] = {"Gpu": {"Enabled": True}}
        if self.capacity_reservation_id:
            resource["CapacityReservationTarget"] = {"CapacityReservationId": self.capacity_reservation_id}

        networking: dict[str, Any] = {"SubnetIds": [self.subnet_id or default_subnet]}
        if security_group:
            networking["AdditionalSecurityGroups"] = [security_group]
        # A targeted reservation or block already places its instances; forcing a placement group onto
        # it can fail with insufficient capacity while the reservation has room. ParallelCluster wants
        # an EFA queue's choice explicit, so it is switched off by name.
        if self.capacity_reservation_id:
            networking["PlacementGroup"] = {"Enabled": False}
        else:
            if self.placement_group:
                networking["PlacementGroup"] = {"Enabled": True, "Name": self.placement_group}
            elif accelerated or self.efa:
                networking["PlacementGroup"] = {"Enabled": True}

        queue: dict[str, Any] = {
            "Name": self.name,
            "CapacityType": "CAPACITY_BLOCK" if self.capacity_block else "ONDEMAND",
        }
        if gpus:
            queue["HealthChecks"] = {"Gpu": {"Enabled": True}}
        queue["Networking"] = networking
        if accelerated:
            queue["ComputeSettings"] = {"LocalStorage": {"RootVolume": {"Size": 512},
                                                         "EphemeralVolume": {"MountDir": "/scratch"}}}
        if self.custom_actions and self.custom_actions.to_config():
            queue["CustomActions"] = self.custom_actions.to_config()
        queue["ComputeResources"] = [resource]
        return queue


@dataclass(frozen=True)
class ClusterSpec:
    """What the portal decides about a cluster; everything else keeps ParallelCluster's defaults."""

    region: str
    subnet_id: str
    queues: tuple[Queue, ...]
    os: str = "alinux2023"
    head_node_instance_type: str = "m5.8xlarge"
    security_group_id: str | None = None
    key_name: str | None = None
    lustre_file_system_id: str | None = None
    openzfs_volume_id: str | None = None
    detailed_monitoring: bool = True
    dashboards: bool = True
    custom_actions: CustomActions | None = None
    custom_ami: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    accounting_database: bool = False  # SlurmSettings.Database is set (then ParallelCluster owns accounting)


# As the reference (ADT cluster-vanilla): idle dynamic nodes stop after an hour, and job accounting is
# gathered by jobacct_gather/linux with completions in a text file. With an accounting database
# ParallelCluster configures slurmdbd and the gather plugin itself and refuses those settings.
SCALEDOWN_IDLE_MINUTES = 60
JOB_ACCOUNTING = (
    {"JobAcctGatherType": "jobacct_gather/linux"},
    {"JobCompType": "jobcomp/filetxt"},
    {"JobCompLoc": "/home/slurm/slurm-job-completions.txt"},
)


def slurm_settings(accounting_database: bool = False) -> dict[str, Any]:
    settings: dict[str, Any] = {"ScaledownIdletime": SCALEDOWN_IDLE_MINUTES, "QueueUpdateStrategy": "DRAIN"}
    if not accounting_database:
        settings["CustomSlurmSettings"] = [dict(item) for item in JOB_ACCOUNTING]
    return settings


def build(spec: ClusterSpec) -> dict[str, Any]:
    """The configuration as a mapping (what the CloudFormation custom resource takes)."""
    if spec.os not in OPERATING_SYSTEMS:
        raise ValueError(f"unsupported OS {spec.os!r}; choose one of {', '.join(OPERATING_SYSTEMS)}")
    if not spec.queues:
        raise ValueError("a cluster needs at least one queue")
    head_networking: dict[str, Any] = {"SubnetId": spec.subnet_id}
    if spec.security_group_id:
        head_networking["AdditionalSecurityGroups"] = [spec.security_group_id]
    head: dict[str, Any] = {"InstanceType": spec.head_node_instance_type, "Networking": head_networking}
    if spec.key_name:
        head["Ssh"] = {"KeyName": spec.key_name}
    # /home lives on the head node's root volume unless a shared /home is mounted: 500 GB then.
    head["LocalStorage"] = {"RootVolume": {"Size": 200 if spec.openzfs_volume_id else 500}}
    if spec.custom_actions and spec.custom_actions.to_config():
        head["CustomActions"] = spec.custom_actions.to_config()

    image: dict[str, Any] = {"Os": spec.os}
    if spec.custom_ami:
        image["CustomAmi"] = spec.custom_ami
    config: dict[str, Any] = {
        "Region": spec.region,
        "Imds": {"ImdsSupport": "v2.0"},
        "Image": image,
        "HeadNode": head,
        "Scheduling": {
            "Scheduler": "slurm",
            "SlurmSettings": slurm_settings(spec.accounting_database),
            "SlurmQueues": [q.to_config(spec.subnet_id, spec.security_group_id) for q in spec.queues],
        },
    }
    storage = []
    if spec.lustre_file_system_id:
        storage.append({
            "Name": "fsx", "MountDir": "/fsx", "StorageType": "FsxLustre",
            "FsxLustreSettings": {"FileSystemId": spec.lustre_file_system_id},
        })
    if spec.openzfs_volume_id:
        storage.append({
            "Name": "home", "MountDir": "/home", "StorageType": "FsxOpenZfs",
            "FsxOpenZfsSettings": {"VolumeId": spec.openzfs_volume_id},
        })
    if storage:
        config["SharedStorage"] = storage
    config["Monitoring"] = {
        "DetailedMonitoring": spec.detailed_monitoring,
        "Logs": {"CloudWatch": {"Enabled": True, "RetentionInDays": 30}},
        "Dashboards": {"CloudWatch": {"Enabled": spec.dashboards}},
    }
    if spec.tags:
        config["Tags"] = [{"Key": k, "Value": v} for k, v in spec.tags.items()]
    return config


def generate(spec: ClusterSpec) -> str:
    """The configuration file text for ``pcluster create-cluster --cluster-configuration``."""
    return yaml.safe_dump(build(spec), sort_keys=False, default_flow_style=False)


def _int(value: Any) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _enabled(section: Any, *path: str) -> bool:
    for key in path:
        if not isinstance(section, Mapping):
            return False
        section = section.get(key)
    return str(section).lower() == "true"


def _check_resource(where: str, queue: Mapping[str, Any], resource: Any) -> list[str]:
    if not isinstance(resource, Mapping):
        return [f"{where}: must be a mapping"]
    errors = []
    if not _RESOURCE_NAME.fullmatch(str(resource.get("Name", ""))):
        errors.append(f"{where}.Name: letters, digits and hyphens, starting with a letter")
    instance_type = str(resource.get("InstanceType", ""))
    if not instance_type and not resource.get("Instances"):
        errors.append(f"{where}: InstanceType or Instances is required")
    low, high = _int(resource.get("MinCount", 0)), _int(resource.get("MaxCount", 10))
    if low is None or high is None or low < 0 or high < 1:
        errors.append(f"{where}: MinCount must be >= 0 and MaxCount >= 1")
    elif low > high:
        errors.append(f"{where}: MinCount {low} is above MaxCount {high}")
    reservation = (resource.get("CapacityReservationTarget") or queue.get("CapacityReservationTarget") or {})
    reservation_id = reservation.get("CapacityReservationId") if isinstance(reservation, Mapping) else None
    if reservation_id and not _RESERVATION_ID.fullmatch(str(reservation_id)):
        errors.append(f"{where}: {reservation_id!r} is not a capacity reservation id")
    if queue.get("CapacityType") == "CAPACITY_BLOCK":
        if not reservation_id:
            errors.append(f"{where}: CAPACITY_BLOCK needs CapacityReservationTarget.CapacityReservationId")
        if low is not None and high is not None and (low != high or high < 1):
            errors.append(f"{where}: with CAPACITY_BLOCK MinCount must equal MaxCount and be above 0")
    if is_accelerated(instance_type) and not _enabled(resource, "Efa", "Enabled"):
        errors.append(f"{where}: {instance_type} needs Efa.Enabled: true")
    gpu_checks = _enabled(resource, "HealthChecks", "Gpu", "Enabled") or _enabled(queue, "HealthChecks", "Gpu", "Enabled")
    if has_gpus(instance_type) and not gpu_checks:
        errors.append(f"{where}: {instance_type} needs HealthChecks.Gpu.Enabled: true")
    if instance_type and is_accelerated(instance_type) and not has_gpus(instance_type) and gpu_checks:
        errors.append(f"{where}: {instance_type} has no GPUs; HealthChecks.Gpu must be off")
    if reservation_id and _enabled(queue.get("Networking"), "PlacementGroup", "Enabled"):
        errors.append(f"{where}: no placement group on a targeted reservation or capacity block "
                      "(it can fail with insufficient capacity while the reservation has room)")
    return errors


def _check_queues(queues: Any) -> list[str]:
    if not isinstance(queues, list) or not queues:
        return ["Scheduling.SlurmQueues: at least one queue is required"]
    errors: list[str] = []
    names = [q.get("Name") for q in queues if isinstance(q, Mapping)]
    if len(names) != len(set(names)):
        errors.append("Scheduling.SlurmQueues: queue names must be unique")
    for i, queue in enumerate(queues):
        where = f"Scheduling.SlurmQueues[{i}]"
        if not isinstance(queue, Mapping):
            errors.append(f"{where}: must be a mapping")
            continue
        if not _QUEUE_NAME.fullmatch(str(queue.get("Name", ""))):
            errors.append(f"{where}.Name: lowercase letters, digits and hyphens, at most 25 characters")
        if queue.get("CapacityType", "ONDEMAND") not in CAPACITY_TYPES:
            errors.append(f"{where}.CapacityType: one of {', '.join(CAPACITY_TYPES)}")
        if not (queue.get("Networking") or {}).get("SubnetIds"):
            errors.append(f"{where}.Networking.SubnetIds: at least one subnet is required")
        resources = queue.get("ComputeResources")
        if not isinstance(resources, list) or not resources:
            errors.append(f"{where}.ComputeResources: at least one compute resource is required")
            continue
        for j, resource in enumerate(resources):
            errors.extend(_check_resource(f"{where}.ComputeResources[{j}]", queue, resource))
    return errors


def _check_storage(storage: Any) -> list[str]:
    if storage is None:
        return []
    if not isinstance(storage, list):
        return ["SharedStorage: must be a list"]
    errors = []
    mounts = [s.get("MountDir") for s in storage if isinstance(s, Mapping)]
    if len(mounts) != len(set(mounts)):
        errors.append("SharedStorage: mount directories must be unique")
    for i, item in enumerate(storage):
        where = f"SharedStorage[{i}]"
        if not isinstance(item, Mapping) or not item.get("Name") or not str(item.get("MountDir", "")).startswith("/"):
            errors.append(f"{where}: Name and an absolute MountDir are required")
            continue
        kind = item.get("StorageType")
        if kind not in STORAGE_TYPES:
            errors.append(f"{where}.StorageType: one of {', '.join(STORAGE_TYPES)}")
        elif kind == "FsxLustre":
            settings = item.get("FsxLustreSettings") or {}
            if not (settings.get("FileSystemId") or settings.get("StorageCapacity")):
                errors.append(f"{where}: FsxLustreSettings needs FileSystemId (existing) or StorageCapacity (new)")
        elif kind == "FsxOpenZfs" and not (item.get("FsxOpenZfsSettings") or {}).get("VolumeId"):
            errors.append(f"{where}: FsxOpenZfsSettings.VolumeId is required")
    return errors


def validate(config: str | Mapping[str, Any]) -> list[str]:
    """Structural problems ParallelCluster would reject; an empty list when none were found.

    Checks shape and the program's rules, not what only AWS knows (whether a subnet or a
    reservation exists, whether quota is left).
    """
    if isinstance(config, str):
        try:
            config = yaml.safe_load(config)
        except yaml.YAMLError as exc:
            return [f"not valid YAML: {exc}"]
    if not isinstance(config, Mapping):
        return ["the configuration must be a mapping"]
    errors = []
    if not config.get("Region"):
        errors.append("Region: required")
    os_name = (config.get("Image") or {}).get("Os")
    if os_name not in OPERATING_SYSTEMS:
        errors.append(f"Image.Os: one of {', '.join(OPERATING_SYSTEMS)}")
    head = config.get("HeadNode") or {}
    if not head.get("InstanceType"):
        errors.append("HeadNode.InstanceType: required")
    if not (head.get("Networking") or {}).get("SubnetId"):
        errors.append("HeadNode.Networking.SubnetId: required")
    scheduling = config.get("Scheduling") or {}
    if scheduling.get("Scheduler") != "slurm":
        errors.append("Scheduling.Scheduler: must be slurm")
    errors.extend(_check_queues(scheduling.get("SlurmQueues")))
    errors.extend(_check_storage(config.get("SharedStorage")))
    return errors
