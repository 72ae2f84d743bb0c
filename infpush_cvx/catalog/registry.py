"""Which solver solves which catalog problem: the one table every entry point reads.

Project solvers. A catalog formulation maps to one solver module ``infpush_cvx.solvers.<module>``
(:data:`MODULES`); its methods are the module's own ``METHODS`` (by penalty for the Infinite
Push) less ``"cvxpy"``, which is the CVXPY backend and runs as a CVXPY solver. A project solver is
named by its label ``"<module>.<method>"`` (``"infinite_push.fista"``). The CVXPY ``form``
(compact or direct) does not exist for them, so they run on the compact (or form-less) problems
only, never twice on the same optimisation problem; the duals are re-solved through their primal
by ``reference verify`` only (:data:`DUALS`, :data:`CERTIFIED`). :func:`solve` is how each
module's function is called with a catalog problem's data, lambda and options.

CVXPY solvers. What each can take is the backend's
:func:`~infpush_cvx.solvers.engines.cvxpy_backend.run_classes` (CVXPY's description of its
interfaces, less the ``EXCLUDED`` exceptions); :func:`cvxpy_solvers_for` applies it to a
catalog problem. Read by the benchmark runner (and so the main job), ``infpush-cvx solve``,
``reference verify``, the catalog tests and the rankers (:func:`module_methods`).
"""

from __future__ import annotations

import importlib
import inspect

#: The solver module of each primal catalog formulation.
MODULES = {"infinite_push": "infinite_push", "ranksvm": "ranksvm", "rank2plan_lp": "rank2plan",
           "pnorm_push": "pnorm_push", "toppush": "toppush",
           "squared_hinge_ranksvm": "squared_hinge_ranksvm"}
#: The solver function of each module (``svmmap`` has no catalog formulation: the rankers' only).
FUNCTIONS = {"infinite_push": "infinite_push", "ranksvm": "ranksvm", "rank2plan": "rank2plan_lp",
             "pnorm_push": "pnorm_push", "toppush": "toppush", "svmmap": "svmmap",
             "squared_hinge_ranksvm": "squared_hinge_ranksvm"}
#: The dual formulations and the primal each is re-solved through (same scaling, l2 penalty).
DUALS = {"infinite_push_dual": "infinite_push", "ranksvm_dual": "ranksvm"}
#: The certified method of each module: the one ``reference verify`` re-solves stored values with.
CERTIFIED = {"infinite_push": "working_set", "ranksvm": "smoothing_newton", "rank2plan": "ccg",
             "pnorm_push": "newton", "toppush": "interior_point", "squared_hinge_ranksvm": "newton"}
#: Keyword arguments :func:`solve` always sets (from the problem or the task).
_SET = ("method", "tol", "time_limit", "penalty", "scaling", "lam")


def module_methods(module: str, penalty: str = "l2") -> tuple:
    """The project methods of ``infpush_cvx.solvers.<module>`` (its ``METHODS``, those of
    ``penalty`` where they depend on it), less ``"cvxpy"``; ImportError when it cannot be
    imported."""
    methods = importlib.import_module(f"infpush_cvx.solvers.{module}").METHODS
    methods = methods[penalty] if isinstance(methods, dict) else methods
    return tuple(m for m in methods if m != "cvxpy")


def methods(spec) -> list[str]:
    """The labels ``"<module>.<method>"`` of the project solvers of a catalog ProblemSpec (none for
    a dual or a direct-form problem)."""
    module = MODULES.get(spec.formulation)
    if module is None or spec.options.get("form", "compact") != "compact":
        return []
    return [f"{module}.{m}" for m in module_methods(module, spec.options.get("penalty", "l2"))]


def names() -> set[str]:
    """Every name that selects project solvers: a label ``"<module>.<method>"``, a bare method
    name (``"fista"``: every module's method of that name) or a module name (``"rank2plan"``:
    all its methods)."""
    labels = {f"{module}.{m}" for module in MODULES.values()
              for penalty in ("l2", "l1") for m in module_methods(module, penalty)}
    return labels | {part for label in labels for part in label.split(".")}


def check_names(selection) -> tuple:
    """``selection`` as a tuple after checking that each name selects project solvers
    (:func:`names`); ValueError naming the first unknown one and listing the valid."""
    selection = tuple(selection or ())
    known = names()
    for name in selection:
        if name not in known:
            raise ValueError(f"unknown project solver method {name!r}; expected one of "
                             f"{sorted(known)}")
    return selection


def selects(selection, label: str) -> bool:
    """Whether the names ``selection`` (see :func:`names`) select the project solver ``label``."""
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


def function(module: str):
    """The solver function of ``module`` (:data:`FUNCTIONS`); ValueError for another name."""
    if module not in FUNCTIONS:
        raise ValueError(f"unknown project solver module {module!r}; expected one of "
                         f"{sorted(FUNCTIONS)}")
    return getattr(importlib.import_module(f"infpush_cvx.solvers.{module}"), FUNCTIONS[module])


def options(label: str, *, tol: float = 1e-6, time_limit: float | None = None) -> dict:
    """The keyword arguments the project solver ``label`` is called with besides the data and the
    problem's own (``method``, ``tol``, ``time_limit`` when given: the solver's own soft limit)."""
    out = {"method": label.partition(".")[2], "tol": tol}
    if time_limit is not None:
        out["time_limit"] = float(time_limit)
    return out


def defaults(label: str) -> dict:
    """The defaults of the solver function behind ``label`` for the keyword arguments
    :func:`solve` leaves to it (``max_iter``, ``warm_start``, ...), as plain values."""
    out = {}
    for name, param in inspect.signature(function(label.partition(".")[0])).parameters.items():
        if name not in _SET and param.default is not inspect.Parameter.empty and \
                param.default.__class__.__module__ == "builtins":
            out[name] = param.default
    return out


def solve(spec, label: str, data, *, tol: float = 1e-6, time_limit: float | None = None,
          **extra):
    """The :class:`~infpush_cvx.solvers.result.SolverResult` of the project solver ``label`` on
    the catalog problem ``spec`` (a dual: on its primal) with instance ``data``; ``extra``
    keyword arguments go to the solver function as they are (``warm_start``, ``max_iter``)."""
    module = label.partition(".")[0]
    solver = function(module)
    if module not in MODULES.values():
        raise ValueError(f"project solver {label!r} solves no catalog problem")
    kwargs = {**options(label, tol=tol, time_limit=time_limit), **extra}
    if module == "rank2plan":
        return solver(data, lam=spec.lam, **kwargs)
    if module in ("infinite_push", "ranksvm", "squared_hinge_ranksvm"):
        from ..data.kernels import kernel_options
        kwargs.update(scaling=spec.options.get("scaling", "paper"),
                      **kernel_options(spec.options))  # a kernel problem: the RKHS problem
    if module == "infinite_push":
        kwargs["penalty"] = spec.options.get("penalty", "l2")  # a dual's primal: l2
    if module in ("pnorm_push", "toppush"):
        name = "p" if module == "pnorm_push" else "loss"
        kwargs[name] = spec.options[name]
    return solver(data, spec.lam, **kwargs)  # the data container first, as every solver takes


def certified_label(spec) -> str:
    """The certified project solver of a catalog problem (of its primal, for a dual)."""
    module = MODULES.get(spec.formulation) or DUALS[spec.formulation]
    return f"{module}.{CERTIFIED[module]}"
