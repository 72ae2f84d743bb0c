"""Executors: run a list of tasks and yield ``(index, row)`` as they finish.

- :class:`SerialExecutor`: one task after the other. A task with a timeout runs in one worker
  process (as below, with this process's environment) killed at the limit, so the limit holds
  for every solver: CVXPY's compilation and a solver's set-up count, and ECOS, which has no
  limit of its own, is stopped too. Tasks without a timeout run in this process.
- :class:`ProcessExecutor` (default): long-lived worker processes started with the ``spawn``
  method, with ``OMP/OPENBLAS/MKL/NUMBA`` thread counts set to 1 in their environment before
  NumPy is imported, so timings stay comparable with a serial run. A task that exceeds its
  timeout gets its worker killed and replaced and becomes a ``"timeout"`` row; a worker that dies
  becomes a ``"worker_died"`` row. The run goes on either way.
- :class:`DaskExecutor`: a Dask distributed cluster (``address`` of a scheduler, or a local
  cluster). A task past its timeout is cancelled and recorded as ``"timeout"``; Dask cannot kill a
  running thread, so the worker may stay busy until the solver returns.

Every executor records in ``started`` when each task began (index -> ``time.perf_counter()``),
so that the runner can mark the tasks a Ctrl-C cut short as "interrupted". Worker processes
ignore SIGINT (a Ctrl-C at the terminal reaches the whole process group): the parent alone
stops the run and kills them, so an interrupt never becomes a solver's failure. A worker also
dies with its parent (Linux), so a killed run leaves no solve running.

Every executor warms up each of its workers before the first timed task (:mod:`.warmup`: one
small untimed solve of every solver kind of the run), so that no row's time includes numba
compilation or first imports; ``warmup_info`` then lists what each worker did
(``warmup=False`` skips it).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import os
import signal
import sys
import time
from multiprocessing.connection import wait

from .._validation import check_choice
from .tasks import failed_row, run_task
from .warmup import warm_up, warmup_jobs

log = logging.getLogger(__name__)

#: Environment variables that pin native thread pools to one thread in worker processes.
SINGLE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "NUMBA_NUM_THREADS": "1", "VECLIB_MAXIMUM_THREADS": "1"}

EXECUTORS = ("serial", "processes", "dask")

#: The longest single wait for workers, in seconds; a longer time limit is waited for in
#: several (the clocks behind ``select`` overflow near 1e11 s, and a limit of 1e20 s raised).
MAX_WAIT = 3600.0


def _blas_threads(tasks) -> int:
    return max((t.blas_threads for t in tasks), default=1)


def _wait_seconds(deadlines) -> float | None:
    """How long to wait for the tasks running: until a little after the first of their
    ``deadlines`` (``time.perf_counter()`` times; None: no limit), in pieces of at most
    ``MAX_WAIT``; None (for ever) when none has a deadline."""
    deadlines = [d for d in deadlines if d is not None]
    return None if not deadlines else \
        min(max(min(deadlines) - time.perf_counter(), 0.0) + 0.05, MAX_WAIT)


class SerialExecutor:
    """Tasks one after the other, after one warm-up. With ``isolate`` (default) and a task with
    a timeout, in one worker process killed and replaced at a task's limit (a ``"timeout"``
    row); otherwise in this process, where only the solvers' own limits bound a solve."""

    name = "serial"
    #: Run tasks that have a timeout in a worker process killed at the limit.
    isolate = True

    def __init__(self, warmup: bool = True, isolate: bool | None = None):
        self.warmup = warmup
        if isolate is not None:
            self.isolate = bool(isolate)
        self.warmup_info: list[dict] = []
        self.started: dict = {}

    def run(self, tasks):
        tasks = list(tasks)
        self.started = {}
        if self.isolate and any(getattr(t, "timeout", None) is not None for t in tasks):
            worker = ProcessExecutor(n_workers=1, env={}, warmup=self.warmup)
            self.started = worker.started = {}
            try:
                yield from worker.run(tasks)
            finally:
                self.warmup_info = worker.warmup_info
            return
        if self.warmup and tasks:
            self.warmup_info = [warm_up(warmup_jobs(tasks), blas_threads=_blas_threads(tasks))]
        for k, task in enumerate(tasks):
            self.started[k] = time.perf_counter()
            yield k, run_task(task)


#: Modules a worker imports before it reports ready, so no task's clock includes them.
_WARM_IMPORTS = ("numpy", "scipy.sparse", "cvxpy", "infpush_cvx.benchmarking.tasks",
                 "infpush_cvx.solvers.infinite_push", "infpush_cvx.solvers.ranksvm",
                 "infpush_cvx.solvers.rank2plan")


