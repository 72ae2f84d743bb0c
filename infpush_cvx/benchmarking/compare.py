"""The main job (``infpush-cvx check``, ``make run``): the benchmark runner on the serial executor,
plus an agreement summary.

Every catalog problem (the "core" tier by default) with the CVXPY solvers of the comparison set
(``cvxpy_solvers.comparison_set()``; any other installed one on request) and the project's
certified methods (``CHECK_METHODS``), one task each, made and run by
:mod:`infpush_cvx.benchmarking` (:func:`~infpush_cvx.benchmarking.make_tasks`,
:func:`~infpush_cvx.benchmarking.benchmark` with ``SerialExecutor(warmup=False)``: one after
the other in a worker process killed at the time limit, no warm-up). So its rows are the
benchmark's rows (:data:`infpush_cvx.benchmarking.tasks.COLUMNS`), made and failed by the same
code; a solver that fails is a row with its status, never a crash of the run. :func:`format_table` prints the
agreement columns (``COLUMNS``) of such a table.
"""

from __future__ import annotations

import logging

import pandas as pd

from .. import catalog as _catalog
from .._validation import check_time_limit
from .executors import SerialExecutor
from .runner import benchmark, make_tasks

log = logging.getLogger(__name__)

#: The columns of the agreement table the main job prints (the runner's table has them all).
COLUMNS = ["problem", "formulation", "scaling", "form", "solver", "status", "objective",
           "reference", "rel_error", "rtol", "agrees", "compile_time", "setup_time",
           "solve_time", "iterations", "gap"]

#: Project solver methods the main job runs: the certified ones, which must reach the stored
#: value. The papers' algorithms (``paper``, ``admm``) stop at an iteration budget; they run in
#: ``infpush-cvx bench``.
CHECK_METHODS = ("working_set", "smoothing_newton", "fista", "ccg", "newton", "interior_point")


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
    included. ``on_row(row)``: called as each solve ends. Ctrl-C raises
    :class:`~.runner.RunInterrupted` with the rows so far."""
    ids = _catalog.problem_ids(tier=tier) if ids is None else list(ids)
    tasks = make_tasks(ids, cvxpy=solvers, native=native, tol=tol,
                       timeout=check_time_limit(time_limit))
    log.info("check: %d solves of %d problems", len(tasks), len(ids))
    return benchmark(tasks, SerialExecutor(warmup=False), progress=progress,
                     on_row=on_row).table


def _number(spec: str):
    return lambda v: "" if pd.isna(v) else format(v, spec)


def format_table(df: pd.DataFrame) -> str:
    """The agreement columns (``COLUMNS``) of a results table, one line per solve."""
    with pd.option_context("display.max_rows", None, "display.width", 200):
        return df[COLUMNS].to_string(index=False, formatters={
            "objective": _number(".10g"), "reference": _number(".10g"),
            "rel_error": _number(".1e"), "rtol": _number(".0e"),
            "compile_time": _number(".3f"), "setup_time": _number(".3f"),
            "solve_time": _number(".3f"), "iterations": lambda v: "" if pd.isna(v) else
            f"{int(v)}", "gap": _number(".1e")})
