"""Read CloudFormation templates the way the portal needs them, without AWS and without Django.

The portal shows a blueprint's parameters as a form, checks what a lead solutions architect typed
before anything reaches CloudFormation (a failed stack costs minutes, a form error costs nothing),
records which exact template launched a stack (``content_hash``), and lists the blueprints it ships
(``catalog``). Templates use the YAML short forms (``!Ref``, ``!Sub`` ...), which PyYAML's safe
loader rejects, so this module teaches a private SafeLoader subclass those tags and nothing else.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

BLUEPRINTS_DIR = Path(__file__).resolve().parent

KINDS = ("network", "storage", "parallelcluster", "hyperpod", "hyperpod-eks", "observability")

_SHORT_FORMS = {
    "Ref": "Ref",
    "Condition": "Condition",
    **{
        name: f"Fn::{name}"
        for name in (
            "Sub", "GetAtt", "If", "Equals", "Select", "GetAZs", "Join", "ImportValue", "Not",
            "And", "Or", "Split", "FindInMap", "Base64", "Cidr", "Length", "ToJsonString",
            "Transform",
            # Rules-only functions
            "Contains", "EachMemberEquals", "EachMemberIn", "RefAll", "ValueOf", "ValueOfAll",
        )
    },
}


class _TemplateLoader(yaml.SafeLoader):
    """SafeLoader that knows CloudFormation's short forms and keeps dates as strings."""


# CloudFormation reads `2010-09-09` as text; YAML 1.1 would turn it into a date.
_TemplateLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct_intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    key = _SHORT_FORMS.get(suffix)
    if key is None:
        raise yaml.constructor.ConstructorError(
            None, None, f"unknown CloudFormation tag !{suffix}", node.start_mark
        )
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {key: value}


_TemplateLoader.add_multi_constructor("!", _construct_intrinsic)


@dataclass(frozen=True)
class ParameterSpec:
    """One template parameter; values are kept as CloudFormation sees them (text)."""

    name: str
    type: str
    description: str = ""
    default: str | None = None
    allowed_values: tuple[str, ...] = ()
    min_value: float | None = None
    max_value: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    allowed_pattern: str | None = None
    no_echo: bool = False
    constraint_description: str = ""

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class OutputSpec:
    name: str
    description: str = ""
    exported: bool = False
    condition: str | None = None


@dataclass(frozen=True)
class Blueprint:
    slug: str
    path: Path
    kind: str
    title: str
    summary: str
    version: str
    description: str
    content_hash: str
    parameters: tuple[ParameterSpec, ...] = field(default=())
    outputs: tuple[OutputSpec, ...] = field(default=())


def load(path_or_text: str | Path) -> dict[str, Any]:
    """Parse a template given as a path or as YAML/JSON text into plain dicts and lists."""
    if isinstance(path_or_text, Path) or (
        "\n" not in path_or_text and path_or_text.endswith((".yaml", ".yml", ".json", ".template"))
    ):
        text = Path(path_or_text).read_text(encoding="utf-8")
    else:
        text = path_or_text
    data = yaml.load(text, Loader=_TemplateLoader)  # noqa: S506 - a SafeLoader subclass
    if not isinstance(data, dict):
        raise TypeError("a CloudFormation template must be a mapping")
    return data


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    return str(value)


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def parameters(template: Mapping[str, Any]) -> list[ParameterSpec]:
    """The template's parameters in template order."""
    specs = []
    for name, body in (template.get("Parameters") or {}).items():
        specs.append(
            ParameterSpec(
                name=name,
                type=body.get("Type", "String"),
                description=body.get("Description", ""),
                default=None if body.get("Default") is None else _text(body["Default"]),
                allowed_values=tuple(_text(v) for v in body.get("AllowedValues", ())),
                min_value=_number(body.get("MinValue")),
                max_value=_number(body.get("MaxValue")),
                min_length=body.get("MinLength"),
                max_length=body.get("MaxLength"),
                allowed_pattern=body.get("AllowedPattern"),
                no_echo=_text(body.get("NoEcho", False)).lower() == "true",
                constraint_description=body.get("ConstraintDescription", ""),
            )
        )
    return specs


def outputs(template: Mapping[str, Any]) -> list[OutputSpec]:
    """The template's outputs in template order, with whether each is exported."""
    return [
        OutputSpec(
            name=name,
            description=body.get("Description", ""),
            exported="Export" in body,
            condition=body.get("Condition"),
        )
        for name, body in (template.get("Outputs") or {}).items()
    ]


def resources_summary(template: Mapping[str, Any]) -> dict[str, int]:
    """How many resources of each type the template declares, sorted by type."""
    counts = Counter(body.get("Type", "?") for body in (template.get("Resources") or {}).values())
    return dict(sorted(counts.items()))


