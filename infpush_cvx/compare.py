"""The main job: solve catalog problems with every installed solver and compare.

The CVXPY solvers of the comparison set (``cvxpy_solvers.comparison_set()``; any other
installed one on request), and the project's own certified solvers (``CHECK_METHODS``), on
each catalog problem. One row per (problem, solver): status, objective, stored value, relative
error, the solver's tolerance, whether they agree, compile/setup/solve times, iterations and,
for the project's solvers, the certified relative duality gap. A solver that fails is a row with
its status, never a crash of the run.
"""

from __future__ import annotations

import logging
import time
import warnings

import cvxpy as cp
import numpy as np
import pandas as pd

from . import catalog as _catalog
from . import cvxpy_solvers
from ._validation import check_time_limit
from .reference import load_reference

log = logging.getLogger(__name__)

COLUMNS = ["problem", "formulation", "scaling", "form", "solver", "status", "objective",
           "reference", "rel_error", "rtol", "agrees", "compile_time", "setup_time",
           "solve_time", "iterations", "gap"]

#: Project solver methods the main job runs: the certified ones, which must reach the stored
#: value. The papers' algorithms (``paper``, ``admm``) stop at an iteration budget; they run in
#: ``infpush-cvx bench``.
CHECK_METHODS = ("working_set", "smoothing_newton", "fista", "ccg", "newton", "interior_point")

#: Statuses of a successful solve, CVXPY's and the project's.
SUCCESS = ("optimal", "degenerate_optimal")


def solve_row(problem_id: str, solver: str, *, time_limit: float | None = None) -> dict:
    """Solve one catalog problem with one CVXPY solver and compare with its stored value.

    ``time_limit`` (seconds) goes to the solver's own time-limit option (``cvxpy_solvers.
    TIME_LIMIT_OPTIONS``; ignored for solvers without one). A solver that is not run on the
    problem's class (HiGHS on a QP) is a ValueError, before any solve.

    Besides the ``COLUMNS``, the row has ``primal_residual`` (the largest violation of any
    constraint by the returned solution, computed by CVXPY from the solution: the same measure
    for every solver; None without a solution), ``solver_primal_residual`` (the solver's own
    report, when its CVXPY interface passes one on) and ``solver_options`` (the keyword
    arguments ``Problem.solve`` was called with)."""
    spec = _catalog.get(problem_id)
    solver_spec = cvxpy_solvers.check_handles(solver, spec.problem_class, problem_id)
    solver = solver_spec.name
    ref = load_reference(problem_id)
    row = {"problem": problem_id, "formulation": spec.formulation, "scaling": spec.scaling,
           "form": spec.options.get("form", ""), "solver": solver,
           "reference": None if ref is None else ref["opt_val"], "rtol": solver_spec.rtol}
    problem = spec.build()
    options = solver_spec.solve_options(time_limit)
    start = time.perf_counter()
    status, value = solve_cvxpy(problem, solver_spec, time_limit)
    wall = time.perf_counter() - start
    compile_time = getattr(problem, "compilation_time", None)
    stats = problem.solver_stats
    solve_time = stats.solve_time if stats is not None and stats.solve_time is not None \
        else (wall - compile_time if compile_time else wall)
    # Not every solver interface reports these (Clarabel and HiGHS leave setup_time unset).
    setup_time = getattr(stats, "setup_time", None)
    iterations = getattr(stats, "num_iters", None)
    rel = cvxpy_solvers.relative_error(value, row["reference"]) if ref is not None else None
    row.update(status=status, objective=None if value is None else float(value),
               rel_error=rel, agrees=(rel is not None and status == cp.OPTIMAL
                                      and rel <= solver_spec.rtol),
               compile_time=compile_time, setup_time=setup_time, solve_time=solve_time,
               iterations=iterations, primal_residual=primal_residual(problem),
               solver_primal_residual=solver_primal_residual(stats), solver_options=options)
    return row


