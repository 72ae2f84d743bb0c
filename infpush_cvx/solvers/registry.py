"""The models of the package, one registration line each.

A model's package under :mod:`infpush_cvx.solvers` declares its :class:`Model` as
``MODEL`` (its problem class, its methods, its certified method, the catalog formulations it
answers); listing the package in :data:`MODEL_PACKAGES` is the whole registration. Everything
that asks which methods solve what (the runner, ``reference verify``, the catalog and its tests,
the rankers) asks :func:`models`, so a new model or method appears everywhere by being declared.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the models import this module
    from .base import Problem
    from .engines.deadline import Deadline
    from .result import SolverResult

@dataclass(frozen=True)
class Model:
    """A model as the registry knows it: its problem class, its methods (the default first),
    the method that certifies stored values, and the catalog formulations it answers (a dual is
    answered through its primal)."""

    name: str
    problem: type
    methods: tuple
    certified: type
    formulations: tuple = ()

    def __post_init__(self):
        if self.certified not in self.methods:
            raise ValueError(f"model {self.name!r}: its certified method is not one of its "
                             f"methods")

    @property
    def default(self) -> type:
        return self.methods[0]

    def method(self, name: str) -> type:
        """The method class called ``name``; ValueError listing the model's methods."""
        for cls in self.methods:
            if cls.name == name:
                return cls
        raise ValueError(f"method must be one of {[m.name for m in self.methods]} for "
                         f"{self.name}, got {name!r}")

    def solve(self, method: str, problem: Problem, warm_start=None,
              deadline: Deadline | float | None = None, **options) -> SolverResult:
        """Solve ``problem`` by the method called ``method`` built with ``options`` (the
        models' convenience functions): :meth:`Solver.solve`."""
        return self.method(method)(**options).solve(problem, warm_start, deadline)

    def method_names(self, **traits) -> tuple:
        """The names of the methods that accept a problem of ``traits``."""
        return tuple(cls.name for cls in self.methods if cls.accepts(**traits) is None)


#: The model packages under infpush_cvx.solvers, each declaring ``MODEL``.
MODEL_PACKAGES = ("infinite_push", "ranksvm", "rank2plan", "pnorm_push", "toppush", "svmmap",
                  "squared_hinge_ranksvm", "query_ranksvm", "query_infinite_push")


@functools.cache
def models() -> dict[str, Model]:
    """Every registered model by name (imported on first use: the solvers import CVXPY and numba
    late)."""
    out = {}
    for package in MODEL_PACKAGES:
        model = importlib.import_module(f"infpush_cvx.solvers.{package}").MODEL
        out[model.name] = model
    return out


def model(name: str) -> Model:
    """The registered model called ``name``; ValueError listing the known ones."""
    known = models()
    if name not in known:
        raise ValueError(f"unknown model {name!r}; expected one of {sorted(known)}")
    return known[name]


def model_of(formulation: str) -> Model | None:
    """The model that answers the catalog formulation ``formulation`` (None: none does)."""
    for candidate in models().values():
        if formulation in candidate.formulations:
            return candidate
    return None
