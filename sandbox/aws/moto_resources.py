"""Teach moto's CloudFormation the resource types the blueprints use and moto lacks.

The demo and the tests launch the real blueprints against moto's server. Out of the box moto skips
FSx, HyperPod, Prometheus, Grafana, placement groups and security group egress rules (and a GetAtt
on a skipped resource breaks the stack), cannot resolve a nested stack's outputs, and hands every
``Custom::`` type to a Lambda it would have to run. This module fills those gaps through moto's own
extension point (subclasses of ``CloudFormationModel``). Where moto has a backend for the service
the resource is created there, so ``describe_*`` calls see it; the rest keep their state on the
resource object, which lives as long as its stack. Invalid properties that AWS would refuse make
the ``create_stack`` call fail with a ValidationError (AWS would roll the stack back instead).
``Custom::PclusterCluster`` is in :mod:`sandbox.aws.moto_pcluster`, corrections to moto's own
behaviour in :mod:`sandbox.aws.moto_fixes`.

Used only by the embedded endpoint; call :func:`sandbox.aws.moto_install.install` in the process that runs moto's server.
"""

from __future__ import annotations

import copy
import re
import string
from typing import Any

from moto.amp.models import amp_backends
from moto.cloudformation import models as cfn_models
from moto.cloudformation.exceptions import (
    ValidationError,
)
from moto.core.common_models import CloudFormationModel
from moto.ec2.models import ec2_backends
from moto.fsx.models import fsx_backends
from moto.moto_api._internal import mock_random
from moto.s3.models import s3_backends
from moto.sagemaker.models import sagemaker_backends

from sandbox.aws import moto_ec2, moto_grafana
from sandbox.aws.moto_common import _Attributes, _hex, _tags
from sandbox.aws.moto_observability import check_alert_manager_definition


class SecurityGroupEgress(_Attributes, CloudFormationModel):
    """``AWS::EC2::SecurityGroupEgress``: the rule is added to (and removed from) moto's EC2 group."""

    CFN_TYPE = "AWS::EC2::SecurityGroupEgress"
    ATTRIBUTES = ("Id",)

    def __init__(self, group_id: str, rule: dict[str, Any]) -> None:
        self.group_id = group_id
        self.rule = rule
        self.ref = f"sgr-{_hex(17)}"
        self.attributes = {"Id": self.ref}

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> SecurityGroupEgress:
        props = cloudformation_json["Properties"]
        if not props.get("GroupId") or not props.get("IpProtocol"):
            raise ValidationError(message="SecurityGroupEgress needs GroupId and IpProtocol")
        rule = {
            "ip_protocol": str(props["IpProtocol"]),
            "from_port": props.get("FromPort"),
            "to_port": props.get("ToPort"),
            "ip_ranges": [{"CidrIp": props["CidrIp"]}] if props.get("CidrIp") else [],
            "source_groups": (
                [{"GroupId": props["DestinationSecurityGroupId"]}] if props.get("DestinationSecurityGroupId") else []
            ),
        }
        ec2_backends[account_id][region_name].authorize_security_group_egress(props["GroupId"], **rule)
        return cls(props["GroupId"], rule)

    def delete(self, account_id: str, region_name: str) -> None:
        ec2 = ec2_backends[account_id][region_name]
        if ec2.get_security_group_from_id(self.group_id) is not None:  # the group may have gone first
            ec2.revoke_security_group_egress(self.group_id, **self.rule)


class PlacementGroup(_Attributes, CloudFormationModel):
    """``AWS::EC2::PlacementGroup``: moto's EC2 has no placement groups, so only the name exists."""

    CFN_TYPE = "AWS::EC2::PlacementGroup"
    CFN_NAME_TYPE = "GroupName"
    ATTRIBUTES = ("GroupName",)
    STRATEGIES = ("cluster", "partition", "spread")

    def __init__(self, name: str, strategy: str) -> None:
        self.strategy = strategy
        self.ref = name
        self.attributes = {"GroupName": name}

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> PlacementGroup:
        strategy = cloudformation_json["Properties"].get("Strategy", "cluster")
        if strategy not in cls.STRATEGIES:
            raise ValidationError(message=f"Placement group strategy {strategy!r} is not one of {cls.STRATEGIES}")
        moto_ec2.register_placement_group(account_id, region_name, resource_name, strategy)
        return cls(resource_name, strategy)

    def delete(self, account_id: str, region_name: str) -> None:
        moto_ec2.forget_placement_group(account_id, region_name, self.ref)



