"""Validation shared by forms, the API and the models: instance types, regions, versioned component lists."""
from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext

from portal.core import instance_types
from portal.core.choices import REGION_CODES


def base_instance_type(name: str) -> str:
    """SageMaker names the same machines with an ``ml.`` prefix; quotas and usage count them together."""
    return name[3:] if name.startswith("ml.") else name


def validate_instance_type(name: str) -> None:
    try:
        instance_types.get(name or "")
    except instance_types.UnknownInstanceType as exc:
        known = ", ".join(item.name for item in instance_types.all_types())
        raise ValidationError(
            gettext("Unknown instance type %(name)s. Known types: %(known)s (and their ml.-prefixed SageMaker names).")
            % {"name": repr(name), "known": known},
            code="unknown_instance_type",
        ) from exc


def instance_type_choices() -> list[tuple[str, str]]:
    """EC2 names for ParallelCluster, and the ``ml.`` names SageMaker HyperPod uses for the same machines."""
    ec2 = list(instance_types.choices())
    return ec2 + [(f"ml.{name}", f"ml.{name} (SageMaker)") for name, _ in ec2]


def validate_region(code: str) -> None:
    if code not in REGION_CODES:
        raise ValidationError(
            gettext("Unknown region %(code)s. Known regions: %(regions)s.")
            % {"code": repr(code), "regions": ", ".join(sorted(REGION_CODES))},
            code="unknown_region",
        )


def validate_positive(value: int | None) -> None:
    if value is not None and value <= 0:
        raise ValidationError(gettext("Must be at least 1."), code="not_positive")


def _one_of(names) -> dict:
    return {"pattern": "^(" + "|".join(re.escape(name) for name in sorted(names)) + ")$"}


# What the API schema says about these rules (read by portal.core.api.schema.PortalAutoSchema): a pattern rather
# than an enum, so the schema gets no second named choice set.
validate_positive.openapi_schema = {"minimum": 1}
validate_region.openapi_schema = lambda: _one_of(REGION_CODES)
validate_instance_type.openapi_schema = lambda: _one_of(name for name, _ in instance_type_choices())


def validate_components(items, vocabulary: dict[str, str], what: str) -> None:
    """A list of {"name", "version", "label"?}: known names, "other" with a label, no name twice."""
    if not isinstance(items, list):
        raise ValidationError(f"{what}: expected a list of {{name, version}} items.")
    seen = set()
    for i, item in enumerate(items, start=1):
        if not isinstance(item, dict) or set(item) - {"name", "version", "label"}:
            raise ValidationError(f"{what} item {i}: expected keys name, version (and label for other).")
        name = item.get("name")
        if name not in vocabulary:
            raise ValidationError(f"{what} item {i}: unknown name {name!r}; use one of {', '.join(vocabulary)}.")
        if not isinstance(item.get("version", ""), str) or len(item.get("version", "")) > 100:
            raise ValidationError(f"{what} item {i}: the version must be text of at most 100 characters.")
        label = (item.get("label") or "").strip()
        if name == "other" and not label:
            raise ValidationError(f"{what} item {i}: name the component in 'label' when it is 'other'.")
        key = (name, label.lower())
        if key in seen:
            raise ValidationError(f"{what}: {label or vocabulary[name]} is listed twice.")
        seen.add(key)


def component_display(item: dict, vocabulary: dict[str, str]) -> str:
    name = item.get("label") if item.get("name") == "other" else vocabulary.get(item.get("name"), item.get("name"))
    version = item.get("version") or ""
    return f"{name} {version}".strip()
