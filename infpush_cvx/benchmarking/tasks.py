"""One benchmark task (catalog problem x solver x repeat) and the row it produces.

A task is either a CVXPY solve, run through the main job :func:`infpush_cvx.compare.solve_row`,
or one method of the project's own solvers (``infpush_cvx.solvers``). Only primal formulations
map to project solvers:

============== ======================================================= =========================
formulation    project solver                                          methods
============== ======================================================= =========================
infinite_push  ``solvers.infinite_push.infinite_push(Xp, Xn, lam, ...)`` ``METHODS[penalty]``
ranksvm        ``solvers.ranksvm.rank_svm(Xp, Xn, lam, ...)``           ``METHODS``
rank2plan_lp   ``solvers.rank2plan.rank2plan_lp(data, lam=lam, ...)``   ``METHODS`` minus "cvxpy"
============== ======================================================= =========================

The ``form`` option (compact or direct) only changes the CVXPY model, so project solvers run on
the compact (or form-less) problems only, never twice on the same optimisation problem. CVXPY
solvers run on the problem classes they handle only (``cvxpy_solvers.check_handles``).

A task's ``timeout`` is also the solver's own time limit: CVXPY solvers get it under their
time-limit option (``cvxpy_solvers.TIME_LIMIT_OPTIONS``; ECOS has none), project solvers as their
soft ``time_limit``.

Besides the answer and its times, a row records the instance (``generator``, ``seed``,
``tier``, and ``m``, ``n``, ``d``, ``nnz`` measured on the data), every option the solver was
called with (``solver_options``, JSON), and for CVXPY solves the primal residual of the solution
(``primal_residual``: the largest constraint violation, computed by CVXPY from the solution) and
the solver's own report of it (``solver_primal_residual``, when its interface passes one on).
With ``Task.curves``, a project solver's row also carries its per-iteration history under
``"curve"`` (rows of :func:`.curves.curve_rows`), which the runner moves to a table of its own.

:func:`run_task` never raises: an exception becomes a row whose ``status`` says so.
:func:`solve_task` is the same solve with exceptions left to the caller (the ``solve`` command).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import socket
import time
import traceback
import warnings
from dataclasses import asdict, dataclass
from importlib import metadata

from .. import compare as _compare

log = logging.getLogger(__name__)

#: Packages whose versions every row records (those a solve can touch).
VERSION_PACKAGES = ("cvxpy", "numpy", "scipy", "clarabel", "ecos", "scs", "highspy", "numba",
                    "pandas", "infpush_cvx")

#: Columns of the results table, in order (``version_<pkg>`` columns follow).
COLUMNS = ["problem", "instance", "formulation", "penalty", "scaling", "form", "problem_class",
           "lam", "kind", "solver", "repeat", "status", "converged", "objective", "reference",
           "rel_error", "rtol", "agrees", "gap", "iterations", "compile_time", "setup_time",
           "solve_time", "time", "timeout", "error", "executor", "host", "pid", "blas_threads",
           "omp_num_threads", "generator", "seed", "tier", "m", "n", "d", "nnz",
           "primal_residual", "solver_primal_residual", "solver_options", "run_id"]

#: Statuses that count as a successful solve, CVXPY's and the project's.
SUCCESS = _compare.SUCCESS

#: Kinds of task.
KINDS = ("cvxpy", "native")


@dataclass(frozen=True)
class Task:
    """One solve: ``kind`` "cvxpy" (``solver`` a CVXPY name) or "native" (``solver`` is
    ``"<module>.<method>"``, e.g. ``"infinite_push.fista"``); ``tol`` is the native target gap;
    ``curves``: keep a project solver's per-iteration history (its convergence curve)."""

    problem: str
    kind: str
    solver: str
    repeat: int = 0
    tol: float = 1e-6
    timeout: float | None = None
    blas_threads: int = 1
    curves: bool = False

    def label(self) -> str:
        return f"{self.problem} / {self.solver} #{self.repeat}"


