"""Teach moto's CloudFormation what the HyperPod on EKS blueprint needs, so a launch reaches "ready" there.

moto has an EKS backend (``create_cluster``, ``describe_cluster``) but no CloudFormation resource for it,
no add-ons, and its SageMaker ``create_cluster`` knows nothing of orchestrators. Here:

- ``AWS::EKS::Cluster`` is created in moto's EKS backend (so ``describe_cluster`` sees it), after the checks
  EKS makes: a role ARN, subnets in at least two availability zones, a Kubernetes version, an
  authentication mode. The access configuration is kept on the cluster (moto has no field for it), and the
  cluster gets an endpoint of its own, answered by :mod:`sandbox.aws.moto_kubernetes` (moto gives every
  cluster the same host and nothing behind it).
- ``AWS::EKS::Addon`` is kept on its stack and recorded on its cluster; the cluster must exist and be
  active, and the add-on must be one EKS offers (the names below).
- ``AWS::SageMaker::Cluster`` with ``Orchestrator.Eks`` is checked before moto's SageMaker creates it: the
  EKS cluster must exist in this account and region, be active, and take access entries (authentication
  mode ``API`` or ``API_AND_CONFIG_MAP``), as HyperPod requires; the deep health checks must be the two
  HyperPod knows. A Slurm cluster (no orchestrator) is untouched.
- ``!GetAZs ""`` returns the stack's region's zones (moto answers with us-east-1's whatever the region).

Used only by the embedded endpoint; :func:`sandbox.aws.moto_install.install` calls :func:`apply`.
"""
from __future__ import annotations

import re
from typing import Any

from moto.cloudformation import parsing
from moto.cloudformation.exceptions import UnformattedGetAttTemplateException, ValidationError
from moto.core.common_models import CloudFormationModel
from moto.ec2.models import ec2_backends
from moto.eks.models import eks_backends

from sandbox.aws import moto_kubernetes
from sandbox.aws.moto_resources import SageMakerCluster

# Add-ons EKS offers that the blueprint (or an operator) may name.
ADDONS = frozenset({"vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent", "aws-fsx-csi-driver",
                    "aws-ebs-csi-driver", "amazon-cloudwatch-observability", "amazon-sagemaker-hyperpod-taskgovernance",
                    "amazon-sagemaker-hyperpod-observability"})
AUTHENTICATION_MODES = ("CONFIG_MAP", "API", "API_AND_CONFIG_MAP")
HYPERPOD_AUTHENTICATION_MODES = ("API", "API_AND_CONFIG_MAP")
DEEP_HEALTH_CHECKS = frozenset({"InstanceStress", "InstanceConnectivity"})
_EKS_ARN = re.compile(r"arn:aws[a-z-]*:eks:([a-z0-9-]+):(\d{12}):cluster/([A-Za-z0-9][A-Za-z0-9_-]*)")

_originals: dict[str, Any] = {}


def _eks(account_id: str, region_name: str) -> Any:
    return eks_backends[account_id][region_name]


class EksCluster(CloudFormationModel):
    """``AWS::EKS::Cluster`` in moto's EKS backend."""

    ATTRIBUTES = ("Arn", "Endpoint", "CertificateAuthorityData", "ClusterSecurityGroupId", "EncryptionConfigKeyArn",
                  "OpenIdConnectIssuerUrl", "KubernetesNetworkConfig.ServiceIpv4Cidr")

    def __init__(self, cluster: Any, account_id: str, region_name: str) -> None:
        self.cluster = cluster
        self.account_id, self.region_name = account_id, region_name

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::EKS::Cluster"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "Name"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr in cls.ATTRIBUTES

    @property
    def physical_resource_id(self) -> str:
        return self.cluster.name

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        cluster = self.cluster
        encryption = (cluster.encryption_config or [{}])[0].get("provider", {}) if cluster.encryption_config else {}
        values = {
            "Arn": cluster.arn,
            "Endpoint": cluster.endpoint,
            "CertificateAuthorityData": (cluster.certificate_authority or {}).get("data", ""),
            "ClusterSecurityGroupId": (cluster.resources_vpc_config or {}).get("clusterSecurityGroupId", ""),
            "EncryptionConfigKeyArn": encryption.get("keyArn", ""),
            "OpenIdConnectIssuerUrl": ((cluster.identity or {}).get("oidc") or {}).get("issuer", ""),
            "KubernetesNetworkConfig.ServiceIpv4Cidr": (cluster.kubernetes_network_config or {}).get("serviceIpv4Cidr", ""),
        }
        if attribute_name not in values:
            raise UnformattedGetAttTemplateException()
        return values[attribute_name]

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> EksCluster:
        props = cloudformation_json["Properties"]
        vpc = props.get("ResourcesVpcConfig") or {}
        subnet_ids = [str(s) for s in vpc.get("SubnetIds") or []]
        ec2 = ec2_backends[account_id][region_name]
        zones = set()
        for subnet_id in subnet_ids:
            subnet = ec2.get_subnet(subnet_id)
            zones.add(subnet.availability_zone)
        if len(zones) < 2:  # EKS: "Subnets specified must be in at least two different AZs"
            raise ValidationError(message="EKS cluster subnets must be in at least two availability zones")
        mode = (props.get("AccessConfig") or {}).get("AuthenticationMode", "CONFIG_MAP")
        if mode not in AUTHENTICATION_MODES:
            raise ValidationError(message=f"AuthenticationMode must be one of {', '.join(AUTHENTICATION_MODES)}")
        if not props.get("RoleArn"):
            raise ValidationError(message="EKS cluster needs RoleArn")
        encryption = [{"resources": c.get("Resources", []), "provider": {"keyArn": (c.get("Provider") or {}).get("KeyArn")}}
                      for c in props.get("EncryptionConfig") or []]
        logging = (props.get("Logging") or {}).get("ClusterLogging", {}).get("EnabledTypes", [])
        name = props.get("Name") or resource_name
        cluster = _eks(account_id, region_name).create_cluster(
            name=name, role_arn=str(props["RoleArn"]),
            resources_vpc_config={"subnetIds": subnet_ids,
                                  "securityGroupIds": [str(g) for g in vpc.get("SecurityGroupIds") or []],
                                  "endpointPublicAccess": str(vpc.get("EndpointPublicAccess", True)).lower() == "true",
                                  "endpointPrivateAccess": str(vpc.get("EndpointPrivateAccess", False)).lower() == "true"},
            version=str(props.get("Version") or "1.32"),
            logging={"clusterLogging": [{"types": [t["Type"] for t in logging], "enabled": True}]} if logging else None,
            tags={t["Key"]: str(t["Value"]) for t in props.get("Tags") or []},
            encryption_config=encryption or None,
        )
        cluster.endpoint = moto_kubernetes.endpoint_for(name, account_id, region_name)  # its own API server
        cluster.geniac_access_config = {"authenticationMode": mode}
        cluster.geniac_addons = {}
        return cls(cluster, account_id, region_name)

    def delete(self, account_id: str, region_name: str) -> None:
        backend = _eks(account_id, region_name)
        if self.cluster.name in backend.clusters:
            backend.delete_cluster(self.cluster.name)