def content_hash(path: str | Path) -> str:
    """sha256 of the file's bytes, recorded with every launch to know exactly what ran."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def catalog(directory: str | Path = BLUEPRINTS_DIR) -> list[Blueprint]:
    """Every blueprint shipped with the portal, in the order the stacks are launched."""
    found = []
    for path in sorted(Path(directory).glob("*.yaml")):
        template = load(path)
        meta = (template.get("Metadata") or {}).get("Portal") or {}
        found.append(
            Blueprint(
                slug=path.stem,
                path=path,
                kind=meta.get("Kind", ""),
                title=meta.get("Title", path.stem),
                summary=meta.get("Summary", ""),
                version=_text(meta.get("Version", "")),
                description=" ".join(str(template.get("Description", "")).split()),
                content_hash=content_hash(path),
                parameters=tuple(parameters(template)),
                outputs=tuple(outputs(template)),
            )
        )
    order = {kind: i for i, kind in enumerate(KINDS)}
    return sorted(found, key=lambda b: (order.get(b.kind, len(KINDS)), b.slug))


_ID_PATTERNS = {
    "AWS::EC2::AvailabilityZone::Name": (r"[a-z]{2}(-[a-z0-9]+)+[a-z]", "an availability zone name such as ap-northeast-1a"),
    "AWS::EC2::VPC::Id": (r"vpc-[0-9a-f]{8,17}", "a VPC id such as vpc-0123456789abcdef0"),
    "AWS::EC2::Subnet::Id": (r"subnet-[0-9a-f]{8,17}", "a subnet id such as subnet-0123456789abcdef0"),
    "AWS::EC2::SecurityGroup::Id": (r"sg-[0-9a-f]{8,17}", "a security group id such as sg-0123456789abcdef0"),
    "AWS::EC2::Image::Id": (r"ami-[0-9a-f]{8,17}", "an image id such as ami-0123456789abcdef0"),
    "AWS::EC2::Instance::Id": (r"i-[0-9a-f]{8,17}", "an instance id such as i-0123456789abcdef0"),
    "AWS::EC2::KeyPair::KeyName": (r".{1,255}", "a key pair name"),
    "AWS::EC2::PlacementGroup::Name": (r".{1,255}", "a placement group name"),
}


def _as_number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _check_one(spec: ParameterSpec, base_type: str, text: str) -> str | None:
    """Error for one (list element) value, or None."""
    if base_type == "Number":
        number = _as_number(text)
        if number is None:
            return f"'{text}' is not a number"
        if spec.allowed_values and all(_as_number(v) != number for v in spec.allowed_values):
            return f"{text} is not one of {', '.join(spec.allowed_values)}"
        if spec.min_value is not None and number < spec.min_value:
            return f"{text} is below the minimum {spec.min_value:g}"
        if spec.max_value is not None and number > spec.max_value:
            return f"{text} is above the maximum {spec.max_value:g}"
        return None
    if base_type in _ID_PATTERNS:
        pattern, what = _ID_PATTERNS[base_type]
        if not re.fullmatch(pattern, text):
            return f"'{text}' is not {what}"
    if spec.allowed_values and text not in spec.allowed_values:
        return f"'{text}' is not one of {', '.join(spec.allowed_values)}"
    return None


def _check(spec: ParameterSpec, text: str) -> str | None:
    kind = spec.type
    if kind.startswith("List<") and kind.endswith(">"):
        elements = [part.strip() for part in text.split(",")] if text else []
        if not elements and kind != "List<String>":
            return "needs at least one value"
        for element in elements:
            error = _check_one(spec, kind[5:-1], element)
            if error:
                return error
        return None
    if kind == "CommaDelimitedList":
        for element in (part.strip() for part in text.split(",")):
            if spec.allowed_values and element not in spec.allowed_values:
                return f"'{element}' is not one of {', '.join(spec.allowed_values)}"
        return None
    error = _check_one(spec, kind, text)
    if error:
        return error
    if kind == "Number":
        return None
    if spec.min_length is not None and len(text) < spec.min_length:
        return f"is shorter than {spec.min_length} characters"
    if spec.max_length is not None and len(text) > spec.max_length:
        return f"is longer than {spec.max_length} characters"
    if spec.allowed_pattern and not re.fullmatch(spec.allowed_pattern, text):
        return spec.constraint_description or f"does not match {spec.allowed_pattern}"
    return None


def validate_parameters(spec_list: list[ParameterSpec], values: Mapping[str, Any]) -> dict[str, str]:
    """Check values the way CloudFormation will, so mistakes surface in the form, not in a failed stack.

    Values may be text, numbers or lists; a missing value falls back to the default. Ids of the
    AWS-specific types are checked for shape only (CloudFormation also checks they exist).
    Returns ``{parameter name: message}``; empty when every value is acceptable.
    """
    errors: dict[str, str] = {}
    known = {spec.name for spec in spec_list}
    for name in values:
        if name not in known:
            errors[name] = "is not a parameter of this template"
    for spec in spec_list:
        value = values.get(spec.name)
        if value is None:
            if spec.required:
                errors[spec.name] = "is required"
            continue
        error = _check(spec, _text(value))
        if error:
            errors[spec.name] = error
    return errors
