"""The layering the import contracts enforce, and the one access table, as the code states them."""
import ast
import importlib
import importlib.util
import pkgutil
import tomllib
from collections import Counter
from pathlib import Path

from django.apps import apps

import portal
from portal.core import access

ROOT = Path(__file__).resolve().parents[2]
# What sits at the top of ``portal`` beside its layers: the project's settings, URLs, WSGI and Celery application.
PORTAL_TOP = {"core", "engagement", "review", "settings", "urls", "wsgi", "celery"}


def _contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


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


def test_portal_holds_its_layers_and_the_project_only():
    """A module added at the top of ``portal`` would sit in no layer: it belongs in ``portal.core`` or above."""
    assert {m.name for m in pkgutil.iter_modules(portal.__path__)} == PORTAL_TOP


def test_every_layers_contract_names_packages_only():
    layered = [c for c in _contracts() if c["type"] == "layers"]
    assert {tuple(c.get("containers", ())) for c in layered} >= {(), ("clusters",), ("clusters.health",)}
    for contract in layered:
        for layer in contract["layers"]:
            for name in layer.replace("|", ":").split(":"):
                for container in contract.get("containers") or [""]:
                    dotted = f"{container}.{name.strip()}".lstrip(".")
                    module = importlib.import_module(dotted)
                    assert hasattr(module, "__path__"), f"{dotted} is a module, not a package"


def test_every_forbidden_contract_names_packages_only():
    """A forbidden contract names packages (what a path says it may import), not modules one by one (the project's
    URL configuration is a package for that reason)."""
    for contract in (c for c in _contracts() if c["type"] == "forbidden"):
        for dotted in [*contract["source_modules"], *contract["forbidden_modules"]]:
            spec = importlib.util.find_spec(dotted)
            assert spec is not None, f"{contract['name']}: {dotted} does not exist"
            assert spec.submodule_search_locations is not None, \
                f"{contract['name']}: {dotted} is a module, not a package"


def test_workloads_top_modules_leave_the_interactions_desk_alone():
    """The contract on the interactions desk names workloads' packages; its modules at the top are checked here."""
    offenders = [path.name for path in (ROOT / "workloads").glob("*.py")
                 if "workloads.interactions.desk" in path.read_text()]
    assert offenders == []


def test_the_health_area_keeps_a_dozen_modules_at_its_top():
    from clusters import health

    modules = [m.name for m in pkgutil.iter_modules(health.__path__) if not m.ispkg]
    assert len(modules) <= 12, modules


def test_health_reads_stall_thresholds_from_accounting():
    """Accounting sits above health and registers its reader of the stall window; without it a stall check fails."""
    from clusters.accounting import thresholds
    from clusters.health.faults import stalls

    assert stalls.STALL_MINUTES.get() is thresholds.stall_minutes


def test_every_forbidden_contract_counts_indirect_imports():
    assert all(c.get("allow_indirect_imports") is False for c in _contracts() if c["type"] == "forbidden")


def test_roles_are_read_through_the_public_api():
    """``access._roles`` is the policy's cache; other modules ask ``roles_of``/``led_organizations``."""
    readers = [str(path.relative_to(ROOT)) for package in ("portal", "workloads", "clusters")
               for path in (ROOT / package).rglob("*.py") if "access._roles" in path.read_text()]
    assert readers == []