class EksAddon(CloudFormationModel):
    """``AWS::EKS::Addon``: moto has no add-ons; the add-on lives on its stack and on its cluster."""

    def __init__(self, cluster: Any, name: str, version: str) -> None:
        self.cluster, self.name, self.version = cluster, name, version

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::EKS::Addon"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "Arn"

    @property
    def physical_resource_id(self) -> str:
        return f"{self.cluster.name}|{self.name}"

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        if attribute_name != "Arn":
            raise UnformattedGetAttTemplateException()
        return self.cluster.arn.replace(":cluster/", ":addon/") + f"/{self.name}"

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> EksAddon:
        props = cloudformation_json["Properties"]
        cluster = _eks(account_id, region_name).clusters.get(str(props.get("ClusterName")))
        if cluster is None or not cluster.is_active:
            raise ValidationError(message=f"No active EKS cluster {props.get('ClusterName')!r} for add-on "
                                          f"{props.get('AddonName')!r}")
        name = str(props.get("AddonName", ""))
        if name not in ADDONS:
            raise ValidationError(message=f"{name!r} is not an EKS add-on")
        version = str(props.get("AddonVersion") or "default")
        getattr(cluster, "geniac_addons", {})[name] = version
        return cls(cluster, name, version)

    def delete(self, account_id: str, region_name: str) -> None:
        getattr(self.cluster, "geniac_addons", {}).pop(self.name, None)


def check_orchestrator(properties: dict[str, Any], account_id: str, region_name: str) -> None:
    """Refuse a HyperPod cluster whose EKS orchestrator HyperPod could not use; Slurm clusters pass."""
    eks = (properties.get("Orchestrator") or {}).get("Eks")
    if eks is None:
        return
    match = _EKS_ARN.fullmatch(str(eks.get("ClusterArn", "")))
    if match is None:
        raise ValidationError(message="Orchestrator.Eks.ClusterArn must be an EKS cluster ARN")
    region, account, name = match.groups()
    if (region, account) != (region_name, account_id):
        raise ValidationError(message="the EKS cluster must be in the HyperPod cluster's account and region")
    cluster = _eks(account_id, region_name).clusters.get(name)
    if cluster is None or not cluster.is_active:
        raise ValidationError(message=f"EKS cluster {name} does not exist or is not active")
    mode = getattr(cluster, "geniac_access_config", {}).get("authenticationMode", "CONFIG_MAP")
    if mode not in HYPERPOD_AUTHENTICATION_MODES:
        raise ValidationError(message=f"EKS cluster {name} has authentication mode {mode}; HyperPod needs "
                                      "API or API_AND_CONFIG_MAP (access entries)")
    for group in properties.get("InstanceGroups") or []:
        unknown = set(group.get("OnStartDeepHealthChecks") or []) - DEEP_HEALTH_CHECKS
        if unknown:
            raise ValidationError(message=f"{group.get('InstanceGroupName')}: unknown deep health checks "
                                          f"{', '.join(sorted(unknown))}")


def _create_sagemaker_cluster(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
    check_orchestrator(cloudformation_json.get("Properties") or {}, account_id, region_name)
    created = _originals["sagemaker"].__func__(cls, resource_name, cloudformation_json, account_id, region_name,
                                               **kwargs)
    created.orchestrator = (cloudformation_json.get("Properties") or {}).get("Orchestrator") or {}
    return created


def _clean_json(resource_json: Any, resources_map: Any) -> Any:
    if isinstance(resource_json, dict) and "Fn::GetAZs" in resource_json and not resource_json["Fn::GetAZs"]:
        region = resources_map._region_name
        ec2 = ec2_backends[resources_map._account_id][region]
        return sorted(zone.name for zone in ec2.describe_availability_zones())
    return _originals["clean_json"](resource_json, resources_map)


def apply() -> None:
    """Check HyperPod's EKS orchestrator and answer ``!GetAZs ""`` for the stack's region (idempotent)."""
    if "sagemaker" not in _originals:
        _originals["sagemaker"] = SageMakerCluster.__dict__["create_from_cloudformation_json"]
        SageMakerCluster.create_from_cloudformation_json = classmethod(_create_sagemaker_cluster)
    if "clean_json" not in _originals:
        _originals["clean_json"] = parsing.clean_json
        parsing.clean_json = _clean_json
