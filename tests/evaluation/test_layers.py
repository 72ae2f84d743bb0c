"""Evaluation's place in the layers (docs/architecture.md: ... solvers -> evaluation -> catalog ->
benchmarking -> CLI): no module of infpush_cvx.evaluation imports the benchmarking package or
the CLI, not even inside a function, and its modules import each other without a circle.
(The catalog's registry is the one import upwards left, until the registry is rewritten.)
"""

import ast
from pathlib import Path

import infpush_cvx

PACKAGE = Path(infpush_cvx.__file__).parent
EVALUATION = PACKAGE / "evaluation"
ABOVE = ("infpush_cvx.benchmarking", "infpush_cvx.cli")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set:
    """Every module ``path`` imports (absolute names; ``from a import b`` counts ``a`` and
    ``a.b``, since ``b`` may be a module), at any depth of its code."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _evaluation_modules() -> dict:
    return {_module_name(p): _imports(p) for p in sorted(EVALUATION.rglob("*.py"))}


def test_the_module_reader_sees_relative_and_nested_imports():
    imports = _imports(EVALUATION / "ranker_cv.py")
    assert "infpush_cvx.evaluation.rankers" in imports and "sklearn.base" in imports
    assert "infpush_cvx._validation" in imports  # from .._validation import ...
    assert "infpush_cvx.files" in _imports(EVALUATION / "experiments" / "agarwal.py")  # nested


def test_evaluation_imports_neither_benchmarking_nor_the_cli():
    upwards = {(module, target) for module, imports in _evaluation_modules().items()
               for target in imports if target.startswith(ABOVE)}
    assert not upwards


def test_evaluation_modules_import_each_other_without_a_circle():
    modules = _evaluation_modules()
    graph = {m: {t for t in imports if t in modules and t != m} for m, imports in modules.items()}
    state = {}  # depth-first search: a module still "open" reached again closes a circle

    def visit(m, path):
        state[m] = "open"
        for t in sorted(graph[m]):
            if state.get(t) == "open":
                raise AssertionError("import circle: " + " -> ".join(path + [m, t]))
            if t not in state:
                visit(t, path + [m])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
