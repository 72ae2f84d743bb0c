"""One benchmark task (problem x solver x repeat) and the row it produces: the one row builder
of the package (``infpush-cvx check``, ``bench``, ``solve`` and the benchmark scripts all make
their rows here). A problem is a catalog ID or an :class:`Instance` (a generator and its
parameters, as benchopt's Dataset, with a formulation).

A task is either a CVXPY solve (``kind`` "cvxpy") or one method of the project's own solvers
(``kind`` "native", named ``"<module>.<method>"``). Which project solver takes which catalog
problem, and which problem classes a CVXPY solver is run on, is the catalog's registry
(:mod:`infpush_cvx.catalog.registry`, :func:`infpush_cvx.catalog.cvxpy_solvers.check_handles`).

A task's ``timeout`` is also the solver's own time limit: CVXPY solvers get it under their
time-limit option (``cvxpy_backend.TIME_LIMIT_OPTIONS``; ECOS has none), project solvers as their
soft ``time_limit``.

A row (``COLUMNS``, then ``version_<pkg>``) records the problem, the answer (``status``,
``objective``, the stored value ``reference``, ``rel_error``, the tolerance ``rtol`` and whether
they ``agree``; the certified ``gap`` of a project solver), the times in seconds (below), the
instance
(``generator``, ``seed``, ``tier``, and ``m``, ``n``, ``d``, ``nnz`` measured on the data), every
option the solver was called with (``solver_options``, JSON), the nonzero weights of the answer
(``nnz_w``), the resident memory before the
solve and its peak during it (``rss_before_mib``, ``peak_rss_mib``: :mod:`.memory`; a warm start
included), and for CVXPY solves the primal
residual of the solution (``primal_residual``: the largest constraint violation, computed by CVXPY
from the solution) and the solver's own report of it (``solver_primal_residual``, when its
interface passes one on). With ``Task.curves``, a project solver's row also carries its
per-iteration history under ``"curve"`` (rows of :func:`.curves.curve_rows`), which the runner
moves to a table of its own.

The time columns, in seconds of wall-clock time (``time.perf_counter``), of one task after its
process warmed up (:mod:`.warmup`), the instance generated and the stored value read before any
clock starts:

- ``time``: the whole solve, ``compile_time + setup_time + solve_time``: for a CVXPY solver,
  from building the CVXPY problem to the unpacked solution; for a project solver, its call.
- ``solve_time``: the solver's own clock: CVXPY's ``solver_stats.solve_time`` as the solver
  reports it (without it, ``time`` less the compilation); a project solver's
  ``SolverResult.time``.
- ``compile_time``: CVXPY's compilation of the problem to the solver's form
  (``Problem.compilation_time``); empty for a project solver, which has none.
- ``setup_time``: the rest, ``time - compile_time - solve_time`` (at least 0): building the
  CVXPY problem, the solver's set-up and unpacking the solution outside its own clock, or a
  project solver's work outside its own clock.
- ``warmup_time``: not part of ``time``: the seconds the process that ran the task spent
  warming up this solver before its first timed task (numba's compilation of the project's
  kernels, CVXPY's and the solver's imports, an untimed solve of a small problem); the same on
  every row of that solver from that process; empty when the process did not warm it up.

:func:`run_task` never raises: an exception becomes a row whose ``status`` says so
(:func:`failed_row`, also the row of a timeout or a lost worker). :func:`solve_task` is the same
solve with exceptions left to the caller (the ``solve`` command).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import traceback
import warnings
from dataclasses import dataclass, replace

from .._validation import check_choice
from ..catalog import cvxpy_solvers, registry
from .instances import (Instance, instance_record, instance_shape, problem_data, problem_spec,
                        stored_opt_val)
from .memory import peak_rss
from .warmup import warmup_seconds
from ..solvers.result import CERTIFIED

log = logging.getLogger(__name__)

#: Packages whose versions every row records (those a solve can touch).
VERSION_PACKAGES = ("cvxpy", "numpy", "scipy", "clarabel", "ecos", "scs", "highspy", "numba",
                    "pandas", "infpush_cvx")

#: Columns of the results table, in order (``version_<pkg>`` columns follow).
COLUMNS = ["problem", "instance", "formulation", "penalty", "scaling", "form", "problem_class",
           "lam", "kind", "solver", "repeat", "status", "converged", "objective", "reference",
           "rel_error", "rtol", "agrees", "reference_note", "gap", "iterations", "nnz_w",
           "compile_time", "setup_time", "solve_time", "time", "warmup_time", "timeout", "error",
           "executor", "host", "pid", "blas_threads", "omp_num_threads", "generator", "seed",
           "tier", "m", "n", "d", "nnz", "rss_before_mib", "peak_rss_mib", "primal_residual",
           "solver_primal_residual", "solver_options", "run_id"]

#: Kinds of task.
KINDS = ("cvxpy", "native")

#: The project solvers of a catalog problem (the registry's).
native_methods = registry.methods


@dataclass(frozen=True)
class Task:
    """One solve of ``problem`` (a catalog ID, or a generated :class:`Instance`): ``kind``
    "cvxpy" (``solver`` a CVXPY name) or "native" (``solver`` is ``"<module>.<method>"``, e.g.
    ``"infinite_push.fista"``); ``tol`` is the native target gap; ``curves``: keep a project
    solver's per-iteration history (its convergence curve).

    ``options`` (``(name, value)`` pairs, so the task stays hashable): for a CVXPY solver, the
    options it is called with instead of its comparison options (``()``: CVXPY's defaults); for a
    project solver, keyword arguments added to its call, and ``warm_start_lam``: first solve at
    that lambda (untimed) and start from its answer, as along a regularisation path."""

    problem: str | Instance
    kind: str
    solver: str
    repeat: int = 0
    tol: float = 1e-6
    timeout: float | None = None
    blas_threads: int = 1
    curves: bool = False
    options: tuple | None = None

    def __post_init__(self):
        check_choice(self.kind, "kind", KINDS)

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


def versions() -> dict:
    """``{"version_<pkg>": version}`` of Python and every package in VERSION_PACKAGES."""
    from ..catalog.reference import versions as package_versions
    return {f"version_{k}": v for k, v in package_versions(VERSION_PACKAGES).items()}


def task_options(task: Task) -> dict:
    """Every option the task's solver is called with: for a CVXPY solver, the keyword arguments
    of ``Problem.solve`` (CVXPY settings, the solver's options and time limit); for a project
    solver, ``method``, ``tol``, ``time_limit`` and the task's own ``options``."""
    if task.kind == "cvxpy":
        return {"solver": task.solver,
                **_with_options(cvxpy_solvers.spec(task.solver), task).solve_options(task.timeout)}
    return {**registry.options(task.solver, tol=task.tol, time_limit=task.timeout),
            **dict(task.options or ())}


def _with_options(solver_spec, task: Task):
    """``solver_spec`` with the task's ``options`` instead of its comparison options, if any."""
    return solver_spec if task.options is None else replace(solver_spec,
                                                            options=dict(task.options))


def _options_text(task: Task) -> str | None:
    try:
        return json.dumps(task_options(task), sort_keys=True, default=str)
    except ValueError:  # an unknown solver: the row's error says so
        return None


def base_row(task: Task) -> dict:
    """The row fields known before solving (problem and instance description, stored value,
    the solver's options, task, machine)."""
    spec, instance = problem_spec(task.problem), instance_record(task.problem)
    return {"problem": spec.id, "instance": spec.instance, "formulation": spec.formulation,
            "penalty": spec.options.get("penalty", "l2" if spec.formulation != "rank2plan_lp"
                                        else "l1"),
            "scaling": spec.scaling, "form": spec.options.get("form", ""),
            "problem_class": spec.problem_class, "lam": spec.lam, "kind": task.kind,
            "solver": task.solver, "repeat": task.repeat, "timeout": task.timeout,
            "reference": stored_opt_val(task.problem),
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
    row = base_row(task)
    if not in_worker:
        row.update(pid=None, host=None)
    row.update(status=status, converged=False, objective=None, rel_error=float("inf"),
               agrees=False, error=error[:500], time=elapsed)
    return row


def primal_residual(problem) -> float | None:
    """The largest violation of any constraint of a solved ``problem`` by its solution
    (``max`` over constraints of ``constraint.violation()``), None when there is no solution."""
    import numpy as np
    worst = 0.0
    for constraint in problem.constraints:
        try:
            violation = constraint.violation()
        except (ValueError, TypeError):  # no value: the solve returned no solution
            return None
        if violation is None:
            return None
        worst = max(worst, float(np.max(np.asarray(violation, dtype=float), initial=0.0)))
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
        if value is not None:
            try:
                return float(value)
            except (TypeError, ValueError):
                continue
    return None


def _answer(status: str, objective, reference, rtol: float, success, w, *, gap, iterations,
            compile_time, solve_time, elapsed) -> dict:
    """The answer's fields: relative error against the stored value, whether they agree, the
    number of nonzero weights ``nnz_w`` (None without a weight vector ``w``), and the times
    (``setup_time``: what of ``elapsed`` neither compilation nor the solver's clock took)."""
    import numpy as np
    rel = None if reference is None or objective is None else \
        cvxpy_solvers.relative_error(objective, reference)
    return {"status": status, "converged": status in success,
            "nnz_w": None if w is None else int(np.count_nonzero(w)),
            "objective": None if objective is None else float(objective), "rel_error": rel,
            "rtol": rtol, "agrees": bool(status in success and rel is not None and rel <= rtol),
            "gap": gap, "iterations": iterations, "compile_time": compile_time,
            "setup_time": max(elapsed - (compile_time or 0.0) - solve_time, 0.0),
            "solve_time": solve_time, "time": elapsed}


def _run_cvxpy(task: Task, spec, data, reference) -> dict:
    """A CVXPY solve; the solver must be run on the problem's class (ValueError otherwise)."""
    solver_spec = _with_options(
        cvxpy_solvers.check_handles(task.solver, spec.problem_class, spec.id), task)
    start = time.perf_counter()
    problem = spec.build(data)
    out = cvxpy_solvers.solve(problem, solver_spec, task.timeout)
    elapsed = time.perf_counter() - start
    compile_time = getattr(problem, "compilation_time", None)
    stats = problem.solver_stats
    solve_time = stats.solve_time if stats is not None and stats.solve_time is not None \
        else (elapsed - compile_time if compile_time else elapsed)
    w = problem.var_dict.get("w")  # every primal formulation names its weights w
    return {**_answer(out.solver_status, out.value, reference, solver_spec.rtol, ("optimal",),
                      None if w is None else w.value, gap=None,
                      iterations=getattr(stats, "num_iters", None), compile_time=compile_time,
                      solve_time=solve_time, elapsed=elapsed),
            "primal_residual": primal_residual(problem),
            "solver_primal_residual": solver_primal_residual(stats)}


def _run_native(task: Task, spec, data, reference) -> dict:
    """A project solve. One that stops uncertified warns (ConvergenceWarning); its row's status
    says so, and the warning goes to the log (-vv) instead of the output."""
    if task.solver not in registry.methods(spec):
        raise ValueError(f"project solver {task.solver!r} does not solve {spec.id!r}; "
                         f"available: {registry.methods(spec) or 'none'}")
    extra = dict(task.options or ())
    warm_lam = extra.pop("warm_start_lam", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if warm_lam is not None:  # the previous point of a regularisation path, untimed
            extra["warm_start"] = registry.solve(replace(spec, lam=float(warm_lam)), task.solver,
                                                 data, tol=task.tol, time_limit=task.timeout,
                                                 **extra)
        start = time.perf_counter()
        res = registry.solve(spec, task.solver, data, tol=task.tol, time_limit=task.timeout,
                             **extra)
        elapsed = time.perf_counter() - start
    for w in caught:
        log.debug("%s: %s: %s", task.label(), w.category.__name__, w.message)
    out = _answer(res.status, res.objective, reference, registry.rtol(task.tol), CERTIFIED,
                  res.w, gap=res.gap, iterations=res.iterations, compile_time=None,
                  solve_time=res.time, elapsed=elapsed)
    if task.curves:
        from .curves import curve_rows
        out["curve"] = curve_rows(res.history)
    return out


def solve_task(task: Task) -> dict:
    """Solve one task and return its row; exceptions propagate (see :func:`run_task`).

    BLAS pools are limited to ``task.blas_threads`` for the solve (threadpoolctl), so timings
    from different executors are comparable.
    """
    from threadpoolctl import threadpool_limits

    row = base_row(task)
    run = _run_cvxpy if task.kind == "cvxpy" else _run_native
    with threadpool_limits(limits=task.blas_threads):
        # Generate the instance (cached per process) before any clock starts, so the first
        # task of a process is not charged for it.
        data = problem_data(task.problem)
        row.update(instance_shape(data))
        if not isinstance(task.problem, Instance):
            row.update(_checked_reference(task.problem, data))
        with peak_rss() as memory:
            row.update(run(task, problem_spec(task.problem), data, row["reference"]))
    row.update(rss_before_mib=memory.rss_before_mib, peak_rss_mib=memory.peak_rss_mib,
               warmup_time=warmup_seconds(task.kind, task.solver))
    row["error"] = ""
    return _with_threads(row, task)


def _checked_reference(problem_id: str, data) -> dict:
    """The stored value a solve of ``problem_id`` on ``data`` is compared with: none when the
    record no longer belongs to the instance or to the problem's definition, and then
    ``reference_note`` says why and how to store a fresh one (never a stale value used silently)."""
    from ..catalog.reference import StaleReferenceWarning, stored_value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StaleReferenceWarning)  # the row carries the reason
        found = stored_value(problem_id, data)
    note = "" if found.value is not None or found.reason is None else found.reason
    return {"reference": found.value, "reference_note": note}


def run_task(task: Task | CallTask) -> dict:
    """:func:`solve_task`, with an exception turned into a row whose status is ``"error: ..."``
    (``"error"`` when the problem itself is unknown). A :class:`CallTask` calls its function."""
    from threadpoolctl import threadpool_limits
    start = time.perf_counter()
    try:
        if not isinstance(task, CallTask):
            return solve_task(task)
        with threadpool_limits(limits=task.blas_threads):
            result = task.call()
        return _call_row(task, "done", result, elapsed=time.perf_counter() - start)
    except Exception as exc:
        kind, error = type(exc).__name__, f"{type(exc).__name__}: {exc}"
        traceback_text = traceback.format_exc(limit=3).replace("\n", " ")
    try:
        row = failed_row(task, f"error: {kind}", f"{error} | {traceback_text}",
                         elapsed=time.perf_counter() - start, in_worker=True)
    except Exception:  # unknown problem: still a row, without the problem's description
        return {"problem": str(task.problem), "kind": task.kind, "solver": task.solver,
                "repeat": task.repeat, "status": "error", "converged": False, "agrees": False,
                "error": error[:500], **versions()}
    return row if isinstance(task, CallTask) else _with_threads(row, task)


def _with_threads(row: dict, task: Task) -> dict:
    row["blas_threads"] = task.blas_threads
    row["omp_num_threads"] = os.environ.get("OMP_NUM_THREADS")  # the worker's environment
    return row
