"""The shape of the code, checked: no import cycle among the project's modules, no module over 500 lines outside
the migrations and the two parsers, and no function-level import of the project's own modules without a reason.

``lint-imports`` checks the layers; these are the rules it cannot state (docs/DEVELOPING.md, "Layers").
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("portal", "workloads", "clusters")
# Parsers of published formats: one grammar each, read top to bottom, longer by nature.
PARSERS = {"clusters/health/readers/nccl.py", "clusters/health/readers/exposition.py"}
MAX_LINES = 500


def _modules() -> list[Path]:
    return sorted(
        path for package in PACKAGES for path in (ROOT / package).rglob("*.py") if "migrations" not in path.parts
    )


def cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


class _Graph:
    """A tiny stand-in graph, to show the cycle finder finds what it should."""

    def __init__(self, edges: dict[str, set[str]]):
        self.edges = edges
        self.modules = set(edges) | {m for targets in edges.values() for m in targets}

    def find_modules_directly_imported_by(self, module: str) -> set[str]:
        return self.edges.get(module, set())


def test_the_cycle_finder_finds_cycles():
    graph = _Graph({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e2"}, "e2": set()})
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles(_Graph({"a": {"b"}, "b": set()})) == []


@pytest.fixture(scope="module")
def graph():
    sys.path.insert(0, str(ROOT))
    try:
        # Function-level and TYPE_CHECKING imports count: a cycle is a cycle wherever its import sits.
        return grimp.build_graph(*PACKAGES, include_external_packages=False)
    finally:
        sys.path.remove(str(ROOT))


def test_no_import_cycle(graph):
    assert cycles(graph) == []


def test_no_module_over_500_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in _modules()
        if (n := len(path.read_text().splitlines())) > MAX_LINES and str(path.relative_to(ROOT)) not in PARSERS
    }
    assert long == {}


def _unexplained_imports(source: str) -> list[int]:
    """Line numbers of function-level imports of the project's modules with no comment on the line or the one
    above (``AppConfig.ready()`` blocks: one comment over the block)."""
    lines = source.splitlines()
    found = []
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        block_explained = False
        for node in ast.walk(func):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
            own = (isinstance(node, ast.ImportFrom) and node.level > 0) or (module or "").split(".")[0] in PACKAGES
            if not own:
                continue
            here, above = lines[node.lineno - 1], lines[node.lineno - 2] if node.lineno > 1 else ""
            explained = "#" in here or above.strip().startswith("#")
            if func.name == "ready" and (explained or block_explained):
                block_explained = True
                continue
            if not explained:
                found.append(node.lineno)
    return found


def test_the_import_rule_sees_an_unexplained_import():
    assert _unexplained_imports("def f():\n    from portal import models\n") == [2]
    assert _unexplained_imports("def f():\n    # deferred: closes a cycle\n    from portal import models\n") == []
    assert _unexplained_imports("def f():\n    import json\n") == []


def test_function_level_imports_of_the_project_say_why():
    found = {
        str(path.relative_to(ROOT)): lines
        for path in _modules()
        if (lines := _unexplained_imports(path.read_text()))
    }
    assert found == {}