@dataclass(frozen=True)
class CallTask:
    """A task that calls a function, so that other long runs (the experiments' splits) use the
    same executors as the benchmarks: worker processes with one BLAS thread, timeouts, Dask.

    ``target`` names the function as ``"package.module:function"``; ``args`` and ``kwargs``
    (a tuple of ``(name, value)`` pairs, so the task stays hashable) must be picklable. Its row
    is ``{"task", "status", "result", "error", "time"}``: ``status`` "done" with the function's
    return value as ``result``, or what went wrong (``"error: <type>"``, ``"timeout"``,
    ``"worker_died"``) with ``result`` None.
    """

    target: str
    args: tuple = ()
    kwargs: tuple = ()
    name: str = ""
    timeout: float | None = None
    blas_threads: int = 1

    def label(self) -> str:
        return self.name or self.target

    def call(self):
        import importlib
        module, _, function = self.target.partition(":")
        return getattr(importlib.import_module(module), function)(*self.args, **dict(self.kwargs))


def _call_row(task: CallTask, status: str, result=None, error: str = "",
              elapsed: float | None = None) -> dict:
    return {"task": task.label(), "status": status, "result": result, "error": error[:2000],
            "time": elapsed}


def _run_call(task: CallTask) -> dict:
    from threadpoolctl import threadpool_limits
    start = time.perf_counter()
    try:
        with threadpool_limits(limits=task.blas_threads):
            result = task.call()
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc} | {traceback.format_exc(limit=5)}"
        return _call_row(task, f"error: {type(exc).__name__}", error=error,
                         elapsed=time.perf_counter() - start)
    return _call_row(task, "done", result, elapsed=time.perf_counter() - start)


# The project solvers a catalog problem maps to, and their agreement tolerance, live with the
# main job (infpush_cvx.compare), which runs them too.
native_methods = _compare.native_methods
native_rtol = _compare.native_rtol


@dataclass
class _Timer:
    start: float = 0.0

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start


_VERSIONS: dict | None = None


def versions() -> dict:
    """``{"version_<pkg>": version}`` of Python and every package in VERSION_PACKAGES."""
    global _VERSIONS
    if _VERSIONS is None:
        out = {"version_python": platform.python_version()}
        for pkg in VERSION_PACKAGES:
            try:
                out[f"version_{pkg}"] = metadata.version(pkg)
            except metadata.PackageNotFoundError:
                out[f"version_{pkg}"] = None
        _VERSIONS = out
    return dict(_VERSIONS)


def task_options(task: Task) -> dict:
    """Every option the task's solver is called with: for a CVXPY solver, the keyword arguments
    of ``Problem.solve`` (CVXPY settings, the solver's options and time limit); for a project
    solver, ``method``, ``tol`` and ``time_limit``."""
    if task.kind == "cvxpy":
        from .. import cvxpy_solvers
        return {"solver": task.solver,
                **cvxpy_solvers.spec(task.solver).solve_options(task.timeout)}
    return _compare.native_options(task.solver, tol=task.tol, time_limit=task.timeout)


def _options_text(task: Task) -> str | None:
    try:
        return json.dumps(task_options(task), sort_keys=True, default=str)
    except ValueError:  # an unknown solver: the row's error says so
        return None


def base_row(task: Task) -> dict:
    """The row fields known before solving (problem and instance description, the solver's
    options, task, machine)."""
    from .. import catalog
    from .instances import instance_parameters
    spec = catalog.get(task.problem)
    instance = instance_parameters(spec.instance)
    return {"problem": task.problem, "instance": spec.instance, "formulation": spec.formulation,
            "penalty": spec.options.get("penalty", "l2" if spec.formulation != "rank2plan_lp"
                                        else "l1"),
            "scaling": spec.scaling, "form": spec.options.get("form", ""),
            "problem_class": spec.problem_class, "lam": spec.lam, "kind": task.kind,
            "solver": task.solver, "repeat": task.repeat, "timeout": task.timeout,
            "generator": instance["generator"], "seed": instance["seed"], "tier": spec.tier,
            "solver_options": _options_text(task),
            "host": socket.gethostname(), "pid": os.getpid(), **versions()}


def failed_row(task: Task | CallTask, status: str, error: str = "", elapsed: float | None = None, *,
               in_worker: bool = False) -> dict:
    """The row of a task that produced no answer (timeout, crash of a worker, exception).

    ``in_worker``: the row is made by the process that ran the task (else by the executor, and
    the ``pid`` and ``host`` of the lost worker are unknown)."""
    if isinstance(task, CallTask):
        return _call_row(task, status, error=error, elapsed=elapsed)
    from ..reference import load_reference
    row = base_row(task)
    if not in_worker:
        row.update(pid=None, host=None)
    ref = load_reference(task.problem)
    row.update(status=status, converged=False, objective=None,
               reference=None if ref is None else ref["opt_val"], rel_error=float("inf"),
               agrees=False, error=error[:500], time=elapsed)
    return row