def solve_cvxpy(problem: cp.Problem, solver_spec, time_limit: float | None = None):
    """``(status, value)`` of ``problem`` solved by the CVXPY solver of ``solver_spec`` with its
    comparison options and ``time_limit``; a ``SolverError`` is the status
    ``"solver_error: <first line>"`` with value None. HiGHS's banner is kept quiet."""
    cvxpy_solvers.silence_highs_banner()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # cvxpy's bound propagation (inf*0)
            # "Solution may be inaccurate": the status (optimal_inaccurate) says so in the row
            warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
            problem.solve(solver=solver_spec.name, **solver_spec.solve_options(time_limit))
        return problem.status, problem.value
    except cp.error.SolverError as exc:
        return f"solver_error: {str(exc).splitlines()[0][:80]}", None


def primal_residual(problem: cp.Problem) -> float | None:
    """The largest violation of any constraint of a solved ``problem`` by its solution
    (``max`` over constraints of ``constraint.violation()``), None when there is no solution."""
    worst = 0.0
    for constraint in problem.constraints:
        try:
            violation = constraint.violation()
        except (ValueError, TypeError):  # no value: the solve returned no solution
            return None
        if violation is None:
            return None
        violation = np.asarray(violation, dtype=float)
        if violation.size:
            worst = max(worst, float(np.max(violation)))
    return worst


#: Where CVXPY interfaces leave a solver's own primal residual in ``solver_stats.extra_stats``.
_REPORTED_RESIDUALS = (("info", "res_pri"),               # SCS
                       ("info", "pres"),                  # ECOS
                       ("info", "prim_res"),              # OSQP
                       ("max_primal_infeasibility",))     # HiGHS


def solver_primal_residual(stats) -> float | None:
    """The primal residual the solver itself reported, for the interfaces that pass one on
    (SCS, ECOS, OSQP, HiGHS); None otherwise (Clarabel keeps it to itself)."""
    extra = getattr(stats, "extra_stats", None)
    for path in _REPORTED_RESIDUALS:
        value = extra
        for key in path:
            value = value.get(key) if isinstance(value, dict) else getattr(value, key, None)
            if value is None:
                break
        if value is not None:
            try:
                return float(value)
            except (TypeError, ValueError):
                continue
    return None


def native_methods(spec) -> list[str]:
    """Project solver labels ``"<module>.<method>"`` that solve a catalog ProblemSpec.

    The CVXPY ``form`` (compact or direct) does not exist for them, so they run on the compact
    (or form-less) problems only, never twice on the same optimisation problem."""
    if spec.options.get("form", "compact") != "compact":
        return []
    if spec.formulation == "infinite_push":
        from .solvers.infinite_push import METHODS
        return [f"infinite_push.{m}" for m in METHODS[spec.options["penalty"]]]
    if spec.formulation == "ranksvm":
        from .solvers.ranksvm import METHODS
        return [f"ranksvm.{m}" for m in METHODS]
    if spec.formulation == "rank2plan_lp":
        from .solvers.rank2plan import METHODS
        return [f"rank2plan.{m}" for m in METHODS if m != "cvxpy"]
    if spec.formulation == "pnorm_push":
        from .solvers.pnorm_push import METHODS
        return [f"pnorm_push.{m}" for m in METHODS if m != "cvxpy"]
    if spec.formulation == "toppush":
        from .solvers.toppush import METHODS
        return [f"toppush.{m}" for m in METHODS if m != "cvxpy"]
    return []


def native_names() -> set[str]:
    """Every name that selects project solvers: a label ``"<module>.<method>"``, a bare method
    name (``"fista"``, every module's method of that name) or a module name (``"rank2plan"``,
    all its methods)."""
    from .solvers.infinite_push import METHODS as ip
    from .solvers.pnorm_push import METHODS as pn
    from .solvers.rank2plan import METHODS as r2p
    from .solvers.ranksvm import METHODS as rs
    from .solvers.toppush import METHODS as tp
    labels = {f"infinite_push.{m}" for ms in ip.values() for m in ms}
    labels |= {f"ranksvm.{m}" for m in rs} | {f"rank2plan.{m}" for m in r2p if m != "cvxpy"}
    labels |= {f"pnorm_push.{m}" for m in pn if m != "cvxpy"}
    labels |= {f"toppush.{m}" for m in tp if m != "cvxpy"}
    return labels | {part for label in labels for part in label.split(".")}


def check_native_names(names) -> tuple:
    """``names`` as a tuple after checking that each one selects project solvers
    (:func:`native_names`); ValueError naming the first unknown one and listing the valid."""
    names = tuple(names or ())
    known = native_names()
    for name in names:
        if name not in known:
            raise ValueError(f"unknown project solver method {name!r}; expected one of "
                             f"{sorted(known)}")
    return names


