"""Corrections to moto behaviours that the blueprints run into, applied by ``install()``.

Each one makes moto act as CloudFormation does for a template that is valid on AWS: list-form and
dotted ``!GetAtt``, nested-stack ``Outputs.*`` attributes, exports of conditional outputs, a
subnet's ``MapPublicIpOnLaunch``,
deleting the network resources moto's models cannot delete (so stack deletion completes), and not
re-creating a deleted stack's resources when its outputs or resources are read afterwards.
"""

from __future__ import annotations

from typing import Any

import yaml
from moto.cloudformation import models as cfn_models
from moto.cloudformation import parsing
from moto.cloudformation import responses as cfn_responses
from moto.cloudformation import utils as cfn_utils
from moto.cloudformation.exceptions import UnformattedGetAttTemplateException
from moto.ec2.models import ec2_backends
from moto.ec2.models.elastic_ip_addresses import ElasticAddress
from moto.ec2.models.internet_gateways import InternetGateway
from moto.ec2.models.nat_gateways import NatGateway
from moto.ec2.models.route_tables import RouteTable
from moto.ec2.models.subnets import Subnet
from moto.ec2.models.vpcs import VPCEndPoint
from moto.ec2.models.vpn_gateway import VPCGatewayAttachment


def _get_att_constructor() -> None:
    """moto keeps YAML nodes for ``!GetAtt [A, b.c]`` and splits ``!GetAtt A.b.c`` at every dot."""
    original = cfn_utils.yaml_tag_constructor

    def yaml_tag_constructor(loader: Any, tag: str, node: Any) -> Any:
        if tag != "!GetAtt":
            return original(loader, tag, node)
        if isinstance(node, yaml.SequenceNode):
            return {"Fn::GetAtt": loader.construct_sequence(node, deep=True)}
        return {"Fn::GetAtt": str(node.value).split(".", 1)}

    for module in (cfn_utils, cfn_models, cfn_responses):
        module.yaml_tag_constructor = yaml_tag_constructor


def _stack_get_cfn_attribute(self: Any, attribute_name: str) -> Any:
    """``!GetAtt NestedStack.Outputs.Name``, which moto's Stack does not answer."""
    outputs = {o["OutputKey"]: o["OutputValue"] for o in self.outputs or []}
    key = attribute_name.removeprefix("Outputs.")
    if attribute_name.startswith("Outputs.") and key in outputs:
        return outputs[key]
    raise UnformattedGetAttTemplateException()


def _exports(self: Any) -> list[Any]:
    """An output whose Condition is false has no export (moto evaluated it and failed)."""
    conditions = self._resource_map.lazy_condition_map
    found = []
    for body in (self._output_json_map or {}).values():
        if not body.get("Export") or ("Condition" in body and not conditions[body["Condition"]]):
            continue
        name = parsing.clean_json(body["Export"].get("Name"), self._resource_map)
        found.append(parsing.Export(self._stack_id, name, parsing.clean_json(body.get("Value"), self._resource_map)))
    return found


def _deleted_stacks_stay_deleted() -> None:
    """moto resolves outputs and resources lazily, so reading a deleted stack re-created them."""
    stack = cfn_models.Stack
    outputs, resources = stack.outputs, stack.stack_resources

    def live_outputs(self: Any) -> Any:
        return None if self.status == "DELETE_COMPLETE" else outputs.fget(self)

    def live_resources(self: Any) -> Any:
        return [] if self.status == "DELETE_COMPLETE" else resources.fget(self)

    stack.outputs = property(live_outputs)  # type: ignore[method-assign, assignment]
    stack.stack_resources = property(live_resources)  # type: ignore[method-assign, assignment]
    if not hasattr(stack, "get_cfn_attribute"):
        stack.get_cfn_attribute = _stack_get_cfn_attribute


def _detach_gateway(ec2: Any, gateway_id: str) -> None:
    gateway = ec2.internet_gateways.get(gateway_id)
    if gateway is not None and gateway.vpc is not None:
        ec2.detach_internet_gateway(gateway_id, gateway.vpc.id)


def _ec2_deletes() -> dict[type, Any]:
    """How to delete the network resources whose moto models cannot be deleted by a stack."""
    def delete_gateway(ec2: Any, gateway: Any) -> None:
        _detach_gateway(ec2, gateway.id)
        ec2.delete_internet_gateway(gateway.id)

    def delete_endpoint(ec2: Any, endpoint: Any) -> None:
        # moto deletes in no particular order; its own delete fails once a route table is gone.
        endpoint.route_table_ids = [t for t in endpoint.route_table_ids or [] if t in ec2.route_tables]
        ec2.delete_vpc_endpoints([endpoint.id])

    return {
        RouteTable: lambda ec2, table: ec2.delete_route_table(table.id),
        NatGateway: lambda ec2, gateway: ec2.delete_nat_gateway(gateway.id),
        VPCEndPoint: delete_endpoint,
        ElasticAddress: lambda ec2, address: ec2.release_address(allocation_id=address.allocation_id),
        InternetGateway: delete_gateway,
        VPCGatewayAttachment: lambda ec2, attachment: _detach_gateway(ec2, attachment.gateway_id),
    }


def _with_ec2(action: Any) -> Any:
    def delete(self: Any, account_id: str, region_name: str) -> None:
        action(ec2_backends[account_id][region_name], self)

    return delete


def _subnet_honouring_public_ip() -> Any:
    """moto's Subnet ignores ``MapPublicIpOnLaunch``; the head node's public IP depends on it."""
    original = Subnet.create_from_cloudformation_json.__func__  # type: ignore[attr-defined]

    def create(cls: Any, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str, **kwargs: Any) -> Any:
        subnet = original(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
        flag = cloudformation_json["Properties"].get("MapPublicIpOnLaunch", False)
        subnet.map_public_ip_on_launch = str(flag).lower() == "true"
        return subnet

    Subnet.create_from_cloudformation_json = classmethod(create)  # type: ignore[method-assign, assignment]


def apply() -> None:
    """Apply every correction above once (``install()`` guards against a second call)."""
    _get_att_constructor()
    _deleted_stacks_stay_deleted()
    parsing.OutputMap.exports = property(_exports)  # type: ignore[method-assign, assignment]
    for model, action in _ec2_deletes().items():
        if not hasattr(model, "delete"):
            model.delete = _with_ec2(action)
    _subnet_honouring_public_ip()
