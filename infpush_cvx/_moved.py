"""Old names, kept for one release: the module paths of the flat 0.1 layout, and renamed functions.

The package is arranged by layer (data -> formulations -> prox -> solvers -> evaluation ->
catalog -> benchmarking -> CLI). ``import infpush_cvx.rankers`` (or any module below an old path)
still works: it warns with a ``DeprecationWarning`` that names the new path and gives the very
module object found there (``infpush_cvx.evaluation.rankers``), so a ``monkeypatch`` on either
name reaches the same code. ``python -m infpush_cvx.experiments`` runs the moved ``__main__``.
A renamed function keeps its old name through :func:`deprecated_alias`.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: Old module path below ``infpush_cvx`` -> its new path.
MOVED = {
    "labels": "data.labels", "generators": "data.generators", "datasets": "data.datasets",
    "reductions": "data.reductions", "degeneracy": "data.degeneracy", "kernels": "data.kernels",
    "scaling": "formulations.scaling", "objectives": "formulations.objectives",
    "metrics": "evaluation.metrics", "rankers": "evaluation.rankers",
    "ranker_cv": "evaluation.ranker_cv", "online": "evaluation.online",
    "experiments": "evaluation.experiments", "compare": "benchmarking.compare",
    "reference": "catalog.reference", "cvxpy_solvers": "catalog.cvxpy_solvers",
    # the factory's modules are private: their public names are the package's ``*_problem``
    **{f"formulations.{m}": f"formulations._{m}"
       for m in ("infinite_push", "duals", "pnorm_push", "rank2plan", "toppush", "svmmap")},
}


def new_path(name: str) -> str | None:
    """The new absolute path of the old module path ``name``, or None when it did not move."""
    head, _, rest = name.partition(".")
    if head != "infpush_cvx":
        return None
    for old, new in MOVED.items():
        if rest == old or rest.startswith(old + "."):
            return f"infpush_cvx.{new}{rest[len(old):]}"
    return None


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path and loads it as the module at its new path (see the module docstring)."""

    def find_spec(self, fullname, path=None, target=None):
        new = new_path(fullname)
        if new is None:
            return None
        real = importlib.util.find_spec(new)
        if real is None:
            return None
        if fullname.endswith(".__main__"):  # python -m <old path>: run the moved file
            return importlib.util.spec_from_file_location(fullname, real.origin)
        return importlib.util.spec_from_loader(
            fullname, self, is_package=real.submodule_search_locations is not None)

    def create_module(self, spec):
        new = new_path(spec.name)
        warnings.warn(f"{spec.name} is now {new}; the old module path will be removed in the "
                      f"next release", DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module):
        pass  # the module at the new path is already executed


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedModuleFinder())


def deprecated_alias(func, old: str):
    """``func`` under its old name ``old``, for one release: a call warns with a
    ``DeprecationWarning`` at the caller, then calls ``func``."""
    @functools.wraps(func)
    def alias(*args, **kwargs):
        warnings.warn(f"{old} is now {func.__name__}; the old name will be removed in the next "
                      f"release", DeprecationWarning, stacklevel=2)
        return func(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"Deprecated name of :func:`{func.__module__}.{func.__name__}` (one release)."
    return alias
