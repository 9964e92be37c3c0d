"""Dependencies the linter sees: a lower layer that needs something of a layer above declares a hook
(``portal.core.signals.Hook``) and the upper app provides it in its ``ready()``. Every declared hook is provided once
Django is set up, a hook nobody provided refuses to answer, and no product module looks a model up by another app's
label or sends a task by its name."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from django.apps import apps

from portal.core import signals

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("portal", "workloads", "clusters")


def _product_modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if "migrations" in relative.parts:
                continue
            yield ".".join(relative.with_suffix("").parts).removesuffix(".__init__"), ast.parse(path.read_text())


def _declared_hooks() -> list[str]:
    """``module.NAME`` of every module-level ``NAME = Hook(...)`` in the product's source."""
    found = []
    for module, tree in _product_modules():
        for node in tree.body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and getattr(node.value.func, "id", getattr(node.value.func, "attr", "")) == "Hook"):
                found += [f"{module}.{target.id}" for target in node.targets if isinstance(target, ast.Name)]
    return found


def _app_label(module: str) -> str:
    owners = [config for config in apps.get_app_configs() if module == config.name or module.startswith(f"{config.name}.")]
    return max(owners, key=lambda config: len(config.name)).label


def test_every_declared_hook_is_provided_by_an_installed_app_after_setup():
    declared = _declared_hooks()
    assert len(declared) >= 10, declared
    missing = []
    for dotted in declared:
        module, name = dotted.rsplit(".", 1)
        hook = getattr(importlib.import_module(module), name)
        assert apps.is_installed(apps.get_app_config(hook.provider).name), hook
        if not hook.provided:
            missing.append(repr(hook))
    assert missing == [], f"hooks no app's ready() provided: {missing}"
    assert len({id(hook) for hook in signals.HOOKS}) == len(declared)  # none declared outside a module's top level


def test_the_hooked_tasks_keep_the_names_queued_messages_carry():
    from clusters.health.ingest import pushes
    from clusters.health.validation import service as validation
    from clusters.remediation import services as remediation
    from workloads.interactions import services as interactions

    assert validation.CANCEL.get().name == "clusters.health.tasks.cancel_validation"
    assert validation.KIND.get().task.name == "clusters.health.tasks.run_validation"
    assert pushes.KIND.get().task.name == "clusters.health.tasks.process_push"
    assert remediation.KIND.get().name == "remediation"
    assert interactions.OPEN_REQUESTED_CASE.get().name == interactions.OPEN_REQUESTED_CASE_TASK


def test_a_hook_nobody_provided_refuses_rather_than_answering_nothing():
    hook = signals.Hook("test: nothing provides this", provider="portal")
    try:
        with pytest.raises(signals.Unprovided, match="the portal app provides it in its ready"):
            hook("anything")
        hook.provide(lambda value: value.upper())
        assert hook("anything") == "ANYTHING"
    finally:
        signals.HOOKS.remove(hook)


def test_no_module_looks_up_another_apps_model_or_a_task_by_name():
    by_name = []
    for module, tree in _product_modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in ("send_task", "signature"):
                by_name.append(f"{module}:{node.lineno} {name}")
            elif name == "get_model" and node.args and isinstance(node.args[0], ast.Constant):
                label = str(node.args[0].value).split(".")[0]
                if label != _app_label(module):
                    by_name.append(f"{module}:{node.lineno} get_model({label!r})")
    assert by_name == [], "look-ups by name across apps (declare a hook, provide it in the upper app's ready())"