class FsxFileSystem(_Attributes, CloudFormationModel):
    """``AWS::FSx::FileSystem`` created in moto's FSx backend (Lustre mount name and ZFS root volume added)."""

    CFN_TYPE = "AWS::FSx::FileSystem"
    ATTRIBUTES = ("DNSName", "LustreMountName", "ResourceARN", "RootVolumeId")

    def __init__(self, file_system: Any) -> None:
        self.file_system = file_system
        self.ref = file_system.file_system_id
        lustre = file_system.lustre_configuration or {}
        zfs = file_system.open_zfs_configuration or {}
        self.attributes = {
            "DNSName": file_system.dns_name,
            "LustreMountName": lustre.get("MountName"),
            "ResourceARN": file_system.resource_arn,
            "RootVolumeId": zfs.get("RootVolumeId"),
        }

    @staticmethod
    def _check_lustre(capacity: int, lustre: dict[str, Any], storage_type: str) -> None:
        if lustre.get("DeploymentType") != "PERSISTENT_2" or storage_type != "SSD":
            return
        if capacity != 1200 and capacity % 2400:
            raise ValidationError(message="PERSISTENT_2 SSD capacity must be 1200 GiB or a multiple of 2400 GiB")
        if int(lustre.get("PerUnitStorageThroughput", 0)) not in (125, 250, 500, 1000):
            raise ValidationError(message="PERSISTENT_2 PerUnitStorageThroughput must be 125, 250, 500 or 1000")

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> FsxFileSystem:
        props = copy.deepcopy(cloudformation_json["Properties"])
        capacity = int(props.get("StorageCapacity", 0))
        storage_type = props.get("StorageType", "SSD")
        lustre = props.get("LustreConfiguration")
        zfs = props.get("OpenZFSConfiguration")
        if props.get("FileSystemType") == "LUSTRE":
            lustre = {**(lustre or {}), "MountName": "".join(mock_random.choice(string.ascii_lowercase) for _ in range(8))}
            cls._check_lustre(capacity, lustre, storage_type)
        if props.get("FileSystemType") == "OPENZFS":
            zfs = {**(zfs or {}), "RootVolumeId": f"fsvol-{_hex(17)}"}
        try:
            file_system = fsx_backends[account_id][region_name].create_file_system(
                client_request_token=str(mock_random.uuid4()),
                file_system_type=props.get("FileSystemType"),
                storage_capacity=capacity,
                storage_type=storage_type,
                subnet_ids=props.get("SubnetIds", []),
                security_group_ids=props.get("SecurityGroupIds", []),
                tags=_tags(props),
                kms_key_id=props.get("KmsKeyId"),
                windows_configuration=props.get("WindowsConfiguration"),
                lustre_configuration=lustre,
                ontap_configuration=props.get("OntapConfiguration"),
                file_system_type_version=props.get("FileSystemTypeVersion"),
                open_zfs_configuration=zfs,
            )
        except ValueError as exc:
            raise ValidationError(message=str(exc)) from exc
        _give_aws_shaped_id(fsx_backends[account_id][region_name], file_system, region_name, account_id)
        _attach_network_interface(account_id, region_name, file_system)
        return cls(file_system)

    def delete(self, account_id: str, region_name: str) -> None:
        backend = fsx_backends[account_id][region_name]
        if self.file_system.file_system_id in backend.file_systems:
            backend.delete_file_system(self.file_system.file_system_id, str(mock_random.uuid4()), None, None, None)
        for eni_id in getattr(self.file_system, "eni_ids_to_delete", []):
            ec2_backends[account_id][region_name].delete_network_interface(eni_id)


def _attach_network_interface(account_id: str, region_name: str, file_system: Any) -> None:
    """FSx puts an ENI with the file system's security groups in its subnet; ParallelCluster checks its rules."""
    ec2 = ec2_backends[account_id][region_name]
    subnet = ec2.get_subnet(file_system.subnet_ids[0]) if file_system.subnet_ids else None
    if subnet is None:
        return
    eni = ec2.create_network_interface(subnet, None, group_ids=list(file_system.security_group_ids or []),
                                       description=f"ENI for FSx {file_system.file_system_id}")
    file_system.vpc_id, file_system.network_interface_ids = subnet.vpc_id, [eni.id]
    file_system.eni_ids_to_delete = [eni.id]


