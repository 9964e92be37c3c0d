"""Evaluate a template fragment the way CloudFormation would, from parameter values.

The portal prints a cluster's ParallelCluster configuration; the only way to print *exactly* what
the stack deploys is to evaluate the blueprint's own ``ClusterConfiguration`` with the stack's
parameters, rather than to rebuild it in Python and hope the two stay alike. Conditions and the
intrinsics the blueprints use (``Ref``, ``Fn::If``, ``Fn::Equals``/``Not``/``And``/``Or``,
``Fn::Sub``, ``Fn::Join``, ``Fn::Select``, ``Fn::Split``) are evaluated; ``AWS::NoValue`` removes
the key or list item as CloudFormation does. A value that is not known yet (an output of a stack
that does not exist) is kept as a visible ``<placeholder>`` supplied by the caller.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_NO_VALUE = object()
_SUB_VARIABLE = re.compile(r"\$\{([^}!]+)\}")


class Unresolvable(ValueError):
    """An intrinsic the resolver cannot evaluate offline (``Fn::GetAtt`` of a resource, ``Fn::ImportValue``)."""


class Resolver:
    def __init__(self, template: Mapping[str, Any], values: Mapping[str, Any], pseudo: Mapping[str, str]):
        self.template = template
        self.values = {**{f"AWS::{k}": v for k, v in pseudo.items()}, **values}
        self.values.setdefault("AWS::Partition", "aws")
        self.values.setdefault("AWS::URLSuffix", "amazonaws.com")
        self._conditions: dict[str, bool] = {}

    def condition(self, name: str) -> bool:
        if name not in self._conditions:
            definition = (self.template.get("Conditions") or {}).get(name)
            if definition is None:
                raise Unresolvable(f"unknown condition {name}")
            self._conditions[name] = bool(self.resolve(definition))
        return self._conditions[name]

    def _ref(self, name: str) -> Any:
        if name == "AWS::NoValue":
            return _NO_VALUE
        if name in self.values:
            return self.values[name]
        raise Unresolvable(f"Ref {name}")

    def _sub(self, args: Any) -> str:
        text, extra = (args, {}) if isinstance(args, str) else (args[0], {k: self.resolve(v) for k, v in args[1].items()})

        def variable(match: re.Match) -> str:
            name = match.group(1)
            if name in extra:
                return str(extra[name])
            return str(self._ref(name))

        return _SUB_VARIABLE.sub(variable, text)

    def resolve(self, node: Any) -> Any:
        if isinstance(node, list):
            items = [self.resolve(item) for item in node]
            return [item for item in items if item is not _NO_VALUE]
        if not isinstance(node, Mapping):
            return node
        if len(node) == 1:
            (key, args), = node.items()
            if key == "Ref":
                return self._ref(args)
            if key == "Condition":
                return self.condition(args)
            if key == "Fn::If":
                name, when_true, when_false = args
                return self.resolve(when_true if self.condition(name) else when_false)
            if key == "Fn::Equals":
                left, right = (self.resolve(a) for a in args)
                return str(left) == str(right)
            if key == "Fn::Not":
                return not self.resolve(args[0])
            if key == "Fn::And":
                return all(self.resolve(a) for a in args)
            if key == "Fn::Or":
                return any(self.resolve(a) for a in args)
            if key == "Fn::Sub":
                return self._sub(args)
            if key == "Fn::Join":
                separator, items = args
                return separator.join(str(i) for i in self.resolve(items))
            if key == "Fn::Select":
                index, items = args
                return self.resolve(items)[int(self.resolve(index))]
            if key == "Fn::Split":
                separator, text = args
                return str(self.resolve(text)).split(separator)
            if key.startswith("Fn::"):
                raise Unresolvable(key)
        resolved = {k: self.resolve(v) for k, v in node.items()}
        return {k: v for k, v in resolved.items() if v is not _NO_VALUE}


def resolve(template: Mapping[str, Any], fragment: Any, values: Mapping[str, str],
            pseudo: Mapping[str, str] | None = None) -> Any:
    """``fragment`` of ``template`` evaluated with ``values`` (parameter name → text).

    Parameters missing from ``values`` take the template's default; one without a default raises
    :class:`Unresolvable` unless the caller put a placeholder in ``values``.
    """
    specs = template.get("Parameters") or {}
    merged = {name: str(spec["Default"]) for name, spec in specs.items() if "Default" in spec}
    merged.update({k: str(v) for k, v in values.items()})
    for name, spec in specs.items():  # numbers read as numbers, as ParallelCluster reads them
        if spec.get("Type") == "Number" and re.fullmatch(r"-?\d+", merged.get(name, "")):
            merged[name] = int(merged[name])
    return Resolver(template, merged, pseudo or {}).resolve(fragment)
