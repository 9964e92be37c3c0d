"""ParallelCluster's CloudFormation custom resource, emulated for moto's server.

Real stacks create a cluster with ``Custom::PclusterCluster``, whose ServiceToken is an output of
ParallelCluster's provider stack (a nested ``AWS::CloudFormation::Stack`` loaded from the
``<region>-aws-parallelcluster`` bucket). moto holds neither that template nor a Lambda that could
run it, so :func:`sandbox.aws.moto_install.install` applies what is here: a stand-in provider
template and the emulated cluster resource.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from moto.cloudformation import models as cfn_models
from moto.cloudformation import parsing
from moto.cloudformation.exceptions import (
    UnformattedGetAttTemplateException,
    ValidationError,
)
from moto.core.common_models import CloudFormationModel
from moto.core.utils import utcnow
from moto.ec2.models import ec2_backends
from moto.ec2.models.amis import Ami, AmiBackend
from moto.s3.models import s3_backends

from clusters.blueprints import pcluster_spec
from sandbox.aws.moto_common import _Attributes, _drop_no_value, _hex

_PROVIDER_URL = re.compile(
    r"https://[a-z0-9-]+-aws-parallelcluster\.s3\.[a-z0-9-]+\.amazonaws\.com"
    r"/parallelcluster/(?P<version>\d+\.\d+\.\d+)/templates/custom_resource/cluster\.yaml"
)

# Stands in for ParallelCluster's provider template (a Lambda, its layer, roles, a bucket and the
# Lambda's log group): only its ServiceToken output matters to the stacks that use it.
_PROVIDER_DESCRIPTION = "AWS ParallelCluster Cluster Custom Resource Provider (embedded endpoint stand-in)"
_PROVIDER_TEMPLATE = f"Description: {_PROVIDER_DESCRIPTION}\n" + """\
Parameters:
  CustomLambdaRole: {Type: String, Default: ""}
  AdditionalIamPolicies: {Type: CommaDelimitedList, Default: ""}
  CustomBucket: {Type: String, Default: ""}
Resources:
  PclusterCfnFunctionLogGroup:
    Type: AWS::Logs::LogGroup
    Properties:
      RetentionInDays: 90
      LogGroupName: !Sub
        - /aws/lambda/pcluster-cfn-${Suffix}
        - Suffix: !Select [2, !Split ["/", !Ref AWS::StackId]]
Outputs:
  ServiceToken:
    Value: !Sub
      - arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:pcluster-cfn-${Suffix}
      - Suffix: !Select [2, !Split ["/", !Ref AWS::StackId]]
  ParallelClusterVersion:
    Value: "VERSION"
"""

# ParallelCluster runs each cluster in a stack of its own, named after the cluster.
_CLUSTER_STACK_TEMPLATE = """\
Description: AWS ParallelCluster cluster stack (embedded endpoint stand-in)
Resources:
  ClusterLogGroup:
    Type: AWS::Logs::LogGroup
    Properties:
      LogGroupName: /aws/parallelcluster/CLUSTER
      RetentionInDays: 30
"""


def _provider_version(account_id: str, region_name: str, service_token: str) -> str:
    """The version of the provider stack whose ServiceToken this is (the Lambda would know it)."""
    for stack in cfn_models.cloudformation_backends[account_id][region_name].stacks.values():
        if stack.status != "CREATE_COMPLETE" or stack.description != _PROVIDER_DESCRIPTION:
            continue  # a stack still being created may be the one asking
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.outputs or []}
        if outputs.get("ServiceToken") == service_token:
            return str(outputs.get("ParallelClusterVersion", ""))
    raise ValidationError(message=f"No ParallelCluster provider stack exports ServiceToken {service_token}")


def _scripts(config: dict[str, Any]) -> list[str]:
    """Every custom action script of the head node and the queues (single or ``Sequence``)."""
    sections = [config.get("HeadNode") or {}] + list((config.get("Scheduling") or {}).get("SlurmQueues") or [])
    found = []
    for section in sections:
        for action in ((section.get("CustomActions") or {}).values()):
            entries = action.get("Sequence") or [action] if isinstance(action, dict) else []
            found.extend(str(e["Script"]) for e in entries if isinstance(e, dict) and e.get("Script"))
    return found


def _missing_scripts(account_id: str, config: dict[str, Any]) -> list[str]:
    """ParallelCluster's URL validator: an ``s3://`` custom action must exist before the cluster is created."""
    buckets = s3_backends[account_id]["aws"].buckets
    errors = []
    for script in _scripts(config):
        match = re.fullmatch(r"s3://([^/]+)/(.+)", script)
        if match is None:
            continue
        bucket = buckets.get(match.group(1))
        if bucket is None or bucket.keys.get(match.group(2)) is None:
            errors.append(f"The S3 object {script} does not exist or you do not have access to it")
    return errors


