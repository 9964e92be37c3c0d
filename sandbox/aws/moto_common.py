"""What the embedded endpoint's CloudFormation resource types share: the ``Ref``/``GetAtt`` mixin, AWS-shaped
ids, tags in either of CloudFormation's shapes, and ``AWS::NoValue`` removal.

Its own module so that every ``moto_*`` module that defines resource types (:mod:`sandbox.aws.moto_resources`,
:mod:`sandbox.aws.moto_observability`, :mod:`sandbox.aws.moto_pcluster`) imports it and none imports another
for these.
"""
from __future__ import annotations

from typing import Any

from moto.cloudformation.exceptions import UnformattedGetAttTemplateException
from moto.moto_api._internal import mock_random


def _hex(length: int) -> str:
    return "".join(mock_random.choice("0123456789abcdef") for _ in range(length))


def _tags(properties: dict[str, Any]) -> list[dict[str, str]]:
    tags = properties.get("Tags") or []
    if isinstance(tags, dict):  # AWS::APS::Workspace and a few others take a map
        return [{"Key": k, "Value": str(v)} for k, v in tags.items()]
    return [{"Key": t["Key"], "Value": str(t["Value"])} for t in tags]


def _drop_no_value(value: Any) -> Any:
    """Remove what ``!Ref AWS::NoValue`` leaves inside lists (CloudFormation drops it; moto keeps None)."""
    if isinstance(value, dict):
        return {k: _drop_no_value(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_no_value(v) for v in value if v is not None]
    return value


class _Attributes:
    """Mixin: ``Ref`` is ``self.ref``, ``GetAtt`` reads ``self.attributes`` (names in ATTRIBUTES).

    A mixin, not a base class: moto finds resource types among the *direct* subclasses of
    ``CloudFormationModel`` only.
    """

    CFN_TYPE = ""
    CFN_NAME_TYPE = ""  # the property that names the resource ("GroupName"), if it has one
    ATTRIBUTES: tuple[str, ...] = ()
    ref: str
    attributes: dict[str, Any]

    @classmethod
    def cloudformation_type(cls) -> str:
        return cls.CFN_TYPE

    @classmethod
    def cloudformation_name_type(cls) -> str:
        return cls.CFN_NAME_TYPE

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr in cls.ATTRIBUTES

    @property
    def physical_resource_id(self) -> str:
        return self.ref

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        if attribute_name not in self.ATTRIBUTES:
            raise UnformattedGetAttTemplateException()
        return self.attributes[attribute_name]

    def delete(self, account_id: str, region_name: str) -> None:
        """Resources without a moto backend hold nothing outside their object."""