def _worker_main(conn, env, jobs=(), blas_threads=1):
    """Worker loop: import, warm up (``jobs``), say ``("ready", warm-up info)``, then receive
    (index, task) and send back (index, row); None stops it."""
    # SIGINT ignored, and blocked so that a solver that installs its own handler while it runs
    # (SCS does) never sees it: the parent turns a Ctrl-C into "interrupted" rows
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    # the kernel kills this process when its parent dies (Linux PR_SET_PDEATHSIG), so a run
    # killed with SIGKILL leaves no solve running; elsewhere the worker ends at its next
    # message (EOF)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))
    os.environ.update(env)  # before the first NumPy import in this (spawned) process
    import importlib
    for name in _WARM_IMPORTS:
        importlib.import_module(name)
    info = warm_up(jobs, blas_threads=blas_threads) if jobs else None
    conn.send(("ready", info))
    with contextlib.suppress(EOFError):  # the parent is gone (run_task itself never raises)
        for k, task in iter(conn.recv, None):  # None: stop
            conn.send((k, run_task(task)))


class _Worker:
    def __init__(self, ctx, env, jobs=(), blas_threads=1):
        parent, child = ctx.Pipe()
        self.conn = parent
        self.proc = ctx.Process(target=_worker_main, args=(child, env, jobs, blas_threads),
                                daemon=True)
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)  # the spawned interpreter inherits these from its first byte
        try:
            self.proc.start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        child.close()
        self.ready = False
        self.job = None       # (index, task)
        self.started = None

    def submit(self, k, task):
        self.job, self.started = (k, task), time.perf_counter()
        self.conn.send((k, task))

    @property
    def deadline(self) -> float | None:
        """When the running task's time limit is past (None: no task, or no limit)."""
        if self.job is None or self.job[1].timeout is None:
            return None
        return self.started + self.job[1].timeout

    def receive(self, ready):
        """The worker's message when its pipe is among the ``ready`` ones (None otherwise, or
        when the pipe broke: its death is seen next)."""
        if self.conn in ready:
            with contextlib.suppress(EOFError, OSError):
                return self.conn.recv()
        return None

    def kill(self):
        self.proc.kill()
        self.proc.join()
        self.conn.close()

    def stop(self):
        with contextlib.suppress(OSError):  # a broken pipe: the worker is gone already
            self.conn.send(None)
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.kill()


class ProcessExecutor:
    """``n_workers`` spawned worker processes (default: the number of CPUs). With ``fresh``,
    every task gets a new worker (warmed up like the first), so nothing another task left in a
    process (caches, fragmented memory) is counted in its time or memory."""

    name = "processes"

    def __init__(self, n_workers: int | None = None, env: dict | None = None,
                 warmup: bool = True, fresh: bool = False):
        if n_workers is not None and (isinstance(n_workers, bool) or int(n_workers) != n_workers
                                      or n_workers < 1):
            raise ValueError(f"n_workers must be a positive integer, got {n_workers!r}")
        self.n_workers = int(n_workers) if n_workers is not None else (os.cpu_count() or 1)
        self.env = dict(SINGLE_THREAD_ENV if env is None else env)
        self.warmup = warmup
        self.fresh = bool(fresh)
        self.warmup_info: list[dict] = []
        self.started: dict = {}

    def run(self, tasks):
        tasks = list(tasks)
        self.started.clear()
        ctx = mp.get_context("spawn")
        pending = list(enumerate(tasks))[::-1]
        jobs = warmup_jobs(tasks) if self.warmup else []
        self.warmup_info = []

        def new_worker():  # every worker, a replacement too, warms up before its first task
            return _Worker(ctx, self.env, jobs, _blas_threads(tasks)) if pending else None
        workers = [new_worker() for _ in range(min(self.n_workers, len(tasks)))]
        clean = False
        try:
            while pending or any(w is not None and w.job is not None for w in workers):
                live = [w for w in workers if w is not None and (w.job is not None or not w.ready)]
                ready = wait([w.conn for w in live] + [w.proc.sentinel for w in live],
                             timeout=_wait_seconds(w.deadline for w in live))
                for i, w in enumerate(workers):
                    if w is None:
                        continue
                    msg = w.receive(ready)
                    died = msg is None and (w.proc.sentinel in ready or not w.proc.is_alive())
                    if isinstance(msg, tuple) and msg[0] == "ready":
                        w.ready = True
                        if msg[1] is not None:
                            self.warmup_info.append(msg[1])
                    elif msg is not None:
                        w.job = None
                        yield msg
                        if self.fresh:
                            w.stop()
                            workers[i] = w = new_worker()
                    elif died or (w.deadline is not None and time.perf_counter() > w.deadline):
                        w.kill()
                        if w.job is None and not w.ready:
                            raise RuntimeError(f"a worker process failed to start (exit code "
                                               f"{w.proc.exitcode})")
                        why = f"worker exit code {w.proc.exitcode}" if died else \
                            f"killed after {w.job[1].timeout:g} s"
                        what = f"process {w.proc.pid}" if w.job is None else w.job[1].label()
                        log.info("%s: %s; worker replaced", what, why)
                        if w.job is not None:
                            yield w.job[0], failed_row(w.job[1], "worker_died" if died
                                                       else "timeout", why,
                                                       time.perf_counter() - w.started)
                        workers[i] = w = new_worker()
                    if w is not None and w.ready and w.job is None and pending:
                        w.submit(*pending.pop())
                        self.started[w.job[0]] = w.started
            clean = True
        finally:
            # Ctrl-C or an error: kill every worker now; one still warming up does not read
            # the stop message, and waiting for it took 5 s a worker
            for w in workers:
                if w is None or w.proc.exitcode is not None:
                    continue
                if clean and w.job is None and w.ready and w.proc.is_alive():
                    w.stop()
                else:
                    w.kill()


