"""A run stopped by a signal keeps what it did, and every time limit holds (issue 26).

SIGINT 5 s into ``check --cvxpy CLARABEL ECOS SCS`` used to go on, exit 1, and record SCS as
``solver_error``; ``kill -9`` left no row on disk; ``check`` and ``bench --executor serial``
overran their time limits by up to minutes (CVXPY's compilation, SCS's set-up, ECOS with no
limit of its own). The subprocess runs below are started in a session of their own and
signalled as a terminal does, the whole process group at once (workers included).
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from infpush_cvx import cli
from infpush_cvx.benchmarking import Instance, SerialExecutor, Task, run_benchmark
from infpush_cvx.benchmarking.partial import partial_path

#: CLARABEL and ECOS solve it in about 0.1 s each, SCS takes several seconds: a signal sent
#: once two rows are on disk reaches the run while SCS solves.
SLOW = "pnorm_planted_m_64"
CHECK = ["check", "--problems", SLOW, "--cvxpy", "CLARABEL", "ECOS", "SCS", "--native",
         "--no-progress"]
ENV = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).resolve().parents[2])}
#: Generous bound on a time-limit overrun on a loaded 2-core machine (measured: about 0.1 s).
SLACK = 3.0


def start(tmp_path, argv):
    log = open(tmp_path / "stderr.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "infpush_cvx.cli", *argv], cwd=tmp_path,
                            env=ENV, stdout=subprocess.DEVNULL, stderr=log,
                            start_new_session=True)
    log.close()
    return proc


def wait_for_rows(proc, partial, n, tmp_path, timeout=120.0):
    """The rows in ``partial`` once it holds ``n`` of them (the run still going)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the run ended ({proc.returncode}) before {n} rows:\n"
                        + (tmp_path / "stderr.log").read_text())
        if partial.exists():
            try:
                rows = pd.read_csv(partial)
            except (pd.errors.EmptyDataError, pd.errors.ParserError):
                rows = ()
            if len(rows) >= n:
                return rows
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    pytest.fail(f"no {n} rows in {partial} after {timeout} s")


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_run_keeps_its_rows_and_marks_the_running_solve(signum, code,
                                                                           tmp_path):
    out = tmp_path / "x.csv"
    proc = start(tmp_path, [*CHECK, "--out", str(out)])
    wait_for_rows(proc, partial_path(out), 2, tmp_path)
    time.sleep(0.3)  # SCS is solving
    os.killpg(proc.pid, signum)  # as Ctrl-C does: the whole process group
    assert proc.wait(timeout=60) == code, (tmp_path / "stderr.log").read_text()
    err = (tmp_path / "stderr.log").read_text()
    assert "2 finished and 1 interrupted solves saved" in err, err
    table = pd.read_csv(out)
    assert list(table["solver"]) == ["CLARABEL", "ECOS", "SCS"]
    assert list(table["status"]) == ["optimal", "optimal", "interrupted"]
    assert not table["error"].fillna("").str.contains("solver_error").any()
    assert "SIGTERM" in table["error"].iloc[-1] if signum == signal.SIGTERM else \
        "SIGINT" in table["error"].iloc[-1]
    # nothing else is left: no .partial file, no temporary file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stderr.log", "x.csv"]


def _gone(pid, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        with open(f"/proc/{pid}/stat") if os.path.exists(f"/proc/{pid}/stat") else \
                open(os.devnull) as fh:  # a zombie (not reaped yet) is gone too
            if ") Z " in fh.read():
                return True
        time.sleep(0.1)
    return False


def test_kill_9_leaves_every_finished_row_on_disk(tmp_path):
    """``kill -9`` of a ``bench`` left no row on disk."""
    out = tmp_path / "bench"
    proc = start(tmp_path, ["bench", "--problems", SLOW, "--cvxpy", "CLARABEL", "ECOS", "SCS",
                            "--native", "--executor", "serial", "--no-progress",
                            "--out", str(out)])
    deadline = time.monotonic() + 120
    while not list(out.glob("*.partial")) and time.monotonic() < deadline:
        assert proc.poll() is None, (tmp_path / "stderr.log").read_text()
        time.sleep(0.05)
    [partial] = out.glob("*.csv.partial")
    rows = wait_for_rows(proc, partial, 2, tmp_path)
    os.kill(proc.pid, signal.SIGKILL)  # the parent only: its worker must not live on
    proc.wait(timeout=30)
    kept = pd.read_csv(partial)
    assert len(kept) >= 2 and list(kept["solver"][:2]) == ["CLARABEL", "ECOS"]
    assert (kept["status"][:2] == "optimal").all() and kept["agrees"][:2].all()
    worker = int(rows["pid"].iloc[0])
    assert worker != proc.pid and _gone(worker), "the worker outlived its killed parent"


@pytest.mark.parametrize("command", ["check", "bench"])
def test_check_and_serial_bench_hold_the_time_limit(command, tmp_path, capsys):
    """SCS's set-up is not counted in its own limit (+14.8 s past a 2 s limit in check); here
    SCS (7 s without a limit) stops by its own limit or is killed at it, whichever is first."""
    limit = 1.0
    argv = ["--problems", SLOW, "--cvxpy", "SCS", "--native", "--no-progress",
            "--time-limit", str(limit)]
    if command == "check":
        argv = ["check", *argv, "--out", str(tmp_path / "x.csv")]
    else:
        argv = ["bench", *argv, "--executor", "serial", "--out", str(tmp_path / "b")]
    started = time.perf_counter()
    assert cli.main(argv) == 0  # a solve stopped at its limit is reported, not a failure
    wall = time.perf_counter() - started
    [table] = [tmp_path / "x.csv"] if command == "check" else (tmp_path / "b").glob("*.csv")
    [row] = pd.read_csv(table).to_dict("records")
    # killed at the limit ("timeout"), stopped by the solver's own limit, or by the solve's
    # deadline between CVXPY's stages ("time_limit": compiling used the time up)
    assert row["status"] in ("timeout", "optimal_inaccurate", "user_limit", "time_limit")
    assert not row["agrees"]
    assert row["time"] < limit + SLACK, row["time"]
    assert wall < 60


def test_a_solver_without_a_time_limit_is_stopped_at_it_by_the_serial_executor():
    """ECOS (no limit of its own) ran 163 s past a 2 s limit on a 600 x 600 x 20 problem."""
    big = Instance("planted_600x600x20", "planted_bipartite",
                   (("m", 600), ("n", 600), ("d", 20), ("seed", 0)),
                   options=(("penalty", "l2"), ("scaling", "paper"), ("form", "compact")),
                   lam=0.1)
    limit = 1.0
    [row] = run_benchmark([Task(big, "cvxpy", "ECOS", timeout=limit)],
                          SerialExecutor(warmup=False), progress=False).to_dict("records")
    # killed at the limit, or stopped by the solve's deadline once compiling had used it up
    # (checked between CVXPY's stages): never 163 s past it
    assert row["status"] in ("timeout", "time_limit") and row["executor"] == "serial"
    assert limit <= row["time"] < limit + SLACK
