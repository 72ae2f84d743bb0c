"""The main job: solve catalog problems with every installed CVXPY solver and compare.

One row per (problem, solver): status, objective, stored value, relative error, the solver's
tolerance, whether they agree, compile and solve times. A solver that fails is a row with its
status, never a crash of the run.
"""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import pandas as pd

from . import catalog as _catalog
from . import cvxpy_solvers
from .reference import load_reference

COLUMNS = ["problem", "formulation", "scaling", "form", "solver", "status", "objective",
           "reference", "rel_error", "rtol", "agrees", "compile_time", "setup_time",
           "solve_time", "iterations"]


def solve_row(problem_id: str, solver: str) -> dict:
    """Solve one catalog problem with one solver and compare with its stored value."""
    spec = _catalog.get(problem_id)
    solver_spec = cvxpy_solvers.SOLVERS[solver]
    ref = load_reference(problem_id)
    row = {"problem": problem_id, "formulation": spec.formulation, "scaling": spec.scaling,
           "form": spec.options.get("form", ""), "solver": solver,
           "reference": None if ref is None else ref["opt_val"], "rtol": solver_spec.rtol}
    problem = spec.build()
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # cvxpy's bound propagation (inf*0)
            problem.solve(solver=solver, **solver_spec.options)
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


def run(ids=None, solvers=None, *, progress: bool = True) -> pd.DataFrame:
    """Every problem (default: the whole catalog) x every solver that handles its class."""
    ids = _catalog.problem_ids() if ids is None else list(ids)
    solvers = cvxpy_solvers.installed() if solvers is None else \
        [cvxpy_solvers.spec(s).name for s in solvers]
    jobs = [(pid, s) for pid in ids for s in solvers
            if _catalog.get(pid).problem_class in cvxpy_solvers.SOLVERS[s].classes]
    if progress:
        from tqdm.auto import tqdm
        jobs = tqdm(jobs, desc="solving", unit="solve")
    rows = []
    for pid, solver in jobs:
        if progress:
            jobs.set_postfix_str(f"{pid} / {solver}", refresh=False)
        rows.append(solve_row(pid, solver))
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
        })
