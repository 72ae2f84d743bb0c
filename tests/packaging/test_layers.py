"""The layers hold: the import-linter contracts of pyproject.toml, and no import circle.

docs/architecture.md gives the layers (data -> formulations -> prox -> solvers -> evaluation ->
catalog -> benchmarking -> CLI); ``lint-imports`` fails on an import against them. An import
circle between two modules (even through imports inside functions) is refused as well: each
module must be readable, and testable, before the ones that use it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

grimp = pytest.importorskip("grimp", reason="import-linter (the test extra) is not installed")


def test_the_layer_contracts_hold():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint is not None, "lint-imports (import-linter, in the test extra) is not installed"
    out = subprocess.run([lint, str(ROOT / "pyproject.toml")], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def circles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(
                        child)))))
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


def test_circles_are_found():
    class Graph:
        modules = {"a", "b", "c", "d"}
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, module):
            return self.edges.get(module, set())
    assert circles(Graph()) == [["a", "b", "c"]]


def test_no_import_circle():
    graph = grimp.build_graph("infpush_cvx", exclude_type_checking_imports=True)
    assert circles(graph) == []