class PclusterCluster(_Attributes, CloudFormationModel):
    """``Custom::PclusterCluster``: what ParallelCluster's provider Lambda would do, done in place.

    The configuration is checked with :func:`clusters.blueprints.pcluster_spec.validate` and its ``s3://`` custom
    actions must exist (ParallelCluster's URL validator), the cluster's own stack is
    created, and the head node is launched in moto's EC2; attributes are the flattened
    ``describe-cluster`` result the provider returns (``headNode.publicIpAddress`` ...).
    """

    CFN_TYPE = "Custom::PclusterCluster"

    def __init__(self, name: str, attributes: dict[str, Any], instance_id: str, stack_name: str) -> None:
        self.ref = name
        self.attributes = attributes
        self.instance_id = instance_id
        self.stack_name = stack_name

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return True

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        if attribute_name not in self.attributes:
            raise UnformattedGetAttTemplateException()
        return self.attributes[attribute_name]

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str, **kwargs: Any
    ) -> PclusterCluster:
        props = _drop_no_value(copy.deepcopy(cloudformation_json["Properties"]))
        name, config = props.get("ClusterName"), props.get("ClusterConfiguration")
        if not name:
            raise ValidationError(message="Couldn't find a ClusterName in the properties.")
        if props.get("DeletionPolicy", "Delete") not in ("Retain", "Delete"):
            raise ValidationError(message='DeletionPolicy must be one of ["Retain", "Delete"].')
        if not isinstance(config, dict):
            raise ValidationError(message="ClusterConfiguration must be a mapping, not text")
        errors = pcluster_spec.validate(config) + _missing_scripts(account_id, config)
        if errors:
            raise ValidationError(message=f"{name}: invalid cluster configuration: {'; '.join(errors)}")
        version = _provider_version(account_id, region_name, props["ServiceToken"])
        cluster_stack = cfn_models.cloudformation_backends[account_id][region_name].create_stack(
            name=name,
            template=_CLUSTER_STACK_TEMPLATE.replace("CLUSTER", name),
            parameters={},
            tags={"parallelcluster:version": version, "parallelcluster:cluster-name": name},
        )
        head = config["HeadNode"]
        ec2 = ec2_backends[account_id][region_name]
        groups = [ec2.get_security_group_from_id(g).name for g in head["Networking"].get("AdditionalSecurityGroups", [])]
        reservation = ec2.run_instances(
            image_id=f"ami-{_hex(17)}",
            count=1,
            user_data=None,
            security_group_names=groups,
            instance_type=head["InstanceType"],
            is_instance_type_default=False,
            subnet_id=head["Networking"]["SubnetId"],
            key_name=(head.get("Ssh") or {}).get("KeyName"),
            associate_public_ip=None,
        )
        instance = reservation.instances[0]
        for key, value in (("Name", "HeadNode"), ("parallelcluster:cluster-name", name), ("parallelcluster:node-type", "HeadNode")):
            instance.add_tag(key, value)
        attributes = {
            "clusterName": name,
            "clusterStatus": "CREATE_COMPLETE",
            "cloudformationStackStatus": "CREATE_COMPLETE",
            "cloudformationStackArn": cluster_stack.stack_id,
            "region": region_name,
            "version": version,
            "headNode.instanceId": instance.id,
            "headNode.instanceType": head["InstanceType"],
            "headNode.state": "running",
            "headNode.publicIpAddress": instance.public_ip,
            "headNode.privateIpAddress": instance.private_ip,
            "validationMessages": "[]",
            "logGroupName": f"/aws/parallelcluster/{name}",
        }
        created = cls(name, attributes, instance.id, name)
        created.configuration = config  # what ParallelCluster received (tests compare the portal's print with it)
        return created

    def delete(self, account_id: str, region_name: str) -> None:
        ec2_backends[account_id][region_name].terminate_instances([self.instance_id])
        cfn_models.cloudformation_backends[account_id][region_name].delete_stack(self.stack_name)


# ParallelCluster's official images, which AWS publishes in every region (owner "amazon"), for the
# versions the blueprint offers: ParallelCluster looks them up by name to launch the head node.
PUBLISHED_VERSIONS = ("3.13.1",)
_IMAGE_OS_PARTS = ("amzn2023-hvm", "ubuntu-2204-lts-hvm")


def _publish_official_images(backend: Any) -> None:
    for version in PUBLISHED_VERSIONS:
        for os_part in _IMAGE_OS_PARTS:
            for arch in ("x86_64", "arm64"):
                ami_id = f"ami-{_hex(17)}"
                backend.amis[ami_id] = Ami(
                    backend, ami_id, name=f"aws-parallelcluster-{version}-{os_part}-{arch}-202506010000 2025-06-01T00-00-00.000Z",
                    description=f"AWS ParallelCluster AMI for {os_part}", owner_alias="amazon", owner_id="247102896272",
                    public=True, architecture=arch, virtualization_type="hvm", root_device_type="ebs",
                    root_device_name="/dev/xvda", creation_date=utcnow(), region_name=backend.region_name,
                    tags={"parallelcluster:version": version})


def provider_template(template_url: str) -> str | None:
    """The stand-in provider template for a ParallelCluster provider URL, else None."""
    match = _PROVIDER_URL.fullmatch(template_url)
    return None if match is None else _PROVIDER_TEMPLATE.replace("VERSION", match.group("version"))


def apply() -> None:
    """Route ``Custom::PclusterCluster`` (only that custom type) here and serve the provider template."""
    original_class_from_type = parsing.resource_class_from_type
    original_template_from_url = cfn_models.get_stack_from_s3_url

    def resource_class_from_type(resource_type: str) -> Any:
        if resource_type == PclusterCluster.cloudformation_type():
            return PclusterCluster
        return original_class_from_type(resource_type)

    def get_stack_from_s3_url(template_url: str, account_id: str, partition: str) -> str:
        stand_in = provider_template(template_url)
        if stand_in is None:
            return original_template_from_url(template_url, account_id=account_id, partition=partition)
        return stand_in

    parsing.resource_class_from_type = resource_class_from_type
    cfn_models.get_stack_from_s3_url = get_stack_from_s3_url

    original_load_amis = AmiBackend._load_amis

    def load_amis(self: Any) -> None:
        original_load_amis(self)
        _publish_official_images(self)

    AmiBackend._load_amis = load_amis
