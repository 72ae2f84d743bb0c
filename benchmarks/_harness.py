"""Shared benchmark harness: one measurement in a fresh, single-threaded subprocess.

A measurement is a module-level function ``target(probe, *args) -> dict`` (so ``spawn`` can pickle
it by reference). It runs in a newly spawned Python process whose BLAS / OpenMP / numba / rayon
pools are limited to one thread (:data:`THREAD_ENV`). The target does its own warm-up and data
loading, then wraps exactly the timed call in ``with probe.measure() as m:``; on entry the probe
records the resident memory (the data are loaded by then), resets the kernel's peak-RSS counter
(``/proc/self/clear_refs``, Linux >= 4.0) and starts the clock; on exit it stops the clock and
reads the peak (``VmHWM``). So ``m.peak_rss_mib`` is the peak of the solve itself, and
``m.peak_rss_mib - m.rss_before_mib`` its memory above the data. Where the counter cannot be reset
the peak falls back to ``ru_maxrss`` (the process's lifetime peak, warm-up included) and
``m.peak_source`` says so. The memory functions are the package's
(:mod:`infpush_cvx.benchmarking.memory`, which the benchmark runner's rows use too).

The parent (:func:`run`) waits for three phases, each with its own limit: setup (start-up,
imports, warm-up, data), the timed call (``timeout``), and what the target does after it
(objective checks). A phase that runs over, or a child that dies or raises, ends that child
(terminate, then kill; only the process started here) and yields a row whose ``status`` says what
happened (``"timeout"``, ``"failed: ..."``), never an exception in the caller.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue as _queue
import time
import traceback

from infpush_cvx.benchmarking.memory import (Memory, current_rss_mib,  # noqa: F401
                                             lifetime_peak_rss_mib, reset_peak_rss)

#: Environment of every measuring process: single-threaded numerical libraries.
THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "RAYON_NUM_THREADS": "1",  # Clarabel's Rust linear algebra (faer) runs on a rayon pool
}


class Measurement(Memory):
    """Filled in by :meth:`Probe.measure`: ``time_s``, ``rss_before_mib``, ``peak_rss_mib``."""

    time_s: float = float("nan")

    def as_dict(self) -> dict:
        return {"time_s": self.time_s, "rss_before_mib": self.rss_before_mib,
                "peak_rss_mib": self.peak_rss_mib, "peak_source": self.peak_source}


class Probe:
    """Handed to the target in the child; tells the parent where the timed call starts and ends."""

    def __init__(self, channel):
        self._channel = channel
        self.measurement = None

    def measure(self):
        return _Timed(self)


class _Timed:
    def __init__(self, probe: Probe):
        self.probe = probe
        self.m = Measurement()
        self.reset = False

    def __enter__(self) -> Measurement:
        self.m.rss_before_mib = current_rss_mib()
        self.reset = reset_peak_rss()
        self.probe._channel.put(("ready", None))
        self.t0 = time.perf_counter()
        return self.m

    def __exit__(self, exc_type, exc, tb):
        self.m.time_s = time.perf_counter() - self.t0
        self.m.read_peak(self.reset)
        self.probe.measurement = self.m
        if exc_type is None:  # a failed call is reported in the solve phase, with its time
            self.probe._channel.put(("solved", None))
        return False


def _child(target, args, channel):
    import warnings
    warnings.simplefilter("ignore")  # non-convergence is reported by the row's status
    probe = Probe(channel)
    try:
        row = dict(target(probe, *args) or {})
        if probe.measurement is not None:
            row = {**probe.measurement.as_dict(), **row}
        channel.put(("done", row))
    except BaseException as exc:  # reported as the row's status
        done = probe.measurement.as_dict() if probe.measurement is not None else {}
        channel.put(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc(), done))


def _wait(proc, channel, limit):
    """The next message from the child, or ("timeout",) / ("died", exitcode)."""
    deadline = time.monotonic() + limit
    while True:
        try:
            return channel.get(timeout=max(0.0, min(0.5, deadline - time.monotonic())))
        except _queue.Empty:
            pass
        if not proc.is_alive():
            try:  # a last message may still be in the pipe
                return channel.get(timeout=0.5)
            except _queue.Empty:
                return ("died", proc.exitcode)
        if time.monotonic() >= deadline:
            return ("timeout",)


def _stop(proc):
    if proc.is_alive():
        proc.terminate()
        proc.join(5)
    if proc.is_alive():
        proc.kill()
    proc.join()


def run(target, *args, timeout: float, setup_timeout: float = 600.0,
        after_timeout: float = 300.0, grace: float = 5.0, threads: int | None = 1) -> dict:
    """Run ``target(probe, *args)`` in a fresh process (single-threaded unless ``threads`` says
    otherwise) and return its row.

    ``timeout`` bounds the timed call (``grace`` seconds more are allowed so that a solver given
    the same ``time_limit`` can return its own status first). On failure the row holds
    ``status`` and ``error`` only (plus ``time_s`` = the limit on a timeout). ``threads``: the
    numerical libraries' threads in that process (:data:`THREAD_ENV`), or None for their own
    defaults (what a user gets without setting them).
    """
    for name in THREAD_ENV:  # (inherited by the spawned interpreter)
        if threads is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = str(threads)
    ctx = mp.get_context("spawn")
    channel = ctx.Queue()
    proc = ctx.Process(target=_child, args=(target, args, channel), daemon=True)
    proc.start()
    try:
        for phase, limit in (("setup", setup_timeout), ("solve", timeout + grace),
                             ("after the solve", after_timeout)):
            msg = _wait(proc, channel, limit)
            if msg[0] == "done":
                return msg[1]
            if msg[0] == "error":
                return {**msg[3], "status": "failed" if phase == "solve" else f"failed ({phase})",
                        "error": msg[1], "traceback": msg[2]}
            if msg[0] == "timeout":
                row = {"status": "timeout" if phase == "solve" else f"timeout ({phase})",
                       "error": f"over {limit:g} s in {phase}"}
                if phase == "solve":
                    row["time_s"] = float(timeout)
                return row
            if msg[0] == "died":
                return {"status": "failed", "error": f"process died (exit code {msg[1]}) "
                                                     f"during {phase}"}
            # "ready" ends the setup phase, "solved" the solve phase
        msg = _wait(proc, channel, after_timeout)
        if msg[0] == "done":
            return msg[1]
        return {"status": "failed", "error": f"unexpected message {msg[0]!r}"}
    finally:
        _stop(proc)


def write_csv(path, rows: list[dict]) -> None:
    """``rows`` to the CSV file ``path`` (atomically), one column for every key any row has
    (sorted; a failed run's traceback left out)."""
    import csv

    from infpush_cvx.files import atomic_open

    keys = sorted({k for r in rows for k in r if k != "traceback"})
    with atomic_open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def print_header(script: str, columns: list, detail: str, width: int = 10) -> None:
    """A run's two header lines: ``# script: python, machine, single-threaded processes,
    detail``, then ``columns`` right-aligned in ``width`` characters (the rows'
    :func:`print_row`)."""
    import platform

    print(f"# {script}: python {platform.python_version()}, {platform.machine()}, "
          f"single-threaded processes ({', '.join(sorted(THREAD_ENV))}=1), {detail}")
    print("  ".join(f"{c:>{width}}" for c in columns))


def print_row(row: dict, columns: list, width: int = 10) -> None:
    """``row``'s values of ``columns`` on one line, as :func:`print_header` aligns them: floats
    to 3 significant digits, a missing value blank."""
    def cell(v) -> str:
        if v is None:
            return " " * width
        if isinstance(v, float):
            return f"{v:>{width}.3g}"
        return f"{v!s:>{width}}"
    print("  ".join(cell(row.get(c)) for c in columns), flush=True)
