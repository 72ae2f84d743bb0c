"""The main job (``infpush-cvx check``, ``make run``): the benchmark runner on the serial executor,
plus an agreement summary.

Every catalog problem (the "core" tier by default) with the CVXPY solvers of the comparison set
(``cvxpy_solvers.comparison_set()``; any other installed one on request) and the project's
certified methods (``CHECK_METHODS``), one task each, made and run by
:mod:`infpush_cvx.benchmarking` (:func:`~infpush_cvx.benchmarking.make_tasks`,
:func:`~infpush_cvx.benchmarking.benchmark` with a :class:`SerialExecutor`: one after the other
in a worker process killed at the time limit, warmed up first, so that no row counts numba's
compilation or a solver's import, :mod:`.warmup`). So its rows are the benchmark's rows
(:data:`infpush_cvx.benchmarking.tasks.COLUMNS`, whose docstring defines the time columns),
made and failed by the same code; a solver that fails is a row with its status, never a crash
of the run.

Every row has an :func:`outcome`:

- ``"solved"``: within tolerance of the stored value (``rel_error <= rtol``), certified or not;
- ``"disagrees"``: the solver claims an optimum (a certified status, :data:`CLAIMS`) that is not
  within tolerance of the stored value, or that no stored value backs;
- ``"suboptimal"``: a non-certified answer (``max_iter``, ``time_limit``, ``stalled``,
  ``unverified``, CVXPY's ``optimal_inaccurate``) beyond tolerance: a fixed-budget protocol,
  such as the papers' ``infinite_push.paper``, ends here; its ``rel_error`` says how far;
- ``"failed"``: no answer (an exception, a killed or lost worker, a time-limit kill, a CVXPY
  ``solver_error``) or an answer whose certificate failed (``numerical_error``, ``failed``).

Only a disagreement, or a run that could not solve (an exception in the solve, a worker that
died: :func:`broken`), makes ``check`` and ``bench`` exit 1 (:func:`exit_status`). A
``numerical_error`` claims no optimum: it is a failure in the summary, not exit 1.

:func:`summary` gives one line per solver (problems, solves, the count of each outcome, and the
shifted geometric mean of its time relative to the best solver's); :func:`format_table` and
:func:`format_summary` print a few chosen columns for a person (the saved table has them all).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from .. import catalog as _catalog
from .._validation import check_time_limit
from .executors import SerialExecutor
from .outcomes import (CLAIMS, FAILURES, OUTCOMES, broken, exit_status, outcome,  # noqa: F401
                       outcomes)
from .reports import number_format
from .runner import benchmark, make_tasks

log = logging.getLogger(__name__)

#: The columns the agreement table and the summary read (the runner's table has them all).
COLUMNS = ["problem", "formulation", "scaling", "form", "solver", "status", "objective",
           "reference", "rel_error", "rtol", "agrees", "compile_time", "setup_time",
           "solve_time", "time", "warmup_time", "timeout", "iterations", "gap"]

#: The columns :func:`format_table` prints, and their headers.
SHOWN = {"problem": "problem", "solver": "solver", "status": "status", "objective": "objective",
         "rel_error": "rel. error", "time": "time (s)", "outcome": "outcome"}

#: Project solver methods the main job runs: the certified ones, which must reach the stored
#: value. The papers' algorithms (``paper``, ``admm``) stop at an iteration budget; they run in
#: ``infpush-cvx bench``.
CHECK_METHODS = ("working_set", "smoothing_newton", "fista", "ccg", "newton", "interior_point")

#: Shift of the shifted geometric mean of times, in seconds (qpbenchmark's default ``sh``).
TIME_SHIFT = 10.0


def run(ids=None, solvers=None, native=CHECK_METHODS, *, progress: bool = True,
        tier: str = _catalog.DEFAULT_TIER, time_limit: float | None = None,
        tol: float = 1e-6, on_row=None) -> pd.DataFrame:
    """The results table of every problem (default: the catalog's ``tier``, "core"; "all" for
    every tier) x every solver that handles it, run one after the other.

    ``solvers``: installed CVXPY solver names, ``"all"`` for every one (default: the comparison
    set, ``cvxpy_solvers.comparison_set()``); ``native``: project solver methods (``"fista"``),
    labels (``"infinite_push.fista"``) or modules (``"ranksvm"``), default ``CHECK_METHODS``;
    ``()`` for none; ``tol``: their target relative gap. ``time_limit``: seconds per solve, given
    to each solver as its own limit; with a limit, the solves run one after the other in a
    worker process killed at it (:class:`SerialExecutor`), so it holds for every solver, ECOS
    included; the worker warms up every solver before its first timed solve. ``on_row(row)``:
    called as each solve ends. Ctrl-C raises :class:`~.runner.RunInterrupted` with the rows so
    far."""
    ids = _catalog.problem_ids(tier=tier) if ids is None else list(ids)
    tasks = make_tasks(ids, cvxpy=solvers, native=native, tol=tol,
                       timeout=check_time_limit(time_limit))
    log.info("check: tasks %d, problems %d", len(tasks), len(ids))
    return benchmark(tasks, SerialExecutor(), progress=progress, on_row=on_row).table


def shifted_geometric_mean(times, shift: float = TIME_SHIFT) -> float:
    """``exp(mean(log(t_i + sh))) - sh`` of ``times`` (seconds), with shift ``sh``: the mean of
    benchmarks of optimisation software (Mittelmann's; qpbenchmark's ``shgeom``, sh = 10 s for
    run times), which neither one slow problem (as an arithmetic mean) nor one very fast
    problem (as a geometric mean) decides. NaN for no time."""
    times = np.asarray(list(times), dtype=float)
    if times.size == 0:
        return float("nan")
    return float(np.exp(np.mean(np.log(times + shift))) - shift)


def charged_times(df: pd.DataFrame, *, time_limit: float | None = None) -> pd.Series:
    """The time each row counts for in :func:`summary`: its ``time`` when it is solved
    (:func:`outcome`), else the time limit (the row's ``timeout``, else ``time_limit``, else
    its own ``time``), as qpbenchmark counts an unsolved problem."""
    solved = outcomes(df) == "solved"
    limit = pd.to_numeric(df["timeout"], errors="coerce") if "timeout" in df \
        else pd.Series(np.nan, index=df.index)
    if time_limit is not None:
        limit = limit.fillna(time_limit)
    taken = pd.to_numeric(df["time"], errors="coerce")
    return taken.where(solved, limit.fillna(taken)).fillna(limit)


def summary(df: pd.DataFrame, *, shift: float = TIME_SHIFT,
            time_limit: float | None = None) -> pd.DataFrame:
    """One row per solver, in the table's order: ``problems`` (attempted), ``solves`` (rows:
    problems x repeats), the count of each outcome (:data:`OUTCOMES`), ``median_time`` (of its
    solved rows, seconds) and ``time_ratio``.

    ``time_ratio`` is qpbenchmark's measure of its Maros-Meszaros reports, the shifted geometric
    mean of a solver's times relative to the best, made fair to solvers that attempt different
    problems (HiGHS the LPs only, each project solver its own formulations): with ``t_ps`` the
    time solver ``s`` is charged on problem ``p`` (:func:`charged_times`: an unsolved problem
    counts as the time limit; repeats averaged), ``P_s`` the problems ``s`` attempted and
    ``b_p = min_s t_ps`` the best time on ``p`` of any solver,

        time_ratio(s) = sgm(t_ps for p in P_s) / sgm(b_p for p in P_s),
        sgm(t_1..t_n) = exp((1/n) sum_i log(t_i + sh)) - sh,   sh = ``shift`` (10 s),

    so 1.0 is the fastest solver on every problem it attempted and 2.0 twice as slow, in that
    mean (:func:`shifted_geometric_mean`)."""
    found = outcomes(df)
    per_problem = df.assign(_charged=charged_times(df, time_limit=time_limit)) \
        .groupby(["solver", "problem"], sort=False)["_charged"].mean()
    best = per_problem.groupby(level="problem").min()
    rows = []
    for solver, rows_of in df.groupby("solver", sort=False):
        kinds = found.loc[rows_of.index]
        taken = pd.to_numeric(rows_of["time"], errors="coerce")
        mine = per_problem.loc[solver].dropna()
        ratio = shifted_geometric_mean(mine, shift) / \
            shifted_geometric_mean(best.loc[mine.index], shift) if len(mine) else np.nan
        rows.append({"solver": solver, "problems": rows_of["problem"].nunique(),
                     "solves": len(rows_of), **{k: int((kinds == k).sum()) for k in OUTCOMES},
                     "median_time": float(taken[kinds == "solved"].median()),  # NaN for none
                     "time_ratio": ratio})
    return pd.DataFrame(rows, columns=["solver", "problems", "solves", *OUTCOMES,
                                       "median_time", "time_ratio"])


def format_table(df: pd.DataFrame) -> str:
    """A few chosen columns of a results table (:data:`SHOWN`), one line per solve, numbers
    formatted for a person; the saved table has every column."""
    shown = df.assign(outcome=outcomes(df))[list(SHOWN)].rename(columns=SHOWN)
    return shown.to_string(index=False, formatters={
        "objective": number_format(".8g"), "rel. error": number_format(".1e"),
        "time (s)": number_format(".3f")})


def format_summary(table: pd.DataFrame) -> str:
    """The summary (:func:`summary`) as a table, one line per solver, and what its columns
    mean."""
    text = table.rename(columns={"median_time": "median time (s)", "time_ratio": "time ratio"}) \
        .to_string(index=False, formatters={"median time (s)": number_format(".3f"),
                                            "time ratio": number_format(".2f")})
    return (text + f"\n(median time: of its solved problems; time ratio: shifted geometric "
            f"mean (shift {TIME_SHIFT:g} s) of its times\nover the problems it attempted, "
            f"relative to the fastest solver on each; 1.00 is the fastest on all;\nan unsolved "
            f"problem counts as the time limit)")
