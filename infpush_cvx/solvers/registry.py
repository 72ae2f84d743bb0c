"""The models of the package, one registration line each.

A model's package under :mod:`infpush_cvx.solvers` declares its :class:`~.base.Model` as
``MODEL`` (its problem class, its methods, its certified method, the catalog formulations it
answers); listing the package in :data:`MODEL_PACKAGES` is the whole registration. Everything
that asks which methods solve what (the runner, ``reference verify``, the catalog and its tests,
the rankers) asks :func:`models`, so a new model or method appears everywhere by being declared.
"""

from __future__ import annotations

import functools
import importlib

from .base import Model

#: The model packages under infpush_cvx.solvers, each declaring ``MODEL``.
MODEL_PACKAGES = ("infinite_push", "ranksvm", "rank2plan", "pnorm_push", "toppush", "svmmap",
                  "squared_hinge_ranksvm")


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
