"""The layering the import contracts enforce, and the one access table, as the code states them."""
import ast
import pkgutil
import tomllib
from collections import Counter
from pathlib import Path

from django.apps import apps

import portal
from portal import access

ROOT = Path(__file__).resolve().parents[2]
# Children of ``portal`` that are not the core: the apps above it and the root URL configuration.
NOT_CORE = {"portal.review", "portal.engagement", "portal.urls"}


def _contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def _core_modules() -> set[str]:
    return {f"portal.{m.name}" for m in pkgutil.iter_modules(portal.__path__)} - NOT_CORE


def test_policy_is_one_literal_with_each_model_once():
    tree = ast.parse(Path(access.__file__).read_text())
    literals = [node.value for node in tree.body if isinstance(node, ast.AnnAssign)
                and getattr(node.target, "id", None) == "POLICY"]
    assert len(literals) == 1 and isinstance(literals[0], ast.Dict)
    keys = Counter(key.value for key in literals[0].keys)
    assert [key for key, n in keys.items() if n > 1] == []
    later = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assign)
             and any(isinstance(t, ast.Subscript) and getattr(t.value, "id", None) == "POLICY" for t in node.targets)]
    assert later == [], "rules added after the POLICY literal"
    assert set(keys) == set(access.POLICY)


def test_every_rule_names_an_installed_model():
    labels = {m._meta.label_lower for m in apps.get_models()}
    assert sorted(set(access.POLICY) - labels) == []


def test_the_core_layer_lists_every_core_module():
    contracts = _contracts()
    layers = next(c for c in contracts if c["type"] == "layers")
    core = {name.strip() for name in layers["layers"][-1].split(":")}
    assert core == _core_modules()
    forbidden = next(c for c in contracts if c["type"] == "forbidden" and "portal.access" in c["source_modules"])
    assert set(forbidden["source_modules"]) == _core_modules()
    assert set(forbidden["forbidden_modules"]) >= NOT_CORE


def test_every_forbidden_contract_counts_indirect_imports():
    assert all(c.get("allow_indirect_imports") is False for c in _contracts() if c["type"] == "forbidden")
