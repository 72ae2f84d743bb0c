"""Warm-up: one small, untimed solve of every solver kind of a run, in every worker, first.

The first call of a solver in a process pays one-off costs that are not the solver's speed: the
project's solvers compile their numba kernels (up to 0.56 s was counted in ``time`` under the
Dask executor; 7.7 s for ``infinite_push.fista`` on a 20 x 30 problem in the first ``check``),
CVXPY imports its solver interface and the solver its library. Every executor (serial,
processes, Dask) runs :func:`warm_up` in each of its workers before the first timed task, so
their rows measure the same thing, ``check`` and ``solve`` included. Those one-off seconds are
not lost: each row's ``warmup_time`` is what the process that ran it spent warming up its
solver (:func:`warmup_seconds`).

A warm-up job is one solver on the smallest catalog problem of the same formulation, options
(penalty, scaling, form) and storage (dense or sparse, which numba compiles separately) as one
of the run's problems (:func:`warmup_jobs`); its answer is thrown away. A warm-up that fails is
recorded and logged, never a failure of the run.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import time
import warnings
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: Seconds given to a warm-up solve as its time limit, by task kind. A CVXPY solver's one-off
#: costs (imports, CVXPY's first compilation) come before its own clock starts, so a second is
#: plenty and a slow solver (OSQP on an LP) stops there; the project's solvers compile their
#: kernels as they first use them, and check their soft limit between iterations only.
WARMUP_TIME_LIMITS = {"cvxpy": 1.0, "native": 30.0}


@dataclass(frozen=True)
class WarmupJob:
    """One untimed solve: ``kind`` and ``solver`` as in a Task, on ``problem`` (a catalog ID or
    a generated Instance)."""

    kind: str
    solver: str
    problem: object

    def label(self) -> str:
        return f"{self.solver} on {self.problem}"


def _storage_key(problem):
    """``(formulation, options, sparse, size)`` of a task's problem (its instance generated)."""
    from .instances import instance_shape, problem_data, problem_spec
    spec, data = problem_spec(problem), problem_data(problem)
    shape = instance_shape(data)
    group = (spec.formulation, tuple(sorted(spec.options.items())), bool(data.is_sparse))
    return group, shape["nnz"] + shape["m"] * shape["n"]


def warmup_jobs(tasks) -> list[WarmupJob]:
    """The warm-up jobs of ``tasks``: for every (kind, solver) and every group of their problems
    with the same formulation, options and storage, the smallest problem of that group among
    the catalog's core tier and the tasks' own problems. Tasks of unknown problems are skipped
    (they become error rows)."""
    from .. import catalog
    key = functools.lru_cache(maxsize=None)(_storage_key)
    groups, own = {}, []
    for task in tasks:
        if not hasattr(task, "problem"):  # a CallTask: nothing of the catalog to warm up
            continue
        own.append(task.problem)
        try:
            group, _ = key(task.problem)
        except (ValueError, OSError):  # unknown problem, data set not available: an error row
            continue
        groups.setdefault(group, set()).add((task.kind, task.solver))
    smallest = {}
    for pid in [*catalog.problem_ids(), *own] if groups else ():
        try:
            group, size = key(pid)
        except (ValueError, OSError):  # a core instance that cannot be generated here
            continue
        if group in groups and (group not in smallest or size < smallest[group][0]):
            smallest[group] = (size, pid)
    # a problem is in one group only, so no two jobs are the same
    return [WarmupJob(kind, solver, smallest[group][1])
            for group, solvers in groups.items() for kind, solver in sorted(solvers)]


def _solve(job: WarmupJob, time_limit: float) -> None:
    from ..catalog import cvxpy_solvers, registry
    from .instances import problem_data, problem_spec
    spec, data = problem_spec(job.problem), problem_data(job.problem)
    if job.kind == "cvxpy":
        cvxpy_solvers.solve(spec.build(data), cvxpy_solvers.spec(job.solver), time_limit)
    else:  # "native": a Task checks its kind
        registry.solve(spec, job.solver, data, time_limit=time_limit)


#: Jobs already run in this process (a serial run, or Dask workers in this process).
_DONE: set = set()
#: Seconds of the warm-up solves run in this process, by ``(kind, solver)``.
_SECONDS: dict = {}


def warmup_seconds(kind: str, solver: str) -> float | None:
    """Seconds this process spent warming up solver ``solver`` of task kind ``kind`` (its
    compilation, imports and first untimed solves), None when it never warmed it up: the
    ``warmup_time`` of the rows of that solver made in this process."""
    return _SECONDS.get((kind, solver))


def warm_up(jobs, *, blas_threads: int = 1, time_limits: dict | None = None) -> dict:
    """Run every job not yet run in this process, untimed, with BLAS pools limited to
    ``blas_threads`` as tasks are, each bounded by ``time_limits[job.kind]`` seconds (default
    ``WARMUP_TIME_LIMITS``); returns what the worker is and did: ``host``, ``pid``,
    ``seconds``, ``warmed`` (labels), ``failed`` (label -> error) and ``threadpools``
    (``threadpoolctl.threadpool_info()`` under the tasks' limit)."""
    from threadpoolctl import threadpool_info, threadpool_limits
    time_limits = {**WARMUP_TIME_LIMITS, **(time_limits or {})}
    start = time.perf_counter()
    warmed, failed = [], {}
    with threadpool_limits(limits=blas_threads):
        for job in jobs:
            if job in _DONE:
                continue
            _DONE.add(job)
            began = time.perf_counter()
            try:
                with warnings.catch_warnings():  # the answer is thrown away, its warnings too
                    warnings.simplefilter("ignore")
                    _solve(job, time_limits.get(job.kind, 30.0))
                warmed.append(job.label())
            except Exception as exc:  # a warm-up never stops the run
                failed[job.label()] = f"{type(exc).__name__}: {exc}"[:300]
                # recorded (the run's metadata); the timed solve's row says what is wrong
                log.info("warm-up of %s failed: %s", job.label(), failed[job.label()])
            finally:
                key = (job.kind, job.solver)
                _SECONDS[key] = _SECONDS.get(key, 0.0) + time.perf_counter() - began
        pools = threadpool_info()
    seconds = time.perf_counter() - start
    log.debug("warm-up in process %d: %d solves in %.2f s", os.getpid(), len(warmed), seconds)
    return {"host": socket.gethostname(), "pid": os.getpid(), "seconds": seconds,
            "warmed": warmed, "failed": failed, "threadpools": pools}
