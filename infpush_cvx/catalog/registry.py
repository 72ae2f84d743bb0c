"""Which project method solves which catalog problem: the catalog's view of the models.

Each model declares its methods and the catalog formulations it answers
(:mod:`infpush_cvx.solvers.registry`, a :class:`~infpush_cvx.solvers.base.Model` each); this
module reads those declarations for a catalog :class:`~.specs.ProblemSpec`, and keeps no table
of its own. A project method is named by its label ``"<model>.<method>"``
(``"infinite_push.fista"``). The methods run on the compact (or form-less) primal problems
only, never twice on one optimisation problem; a dual is answered through its primal by
``reference verify`` (:func:`certified_label`). A model's ``"cvxpy"`` method is not listed: the
CVXPY solvers run as CVXPY solvers.

CVXPY solvers. What each can take is :func:`.cvxpy_solvers.run_classes`;
:func:`cvxpy_solvers_for` applies it to a catalog problem.
"""

from __future__ import annotations

import dataclasses

from .._validation import check_choice
from ..solvers.registry import model, model_of, models


def traits(spec) -> dict:
    """The traits of a catalog problem a method must handle (:meth:`Solver.accepts`): its
    penalty (the option, else the model's own: Rank2Plan's is l1) and whether it has a kernel."""
    default = getattr(model_of(spec.formulation).problem, "penalty", "l2")
    return {"penalty": spec.options.get("penalty", default),
            "kernel": spec.options.get("kernel") is not None}


def methods(spec) -> list[str]:
    """The labels ``"<model>.<method>"`` of the project methods of a catalog ProblemSpec (none
    for a dual or a direct-form problem)."""
    found = model_of(spec.formulation)
    if found is None or spec.formulation != found.formulations[0] \
            or spec.options.get("form", "compact") != "compact":
        return []
    return [f"{found.name}.{name}" for name in found.method_names(**traits(spec))
            if name != "cvxpy"]


def names() -> set[str]:
    """Every name that selects project methods: a label ``"<model>.<method>"``, a bare method
    name (``"fista"``: every model's method of that name) or a model name (``"rank2plan"``)."""
    labels = {f"{m.name}.{cls.name}" for m in models().values() if m.formulations
              for cls in m.methods if cls.name != "cvxpy"}
    return labels | {part for label in labels for part in label.split(".")}


def check_names(selection) -> tuple:
    """``selection`` as a tuple after checking that each name selects project methods
    (:func:`names`); ValueError naming the first unknown one and listing the valid."""
    selection = tuple(selection or ())
    known = names()
    for name in selection:
        check_choice(name, "project solver method", known)
    return selection


def selects(selection, label: str) -> bool:
    """Whether the names ``selection`` (see :func:`names`) select the project method ``label``."""
    module, _, method = label.partition(".")
    return label in selection or method in selection or module in selection


def cvxpy_solvers_for(spec, solvers) -> list:
    """The :class:`.cvxpy_solvers.SolverSpec` of ``solvers`` (names) that are run on ``spec``'s
    problem class."""
    from . import cvxpy_solvers
    return [s for s in map(cvxpy_solvers.spec, solvers) if s.handles(spec.problem_class)]


def rtol(tol: float) -> float:
    """Agreement tolerance of a certified project solve with target relative gap ``tol``.

    A relative gap ``(P(w) - D) / P(w) <= tol`` bounds ``(P(w) - P*) / P*`` by about ``tol``; the
    factor 2 absorbs the stored value's own error (about 1e-9) and the ratio ``P(w) / P*``.
    """
    return 2.0 * tol


def method_class(label: str) -> type:
    """The method class behind ``label`` (``"<model>.<method>"``); ValueError for another."""
    model_name, _, method = label.partition(".")
    return model(model_name).method(method)


def options(label: str, *, tol: float = 1e-6, time_limit: float | None = None) -> dict:
    """The options the project method ``label`` runs with besides the problem's own (``method``,
    ``tol``, ``time_limit`` when given), for the results table."""
    limit = {} if time_limit is None else {"time_limit": float(time_limit)}
    return {"method": label.partition(".")[2], "tol": tol, **limit}


def defaults(label: str) -> dict:
    """The defaults of the options of the method behind ``label`` that a run leaves to it
    (``max_iter``, its own options), as plain values."""
    return {f.name: f.default for f in dataclasses.fields(method_class(label))
            if f.name not in ("tol", "verbose") and f.default.__class__.__module__ == "builtins"}


def problem(spec, data):
    """The problem object of the catalog problem ``spec`` (a dual: its primal) on ``data``."""
    found = model_of(spec.formulation)
    if found is None:
        raise ValueError(f"no model answers the catalog formulation {spec.formulation!r}")
    return found.problem.from_catalog(spec.formulation, spec.options, spec.lam, data)


def solve(spec, label: str, data, *, tol: float = 1e-6, time_limit: float | None = None,
          warm_start=None, **method_options):
    """The :class:`~infpush_cvx.solvers.result.SolverResult` of the project method ``label`` on
    the catalog problem ``spec`` (a dual: on its primal) with instance ``data``;
    ``method_options`` (``max_iter``...) go to the method."""
    cls = method_class(label)
    if spec.formulation not in model(label.partition(".")[0]).formulations:
        raise ValueError(f"project solver {label!r} does not solve {spec.formulation!r}")
    return cls(tol=tol, **method_options).solve(problem(spec, data), warm_start, time_limit)


def certified_label(spec) -> str:
    """The certified project method of a catalog problem (of its primal, for a dual)."""
    found = model_of(spec.formulation)
    return f"{found.name}.{found.certified.name}"