class DaskExecutor:
    """Tasks as Dask futures on ``client`` (or a new client to ``address``, or a local cluster
    of ``n_workers`` single-threaded worker processes when both are None)."""

    name = "dask"

    def __init__(self, address: str | None = None, client=None, n_workers: int | None = None,
                 warmup: bool = True):
        self.address, self.client, self.n_workers = address, client, n_workers
        self.warmup = warmup
        self.warmup_info: list[dict] = []
        self.started: dict = {}

    def _client(self):
        from dask.distributed import Client, LocalCluster
        if self.client is not None:
            return self.client, []
        if self.address is not None:
            client = Client(self.address)
            return client, [client]
        cluster = LocalCluster(n_workers=self.n_workers or os.cpu_count() or 1,
                               threads_per_worker=1, env=SINGLE_THREAD_ENV,
                               dashboard_address=None)
        client = Client(cluster)
        return client, [client, cluster]

    def run(self, tasks):
        from dask.distributed import wait as dask_wait
        tasks = list(tasks)
        self.started = {}
        if not tasks:
            return
        client, owned = self._client()
        try:
            jobs = warmup_jobs(tasks) if self.warmup else []
            if jobs:  # one warm-up task pinned to each worker of the cluster, waited for
                self.warmup_info = client.gather([
                    client.submit(warm_up, jobs, blas_threads=_blas_threads(tasks),
                                  workers=[address], allow_other_workers=False, pure=False)
                    for address in client.nthreads()])  # every worker's address
            # At most one task in flight per worker thread, so a task's clock starts when it
            # starts running rather than when it joins the queue.
            slots = max(sum(client.nthreads().values()), 1)
            pending = list(enumerate(tasks))[::-1]
            running = {}  # future -> index
            while pending or running:
                while pending and len(running) < slots:
                    k, task = pending.pop()
                    running[client.submit(run_task, task, pure=False)] = k
                    self.started[k] = time.perf_counter()
                with contextlib.suppress(TimeoutError):
                    dask_wait(list(running), return_when="FIRST_COMPLETED", timeout=_wait_seconds(
                        self.started[k] + tasks[k].timeout for k in running.values()
                        if tasks[k].timeout is not None))
                now = time.perf_counter()
                for fut, k in list(running.items()):
                    took, limit = now - self.started[k], tasks[k].timeout
                    if fut.status == "finished":
                        row = fut.result()
                    elif fut.status in ("error", "cancelled", "lost"):
                        row = failed_row(tasks[k], f"dask_{fut.status}", repr(fut.exception())
                                         if fut.status == "error" else "", took)
                    elif limit is not None and took > limit:
                        fut.cancel()
                        row = failed_row(tasks[k], "timeout", f"cancelled after {limit:g} s", took)
                    else:
                        continue
                    del running[fut]
                    yield k, row
        finally:
            for opened in owned:  # the client before its cluster
                opened.close()


def make_executor(name: str = "processes", *, n_workers: int | None = None,
                  scheduler: str | None = None, warmup: bool = True):
    """An executor by name: "serial", "processes" (default) or "dask"."""
    check_choice(name, "executor", EXECUTORS)
    if name == "serial":
        return SerialExecutor(warmup=warmup)
    if name == "processes":
        return ProcessExecutor(n_workers, warmup=warmup)
    return DaskExecutor(address=scheduler, n_workers=n_workers, warmup=warmup)