def _run_cvxpy(task: Task) -> dict:
    with _Timer() as t:
        row = _compare.solve_row(task.problem, task.solver, time_limit=task.timeout)
    compile_time = row["compile_time"] or 0.0
    solve_time = row["solve_time"] or 0.0
    # Setup: everything that is neither CVXPY's compilation nor the solver's own solve time
    # (building the CVXPY model, solver setup, unpacking the solution).
    return {"status": row["status"], "converged": row["status"] == "optimal",
            "objective": row["objective"], "reference": row["reference"],
            "rel_error": row["rel_error"], "rtol": row["rtol"], "agrees": bool(row["agrees"]),
            "gap": None, "iterations": row["iterations"], "compile_time": row["compile_time"],
            "setup_time": max(t.elapsed - compile_time - solve_time, 0.0),
            "solve_time": row["solve_time"], "time": t.elapsed,
            "primal_residual": row["primal_residual"],
            "solver_primal_residual": row["solver_primal_residual"]}


def _run_native(task: Task) -> dict:
    # A solve that stops uncertified warns (ConvergenceWarning); its row's status says so, and
    # the warning goes to the log (-vv) instead of the benchmark's output.
    with warnings.catch_warnings(record=True) as caught, _Timer() as t:
        warnings.simplefilter("always")
        row = _compare.native_row(task.problem, task.solver, tol=task.tol,
                                  time_limit=task.timeout, history=task.curves)
    for w in caught:
        log.debug("%s: %s: %s", task.label(), w.category.__name__, w.message)
    out = {"status": row["status"], "converged": row["status"] in SUCCESS,
           "objective": row["objective"], "reference": row["reference"],
           "rel_error": row["rel_error"], "rtol": row["rtol"], "agrees": row["agrees"],
           "gap": row["gap"], "iterations": row["iterations"], "compile_time": None,
           "setup_time": row["setup_time"], "solve_time": row["solve_time"], "time": t.elapsed}
    if task.curves:
        from .curves import curve_rows
        out["curve"] = curve_rows(row.get("history"))
    return out


def solve_task(task: Task) -> dict:
    """Solve one task and return its row; exceptions propagate (see :func:`run_task`).

    BLAS pools are limited to ``task.blas_threads`` for the solve (threadpoolctl), so timings
    from different executors are comparable.
    """
    from threadpoolctl import threadpool_limits
    row = base_row(task)
    with threadpool_limits(limits=task.blas_threads):
        # Generate the instance (cached per process) before any clock starts, so the first
        # task of a process is not charged for it.
        from .. import catalog
        from .instances import instance_shape
        row.update(instance_shape(catalog.instance_data(row["instance"])))
        if task.kind == "cvxpy":
            row.update(_run_cvxpy(task))
        elif task.kind == "native":
            row.update(_run_native(task))
        else:
            raise ValueError(f"unknown task kind {task.kind!r}; expected one of {KINDS}")
    row["error"] = ""
    return _with_threads(row, task)


def run_task(task: Task | CallTask) -> dict:
    """:func:`solve_task`, with an exception turned into a row whose status is ``"error: ..."``
    (``"error"`` when the problem itself is unknown). A :class:`CallTask` calls its function."""
    if isinstance(task, CallTask):
        return _run_call(task)
    start = time.perf_counter()
    try:
        return solve_task(task)
    except Exception as exc:
        kind, error = type(exc).__name__, f"{type(exc).__name__}: {exc}"
        traceback_text = traceback.format_exc(limit=3).replace("\n", " ")
    try:
        row = failed_row(task, f"error: {kind}", f"{error} | {traceback_text}",
                         elapsed=time.perf_counter() - start, in_worker=True)
    except Exception:  # unknown problem: still a row, without the problem's description
        return {"problem": task.problem, "kind": task.kind, "solver": task.solver,
                "repeat": task.repeat, "status": "error", "converged": False, "agrees": False,
                "error": error[:500], **versions()}
    return _with_threads(row, task)


def _with_threads(row: dict, task: Task) -> dict:
    row["blas_threads"] = task.blas_threads
    row["omp_num_threads"] = os.environ.get("OMP_NUM_THREADS")  # the worker's environment
    return row


def task_dict(task: Task) -> dict:
    return asdict(task)
