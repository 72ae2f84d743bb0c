"""The main job: solve catalog problems with every installed solver and compare.

Every installed CVXPY solver, and the project's own certified solvers (``CHECK_METHODS``), on
each catalog problem. One row per (problem, solver): status, objective, stored value, relative
error, the solver's tolerance, whether they agree, compile/setup/solve times, iterations and,
for the project's solvers, the certified relative duality gap. A solver that fails is a row with
its status, never a crash of the run.
"""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import pandas as pd

from . import catalog as _catalog
from . import cvxpy_solvers
from ._validation import check_time_limit
from .reference import load_reference

COLUMNS = ["problem", "formulation", "scaling", "form", "solver", "status", "objective",
           "reference", "rel_error", "rtol", "agrees", "compile_time", "setup_time",
           "solve_time", "iterations", "gap"]

#: Project solver methods the main job runs: the certified ones, which must reach the stored
#: value. The papers' algorithms (``paper``, ``admm``) stop at an iteration budget; they run in
#: ``infpush-cvx bench``.
CHECK_METHODS = ("working_set", "smoothing_newton", "fista", "ccg")

#: Statuses of a successful solve, CVXPY's and the project's.
SUCCESS = ("optimal", "degenerate_optimal")


def solve_row(problem_id: str, solver: str, *, time_limit: float | None = None) -> dict:
    """Solve one catalog problem with one CVXPY solver and compare with its stored value.

    ``time_limit`` (seconds) goes to the solver's own time-limit option (ECOS has none). A solver
    that is not run on the problem's class (HiGHS on a QP) is a ValueError, before any solve."""
    spec = _catalog.get(problem_id)
    solver_spec = cvxpy_solvers.check_handles(solver, spec.problem_class, problem_id)
    solver = solver_spec.name
    ref = load_reference(problem_id)
    row = {"problem": problem_id, "formulation": spec.formulation, "scaling": spec.scaling,
           "form": spec.options.get("form", ""), "solver": solver,
           "reference": None if ref is None else ref["opt_val"], "rtol": solver_spec.rtol}
    problem = spec.build()
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # cvxpy's bound propagation (inf*0)
            problem.solve(solver=solver, **solver_spec.solve_options(time_limit))
        status, value = problem.status, problem.value
    except cp.error.SolverError as exc:
        status, value = f"solver_error: {str(exc).splitlines()[0][:80]}", None
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
               iterations=iterations)
    return row


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
    return []


def native_names() -> set[str]:
    """Every name that selects project solvers: a label ``"<module>.<method>"``, a bare method
    name (``"fista"``, every module's method of that name) or a module name (``"rank2plan"``,
    all its methods)."""
    from .solvers.infinite_push import METHODS as ip
    from .solvers.rank2plan import METHODS as r2p
    from .solvers.ranksvm import METHODS as rs
    labels = {f"infinite_push.{m}" for ms in ip.values() for m in ms}
    labels |= {f"ranksvm.{m}" for m in rs} | {f"rank2plan.{m}" for m in r2p if m != "cvxpy"}
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


def native_row(problem_id: str, solver: str, *, tol: float = 1e-6,
               time_limit: float | None = None) -> dict:
    """Solve one catalog problem with a project solver (``"<module>.<method>"``, e.g.
    ``"infinite_push.fista"``) and compare with its stored value.

    ``setup_time`` is fetching the instance and stored value; ``solve_time`` the solver's own."""
    spec = _catalog.get(problem_id)
    module, _, method = solver.partition(".")
    t0 = time.perf_counter()
    data = _catalog.instance_data(spec.instance)
    ref = load_reference(problem_id)
    setup_time = time.perf_counter() - t0
    kwargs = {"method": method, "tol": tol}
    if time_limit is not None:
        kwargs["time_limit"] = float(time_limit)  # the solver's own soft limit
    if module == "infinite_push":
        from .solvers.infinite_push import infinite_push
        res = infinite_push(data.Xp, data.Xn, spec.lam, penalty=spec.options["penalty"],
                            scaling=spec.scaling, **kwargs)
    elif module == "ranksvm":
        from .solvers.ranksvm import rank_svm
        res = rank_svm(data.Xp, data.Xn, spec.lam, scaling=spec.scaling, **kwargs)
    elif module == "rank2plan":
        from .solvers.rank2plan import rank2plan_lp
        res = rank2plan_lp(data, lam=spec.lam, **kwargs)
    else:
        raise ValueError(f"unknown project solver {solver!r}")
    reference = None if ref is None else ref["opt_val"]
    rel = None if reference is None else cvxpy_solvers.relative_error(res.objective, reference)
    rtol = native_rtol(tol)
    return {"problem": problem_id, "formulation": spec.formulation, "scaling": spec.scaling,
            "form": spec.options.get("form", ""), "solver": solver, "status": res.status,
            "objective": float(res.objective), "reference": reference, "rel_error": rel,
            "rtol": rtol, "agrees": bool(res.status in SUCCESS and rel is not None
                                         and rel <= rtol),
            "compile_time": None, "setup_time": setup_time, "solve_time": res.time,
            "iterations": res.iterations, "gap": res.gap}


def run(ids=None, solvers=None, native=CHECK_METHODS, *, progress: bool = True,
        tier: str = _catalog.DEFAULT_TIER, time_limit: float | None = None) -> pd.DataFrame:
    """Every problem (default: the catalog's ``tier``, "core"; "all" for every tier) x every
    solver that handles it.

    ``solvers``: CVXPY solver names (default: every installed one); ``native``: project solver
    methods (``"fista"``), labels (``"infinite_push.fista"``) or modules (``"ranksvm"``),
    default ``CHECK_METHODS``; ``()`` for none. ``time_limit``: seconds per solve, given to each
    solver as its own limit (ECOS has none)."""
    ids = _catalog.problem_ids(tier=tier) if ids is None else list(ids)
    solvers = cvxpy_solvers.installed() if solvers is None else \
        [cvxpy_solvers.spec(s).name for s in solvers]
    native = check_native_names(native)
    time_limit = check_time_limit(time_limit)
    jobs = []
    for pid in ids:
        spec = _catalog.get(pid)
        jobs += [(pid, s, False) for s in solvers
                 if cvxpy_solvers.SOLVERS[s].handles(spec.problem_class)]
        jobs += [(pid, label, True) for label in native_methods(spec) if selects(native, label)]
    if progress:
        from tqdm.auto import tqdm
        jobs = tqdm(jobs, desc="solving", unit="solve")
    rows = []
    for pid, solver, is_native in jobs:
        if progress:
            jobs.set_postfix_str(f"{pid} / {solver}", refresh=False)
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