def _give_aws_shaped_id(backend: Any, file_system: Any, region_name: str, account_id: str) -> None:
    """AWS names file systems ``fs-`` + 17 hex digits (ParallelCluster's schema insists); moto uses 8."""
    old_id, new_id = file_system.file_system_id, f"fs-{_hex(17)}"
    old_arn = file_system.resource_arn
    file_system.file_system_id = new_id
    file_system.dns_name = f"{new_id}.fsx.{region_name}.amazonaws.com"
    file_system.resource_arn = f"arn:aws:fsx:{region_name}:{account_id}:file-system/{new_id}"
    backend.file_systems[new_id] = backend.file_systems.pop(old_id)
    tags = backend.tagger.list_tags_for_resource(old_arn).get("Tags", [])
    if tags:
        backend.tagger.tag_resource(file_system.resource_arn, tags)
        backend.tagger.delete_all_tags_for_resource(old_arn)


class DataRepositoryAssociation(_Attributes, CloudFormationModel):
    """``AWS::FSx::DataRepositoryAssociation``: checks the Lustre file system and the bucket exist."""

    CFN_TYPE = "AWS::FSx::DataRepositoryAssociation"
    ATTRIBUTES = ("AssociationId", "ResourceARN")

    def __init__(self, association_id: str, arn: str, properties: dict[str, Any]) -> None:
        self.properties = properties
        self.ref = association_id
        self.attributes = {"AssociationId": association_id, "ResourceARN": arn}

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> DataRepositoryAssociation:
        props = cloudformation_json["Properties"]
        file_system = fsx_backends[account_id][region_name].file_systems.get(props.get("FileSystemId"))
        if file_system is None or file_system.file_system_type != "LUSTRE":
            raise ValidationError(message=f"{props.get('FileSystemId')} is not an FSx for Lustre file system")
        match = re.fullmatch(r"s3://([^/]+)(/.*)?", str(props.get("DataRepositoryPath", "")))
        if not match:
            raise ValidationError(message="DataRepositoryPath must be an s3:// URI")
        s3_backends[account_id]["aws"].get_bucket(match.group(1))
        if not str(props.get("FileSystemPath", "")).startswith("/"):
            raise ValidationError(message="FileSystemPath must be an absolute path")
        association_id = f"dra-{_hex(17)}"
        arn = f"arn:aws:fsx:{region_name}:{account_id}:association/{file_system.file_system_id}/{association_id}"
        return cls(association_id, arn, props)



def _check_lifecycle(account_id: str, group: dict[str, Any]) -> None:
    """HyperPod runs ``OnCreate`` from ``SourceS3Uri`` on every new node: refuse a script that is not there.

    AWS fails the cluster ("lifecycle script … not found") once the instances try; here the create fails.
    """
    lifecycle = group.get("LifeCycleConfig") or {}
    uri, script = str(lifecycle.get("SourceS3Uri", "")), str(lifecycle.get("OnCreate", ""))
    match = re.fullmatch(r"s3://([^/]+)/?(.*)", uri)
    if match is None or not script:
        raise ValidationError(message=f"{group.get('InstanceGroupName')}: LifeCycleConfig needs SourceS3Uri and OnCreate")
    bucket_name, key_prefix = match.group(1), match.group(2)
    if key_prefix and not key_prefix.endswith("/"):
        key_prefix += "/"
    bucket = s3_backends[account_id]["aws"].buckets.get(bucket_name)
    if bucket is None or bucket.keys.get(key_prefix + script) is None:
        raise ValidationError(message=f"{group.get('InstanceGroupName')}: lifecycle script {uri.rstrip('/')}/{script} "
                                      "was not found; upload the lifecycle scripts before creating the cluster")
    size = (group.get("InstanceStorageConfigs") or [{}])[0].get("EbsVolumeConfig", {}).get("VolumeSizeInGB")
    if size is not None and not 1 <= int(size) <= 16384:
        raise ValidationError(message="EbsVolumeConfig.VolumeSizeInGB must be between 1 and 16384")