def selects(names, label: str) -> bool:
    """Whether ``names`` (see :func:`native_names`) select the project solver ``label``."""
    module, _, method = label.partition(".")
    return label in names or method in names or module in names


def native_rtol(tol: float) -> float:
    """Agreement tolerance of a certified project solve with target relative gap ``tol``.

    A relative gap ``(P(w) - D) / P(w) <= tol`` bounds ``(P(w) - P*) / P*`` by about ``tol``; the
    factor 2 absorbs the stored value's own error (about 1e-9) and the ratio ``P(w) / P*``.
    """
    return 2.0 * tol


def native_options(solver: str, *, tol: float = 1e-6, time_limit: float | None = None) -> dict:
    """The keyword arguments a project solver label (``"<module>.<method>"``) is called with
    besides the data and lambda (``method``, ``tol``, ``time_limit`` when given)."""
    module, _, method = solver.partition(".")
    options = {"method": method, "tol": tol}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)  # the solver's own soft limit
    return options


#: Keyword arguments :func:`native_solve` always sets (from the problem or the task).
_NATIVE_SET = ("method", "tol", "time_limit", "penalty", "scaling", "lam")


def native_defaults(solver: str) -> dict:
    """The defaults of the project solver function behind ``solver`` for the keyword arguments
    :func:`native_solve` leaves to it (``max_iter``, ``warm_start``, ``options``, ...), as plain
    values."""
    import inspect
    module = solver.partition(".")[0]
    function = _native_function(module)
    out = {}
    for name, param in inspect.signature(function).parameters.items():
        if name not in _NATIVE_SET and param.default is not inspect.Parameter.empty and \
                param.default.__class__.__module__ == "builtins":
            out[name] = param.default
    return out


def _native_function(module: str):
    if module == "infinite_push":
        from .solvers.infinite_push import infinite_push
        return infinite_push
    if module == "ranksvm":
        from .solvers.ranksvm import rank_svm
        return rank_svm
    if module == "rank2plan":
        from .solvers.rank2plan import rank2plan_lp
        return rank2plan_lp
    if module == "pnorm_push":
        from .solvers.pnorm_push import pnorm_push
        return pnorm_push
    if module == "toppush":
        from .solvers.toppush import toppush
        return toppush
    raise ValueError(f"unknown project solver module {module!r}; expected one of "
                     f"['infinite_push', 'pnorm_push', 'rank2plan', 'ranksvm', 'toppush']")


def native_solve(spec, solver: str, data, *, tol: float = 1e-6,
                 time_limit: float | None = None):
    """The :class:`~infpush_cvx.solvers.result.SolverResult` of the project solver ``solver``
    (``"<module>.<method>"``) on the catalog problem ``spec`` with instance ``data``."""
    module = solver.partition(".")[0]
    if module not in ("infinite_push", "ranksvm", "rank2plan", "pnorm_push", "toppush"):
        raise ValueError(f"unknown project solver {solver!r}")
    function = _native_function(module)
    kwargs = native_options(solver, tol=tol, time_limit=time_limit)
    if module in ("infinite_push", "ranksvm"):
        from .kernels import kernel_options
        kwargs.update(kernel_options(spec.options))  # a kernel problem: the RKHS problem
    if module == "infinite_push":
        return function(data.Xp, data.Xn, spec.lam, penalty=spec.options["penalty"],
                        scaling=spec.scaling, **kwargs)
    if module == "ranksvm":
        return function(data.Xp, data.Xn, spec.lam, scaling=spec.scaling, **kwargs)
    if module == "pnorm_push":
        return function(data, lam=spec.lam, p=spec.options["p"], **kwargs)
    if module == "toppush":
        return function(data, None, spec.lam, loss=spec.options["loss"], **kwargs)
    return function(data, lam=spec.lam, **kwargs)


