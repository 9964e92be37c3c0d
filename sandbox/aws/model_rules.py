"""What AWS returns that the model's shapes say only in words: members returned only when asked, and members
returned always though the shape marks them optional.

- Conditional members are read from botocore's own documentation of the member: "This field is only included
  when <code>IncludeNodeLogicalIds</code> is set to <code>True</code>" makes ``NodeLogicalId`` a member an answer
  carries only when the request set that flag (one rule for every member the models document so, no table).
- Members always returned are the ones AWS returns for every item though the shape leaves them optional; the
  portal relies on them, so the emulation must return them. They are listed in :data:`ALWAYS_RETURNED` with
  the reason.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

from sandbox.aws.model_checks import Problem

_ONLY_WHEN = re.compile(r"only (?:included|returned)[^.]*?when\s+<code>(\w+)</code>\s+is set to\s+<code>true</code>",
                        re.IGNORECASE)

# (service, shape) -> members AWS returns in every instance of the shape.
ALWAYS_RETURNED: dict[tuple[str, str], tuple[str, ...]] = {
    # Every node with an instance has a private DNS name; ListClusterNodes' summaries carry it, which is why the
    # portal needs no DescribeClusterNode per node to learn the hostnames.
    ("sagemaker", "ClusterNodeSummary"): ("PrivateDnsHostname",),
}


@functools.lru_cache(maxsize=4096)
def condition(documentation: str) -> str | None:
    """The input flag a member's documentation says it depends on, or None."""
    match = _ONLY_WHEN.search(documentation or "")
    return match.group(1) if match else None


def _walk(shape: Any, value: Any, path: str) -> Iterator[tuple[Any, dict, str]]:
    """Every (structure shape, value, path) in an answer."""
    if shape is None or value is None:
        return
    if shape.type_name == "structure" and isinstance(value, dict):
        yield shape, value, path
        for name, member in shape.members.items():
            if name in value:
                yield from _walk(member, value[name], f"{path}.{name}" if path else name)
    elif shape.type_name == "list" and isinstance(value, list):
        for index, item in enumerate(value, start=1):
            yield from _walk(shape.member, item, f"{path}.{index}")
    elif shape.type_name == "map" and isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(shape.value, item, f"{path}.{key}")


def broken(service: str, operation: Any, params: dict, answer: dict) -> list[Problem]:
    """The rules above that ``answer`` (to a request with ``params``) breaks."""
    found = []
    inputs = operation.input_shape.members if operation.input_shape is not None else {}
    for shape, value, path in _walk(operation.output_shape, answer, ""):
        for name in ALWAYS_RETURNED.get((service, shape.name), ()):
            if value.get(name) in (None, ""):
                found.append(Problem(f"{path}.{name}" if path else name, "required",
                                     "Member is returned by AWS for every item"))
        for name, member in shape.members.items():
            flag = condition(member.documentation)
            if flag and flag in inputs and name in value and params.get(flag) is not True:
                found.append(Problem(f"{path}.{name}" if path else name, "conditional",
                                     f"Member is only returned when {flag} is True", value[name]))
    return found