class SageMakerCluster(_Attributes, CloudFormationModel):
    """``AWS::SageMaker::Cluster`` created through moto's SageMaker ``create_cluster``."""

    CFN_TYPE = "AWS::SageMaker::Cluster"
    CFN_NAME_TYPE = "ClusterName"
    ATTRIBUTES = ("ClusterArn", "ClusterStatus", "CreationTime", "FailureMessage")

    def __init__(self, cluster: Any, node_recovery: str) -> None:
        self.cluster = cluster
        self.ref = cluster.arn
        self.node_recovery = node_recovery
        self.attributes = {
            "ClusterArn": cluster.arn,
            "ClusterStatus": cluster.status,
            "CreationTime": str(cluster.creation_time),
            "FailureMessage": cluster.failure_message,
        }

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> SageMakerCluster:
        props = copy.deepcopy(cloudformation_json["Properties"])
        groups = []
        for group in props.get("InstanceGroups", []):
            group = dict(group)
            group["InstanceCount"] = int(group["InstanceCount"])
            group["ThreadsPerCore"] = int(group.get("ThreadsPerCore", 2))
            groups.append(group)
        node_recovery = props.get("NodeRecovery", "Automatic")
        if node_recovery not in ("Automatic", "None"):
            raise ValidationError(message="NodeRecovery must be Automatic or None")
        for group in groups:
            _check_lifecycle(account_id, group)
        backend = sagemaker_backends[account_id][region_name]
        backend.create_cluster(resource_name, groups, props.get("VpcConfig", {}), _tags(props))
        return cls(backend.clusters[resource_name], node_recovery)

    def delete(self, account_id: str, region_name: str) -> None:
        backend = sagemaker_backends[account_id][region_name]
        if self.cluster.cluster_name in backend.clusters:
            backend.delete_cluster(self.cluster.cluster_name)


class PrometheusWorkspace(_Attributes, CloudFormationModel):
    """``AWS::APS::Workspace`` created in moto's Managed Prometheus backend."""

    CFN_TYPE = "AWS::APS::Workspace"
    ATTRIBUTES = ("Arn", "WorkspaceId", "PrometheusEndpoint")

    def __init__(self, workspace: Any) -> None:
        self.workspace = workspace
        self.ref = workspace.arn
        self.attributes = {
            "Arn": workspace.arn,
            "WorkspaceId": workspace.workspace_id,
            "PrometheusEndpoint": workspace.endpoint,
        }

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> PrometheusWorkspace:
        props = cloudformation_json["Properties"]
        if props.get("AlertManagerDefinition"):  # moto's AMP has no alert manager: checked, then kept here
            check_alert_manager_definition(props["AlertManagerDefinition"])
        tags = {t["Key"]: t["Value"] for t in _tags(props)}
        workspace = cls(amp_backends[account_id][region_name].create_workspace(props.get("Alias", ""), tags))
        workspace.alert_manager_definition = props.get("AlertManagerDefinition", "")
        return workspace

    def delete(self, account_id: str, region_name: str) -> None:
        amp_backends[account_id][region_name].delete_workspace(self.workspace.workspace_id)


class GrafanaWorkspace(_Attributes, CloudFormationModel):
    """``AWS::Grafana::Workspace``: moto has no Grafana, so the workspace exists only in its stack."""

    CFN_TYPE = "AWS::Grafana::Workspace"
    ATTRIBUTES = ("Id", "Endpoint", "Status", "GrafanaVersion", "CreationTimestamp", "ModificationTimestamp")
    REQUIRED = ("AccountAccessType", "AuthenticationProviders", "PermissionType")

    def __init__(self, workspace_id: str, region_name: str) -> None:
        self.ref = workspace_id
        now = cfn_models.utcnow().isoformat()
        self.attributes = {
            "Id": workspace_id,
            "Endpoint": f"{workspace_id}.grafana-workspace.{region_name}.amazonaws.com",
            "Status": "ACTIVE",
            "GrafanaVersion": "10.4",
            "CreationTimestamp": now,
            "ModificationTimestamp": now,
        }

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> GrafanaWorkspace:
        props = cloudformation_json["Properties"]
        missing = [name for name in cls.REQUIRED if not props.get(name)]
        if missing:
            raise ValidationError(message=f"Grafana workspace is missing {', '.join(missing)}")
        workspace = cls(f"g-{_hex(10)}", region_name)
        moto_grafana.register(workspace.ref, account_id, region_name)  # its service accounts and HTTP API
        return workspace

    def delete(self, account_id: str, region_name: str) -> None:
        moto_grafana.unregister(self.ref, account_id, region_name)