def native_row(problem_id: str, solver: str, *, tol: float = 1e-6,
               time_limit: float | None = None, history: bool = False) -> dict:
    """Solve one catalog problem with a project solver (``"<module>.<method>"``, e.g.
    ``"infinite_push.fista"``) and compare with its stored value.

    ``setup_time`` is fetching the instance and stored value; ``solve_time`` the solver's own.
    With ``history``, the row also has the solver's per-iteration ``history`` (dict of lists)."""
    spec = _catalog.get(problem_id)
    t0 = time.perf_counter()
    data = _catalog.instance_data(spec.instance)
    ref = load_reference(problem_id)
    setup_time = time.perf_counter() - t0
    res = native_solve(spec, solver, data, tol=tol, time_limit=time_limit)
    reference = None if ref is None else ref["opt_val"]
    rel = None if reference is None else cvxpy_solvers.relative_error(res.objective, reference)
    rtol = native_rtol(tol)
    row = {"problem": problem_id, "formulation": spec.formulation, "scaling": spec.scaling,
           "form": spec.options.get("form", ""), "solver": solver, "status": res.status,
           "objective": float(res.objective), "reference": reference, "rel_error": rel,
           "rtol": rtol, "agrees": bool(res.status in SUCCESS and rel is not None
                                        and rel <= rtol),
           "compile_time": None, "setup_time": setup_time, "solve_time": res.time,
           "iterations": res.iterations, "gap": res.gap,
           "solver_options": native_options(solver, tol=tol, time_limit=time_limit)}
    if history:
        row["history"] = res.history
    return row


def run(ids=None, solvers=None, native=CHECK_METHODS, *, progress: bool = True,
        tier: str = _catalog.DEFAULT_TIER, time_limit: float | None = None) -> pd.DataFrame:
    """Every problem (default: the catalog's ``tier``, "core"; "all" for every tier) x every
    solver that handles it.

    ``solvers``: installed CVXPY solver names, ``"all"`` for every one (default: the comparison
    set, ``cvxpy_solvers.comparison_set()``); ``native``: project solver methods (``"fista"``),
    labels (``"infinite_push.fista"``) or modules (``"ranksvm"``), default ``CHECK_METHODS``;
    ``()`` for none. ``time_limit``: seconds per solve, given to each solver as its own limit
    (solvers without one, ECOS, are bounded by their iteration caps only here)."""
    ids = _catalog.problem_ids(tier=tier) if ids is None else list(ids)
    solvers = [cvxpy_solvers.spec(s) for s in cvxpy_solvers.resolve(solvers)]
    native = check_native_names(native)
    time_limit = check_time_limit(time_limit)
    jobs = []
    for pid in ids:
        spec = _catalog.get(pid)
        jobs += [(pid, s.name, False) for s in solvers if s.handles(spec.problem_class)]
        jobs += [(pid, label, True) for label in native_methods(spec) if selects(native, label)]
    log.info("check: %d solves of %d problems", len(jobs), len(ids))
    if progress:
        from tqdm.auto import tqdm
        jobs = tqdm(jobs, desc="solving", unit="solve")
    rows = []
    for pid, solver, is_native in jobs:
        if progress:
            jobs.set_postfix_str(f"{pid} / {solver}", refresh=False)
        log.debug("solving %s with %s", pid, solver)
        if not is_native:
            rows.append(solve_row(pid, solver, time_limit=time_limit))
            continue
        try:
            rows.append(native_row(pid, solver, time_limit=time_limit))
        except Exception as exc:  # a crash is a row with its status, never the end of the run
            rows.append({"problem": pid, "solver": solver, "agrees": False,
                         "status": f"error: {type(exc).__name__}: {exc}"[:120]})
    return pd.DataFrame(rows, columns=COLUMNS)


def format_table(df: pd.DataFrame) -> str:
    with pd.option_context("display.max_rows", None, "display.width", 200):
        return df.to_string(index=False, formatters={
            "objective": lambda v: "" if pd.isna(v) else f"{v:.10g}",
            "reference": lambda v: "" if pd.isna(v) else f"{v:.10g}",
            "rel_error": lambda v: "" if pd.isna(v) else f"{v:.1e}",
            "rtol": "{:.0e}".format,
            "compile_time": lambda v: "" if pd.isna(v) else f"{v:.3f}",
            "setup_time": lambda v: "" if pd.isna(v) else f"{v:.3f}",
            "solve_time": lambda v: "" if pd.isna(v) else f"{v:.3f}",
            "iterations": lambda v: "" if pd.isna(v) else f"{int(v)}",
            "gap": lambda v: "" if pd.isna(v) else f"{v:.1e}",
        })
