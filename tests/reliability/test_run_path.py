"""Results that cannot be lost (issue 26): outputs written through their real path, refused
when they are not regular files, saved before anything is printed, streamed to a ``.partial``
file as each solve ends, named in a full-disk error with every row kept, and written without
the optional extras (pyarrow, matplotlib) when those are missing."""

import csv
import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from infpush_cvx import benchmarking, cli
from infpush_cvx.benchmarking import compare, runner
from infpush_cvx.benchmarking.partial import PartialTable, partial_path
from infpush_cvx.files import atomic_open, check_writable, real_target, remove_stale_temporaries
from cli_runs import run_cli  # tests/reliability/cli_runs.py

LP = "rank2plan_pairs_dense_compact"     # HiGHS solves it in milliseconds
CHECK = ["check", "--problems", LP, "--cvxpy", "HIGHS", "--native", "--no-progress"]
BENCH = ["bench", "--problems", LP, "--cvxpy", "HIGHS", "--native", "--executor", "serial",
         "--no-progress"]
ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
#: Subprocesses import this checkout's package, whatever their working folder.
ENV = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).resolve().parents[2])}


def infpush_cvx(*argv, hide=()):
    """The command line in a new interpreter, where importing the modules ``hide`` fails."""
    return [sys.executable, "-c", "import sys\n"
            f"for name in {list(hide)!r}: sys.modules[name] = None\n"
            "from infpush_cvx import cli\nsys.exit(cli.main(sys.argv[1:]))", *argv]


def _hidden(folder):
    return sorted(p.name for p in Path(folder).rglob(".*"))


# -- outputs are written through the target, never over something that is not a file -----------

def test_out_through_a_symbolic_link_writes_the_file_it_points_to(tmp_path, capsys):
    target = tmp_path / "target.csv"
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    code, out, _ = run_cli([*CHECK, "--out", str(link)], capsys)
    assert code == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    table = pd.read_csv(target)
    assert list(table["solver"]) == ["HIGHS"] and table["agrees"].all()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "target.csv"]


def _fifo(tmp_path):
    path = tmp_path / "pipe.csv"
    os.mkfifo(path)
    return path


def _link_to_fifo(tmp_path):
    link = tmp_path / "link.csv"
    link.symlink_to(_fifo(tmp_path))
    return link


@pytest.mark.parametrize("make, kind", [
    (_fifo, "FIFO"), (lambda tmp: tmp, "folder"), (_link_to_fifo, "FIFO"),
    (lambda tmp: Path(os.devnull), "character device")])
def test_check_refuses_an_out_that_is_not_a_regular_file(make, kind, no_solving, tmp_path,
                                                         capsys):
    """``check --out /dev/null`` (as root) turned the device node into a regular file."""
    target = make(tmp_path)
    before = os.stat(target, follow_symlinks=True).st_mode
    code, _, err = run_cli([*CHECK, "--out", str(target)], capsys)
    assert code == 2
    err = err.strip()
    assert "\n" not in err and "--out" in err and str(target) in err and kind in err, err
    assert os.stat(target).st_mode == before


def test_bench_refuses_a_device_as_its_folder(no_solving, capsys):
    code, _, err = run_cli([*BENCH, "--out", os.devnull], capsys)
    assert code == 2 and "--out" in err and "not a folder" in err


def test_the_atomic_writer_refuses_a_fifo_and_follows_a_link(tmp_path):
    fifo = _fifo(tmp_path)
    with pytest.raises(ValueError, match="FIFO"), atomic_open(fifo) as fh:
        fh.write("x")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert real_target(tmp_path / "missing" / "x.csv") == tmp_path / "missing" / "x.csv"
    target = tmp_path / "t.txt"
    target.write_text("old")
    os.chmod(target, 0o640)  # the replaced file's permissions are kept
    (tmp_path / "l.txt").symlink_to(target)
    with atomic_open(tmp_path / "l.txt") as fh:
        fh.write("new")
    assert target.read_text() == "new" and (tmp_path / "l.txt").is_symlink()
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_check_writable_creates_nothing(tmp_path):
    out = tmp_path / "a" / "b" / "x.csv"
    assert check_writable(out) == out
    assert list(tmp_path.iterdir()) == []


# -- nothing printed before it is saved; the run's rows on disk as each solve ends -------------

def test_the_table_is_saved_before_it_is_printed(tmp_path):
    """``check --out r.csv | head -1`` exited 141 after the solves and never wrote r.csv."""
    out = tmp_path / "r.csv"
    proc = subprocess.Popen(infpush_cvx(*CHECK, "--out", str(out)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp_path, env=ENV)
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141, err
    assert list(pd.read_csv(out)["solver"]) == ["HIGHS"]
    assert not partial_path(out).exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_stdout_keeps_the_file_and_says_so(tmp_path):
    out = tmp_path / "r.csv"
    with open("/dev/full", "w") as full:
        proc = subprocess.run(infpush_cvx(*CHECK, "--out", str(out)), stdout=full,
                              stderr=subprocess.PIPE, cwd=tmp_path, env=ENV, timeout=300)
    err = proc.stderr.decode().strip()
    assert proc.returncode == 2, err
    assert err.endswith("No space left on device: '<stdout>'") and "Traceback" not in err, err
    assert list(pd.read_csv(out)["solver"]) == ["HIGHS"]


def test_every_row_reaches_the_partial_file_as_its_solve_ends(tmp_path):
    seen = []

    def on_row(row):  # the partial file holds every row before the next solve starts
        table.append(row)
        seen.append(len(pd.read_csv(table.path)))
    table = PartialTable(tmp_path / "x.csv", _columns())
    tasks = benchmarking.make_tasks([LP], cvxpy=["HIGHS", "CLARABEL"], native=[])
    benchmarking.benchmark(tasks, benchmarking.SerialExecutor(warmup=False), progress=False,
                           on_row=on_row)
    assert seen == [1, 2]
    assert list(pd.read_csv(table.path)["solver"]) == ["HIGHS", "CLARABEL"]
    table.discard()
    assert not table.path.exists()


def _columns():
    from infpush_cvx.benchmarking.tasks import COLUMNS, versions
    return COLUMNS + list(versions())


# -- a full disk names the file and keeps every row --------------------------------------------

def test_a_full_disk_names_the_table_and_keeps_the_rows(tmp_path, monkeypatch, capsys):
    """With 36 kB free, ``bench`` said ``[Errno 28] No space left on device`` naming no file
    and kept nothing. The solves run in a worker process; this process's writer fails."""
    def full(self, *args, **kwargs):
        raise ENOSPC
    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    out = tmp_path / "x.csv"
    code, out_text, err = run_cli([*CHECK, "--out", str(out)], capsys)
    err = err.strip()
    assert code == 2 and "\n" not in err, err
    assert "No space left on device" in err and str(out) in err and "partial" in err, err
    assert out_text == "" and not out.exists()  # nothing printed that was not saved
    monkeypatch.undo()
    kept = pd.read_csv(partial_path(out))
    assert list(kept["solver"]) == ["HIGHS"] and kept["agrees"].all()
    assert _hidden(tmp_path) == []  # no temporary file left


def test_a_full_disk_in_the_partial_file_names_it_and_keeps_the_rows(tmp_path):
    table = PartialTable(tmp_path / "x.csv", ["problem", "status"])
    table.append({"problem": "p1", "status": "optimal"})

    class Full:
        def write(self, text):
            raise ENOSPC

        def flush(self):
            pass
    table._writer = csv.DictWriter(Full(), table.columns)
    with pytest.raises(OSError, match="No space left") as caught:
        table.append({"problem": "p2", "status": "optimal"})
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(table.path)
    table.close()
    assert pd.read_csv(table.path).to_dict("records") == [{"problem": "p1",
                                                           "status": "optimal"}]


def test_bench_a_full_disk_for_the_figure_keeps_the_tables_and_the_summary(tmp_path,
                                                                          monkeypatch, capsys):
    """With 60 kB free the tables were written, the PNG failed and no summary was printed."""
    Figure = pytest.importorskip("matplotlib.figure").Figure

    def full(self, *args, **kwargs):
        raise ENOSPC
    monkeypatch.setattr(Figure, "savefig", full)
    code, out, err = run_cli([*BENCH, "--out", str(tmp_path / "b")], capsys)
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert "No space left on device" in last and "profile_time.png" in last, err
    assert "1 solve (1 task)" in out and "written:" in out
    [table] = (tmp_path / "b").glob("*.csv")
    assert list(pd.read_csv(table)["solver"]) == ["HIGHS"]
    [report] = (tmp_path / "b").glob("*_report")
    assert sorted(p.name for p in report.iterdir()) == ["comparison.csv", "report.html"]
    assert "Not written" in (report / "report.html").read_text()  # says the figure is missing
    assert _hidden(tmp_path) == [] and not list((tmp_path / "b").glob("*.partial"))


def test_bench_a_full_disk_for_the_tables_keeps_the_rows_and_makes_no_report_folder(
        tmp_path, monkeypatch, capsys):
    def full(self, *args, **kwargs):
        raise ENOSPC
    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    code, _, err = run_cli([*BENCH, "--out", str(tmp_path / "b")], capsys)
    assert code == 2 and "No space left" in err and ".csv" in err
    monkeypatch.undo()
    [partial] = (tmp_path / "b").glob("*.csv.partial")
    assert list(pd.read_csv(partial)["solver"]) == ["HIGHS"]
    assert not list((tmp_path / "b").glob("*_report")) and _hidden(tmp_path) == []


def test_generate_on_a_full_disk_names_the_file(tmp_path, monkeypatch, capsys):
    def full(*args, **kwargs):
        raise ENOSPC
    monkeypatch.setattr(np, "savez_compressed", full)
    code, _, err = run_cli(["generate", "--instances", "pairs_dense", "--out", str(tmp_path)],
                           capsys)
    assert code == 2 and "No space left on device" in err
    assert str(tmp_path / "pairs_dense.npz") in err, err
    assert list(tmp_path.iterdir()) == []


# -- missing extras turn their feature off, not the run ------------------------------------------

def test_bench_without_pyarrow_writes_csv_and_says_so(tmp_path):
    """Without the parquet extra, ``bench`` computed every solve, then failed with
    ``ImportError: Unable to find a usable engine`` and wrote nothing. (A new interpreter:
    pandas uses pyarrow in many places once it is imported.)"""
    proc = subprocess.run(infpush_cvx(*BENCH, "--out", str(tmp_path / "b"),
                                      hide=["pyarrow", "fastparquet"]),
                          capture_output=True, text=True, cwd=tmp_path, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "pyarrow is not installed" in proc.stderr and "CSV only" in proc.stderr
    names = sorted(p.suffix for p in (tmp_path / "b").iterdir() if p.is_file())
    assert names == [".csv", ".json"]
    meta = benchmarking.load_metadata(next((tmp_path / "b").glob("*.json")))
    assert "parquet" not in meta["files"] and meta["files"]["csv"].endswith(".csv")


def test_bench_without_matplotlib_writes_no_figure_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, out, err = run_cli([*BENCH, "--out", str(tmp_path / "b")], capsys)
    assert code == 0, err
    assert "matplotlib is not installed" in err
    [report] = (tmp_path / "b").glob("*_report")
    assert sorted(p.name for p in report.iterdir()) == ["comparison.csv", "report.html"]
    page = (report / "report.html").read_text()
    assert "Figures are off: matplotlib is not installed" in page and "<table>" in page


# -- temporary files -----------------------------------------------------------------------------

def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path, capsys):
    """A kill left ``.<id>.csv.*.tmp.csv`` files that nothing cleaned up."""
    import socket
    host = "".join(c if c.isalnum() or c == "-" else "-" for c in socket.gethostname())[:40]
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = tmp_path / f".x.csv.{dead}@{host}.abc12345.tmp.csv"
    alive = tmp_path / f".x.csv.{os.getpid()}@{host}.abc12345.tmp.csv"
    other = tmp_path / f".x.csv.{dead}@elsewhere.abc12345.tmp.csv"
    for path in (stale, alive, other):
        path.write_text("half")
    code, _, _ = run_cli([*CHECK, "--out", str(tmp_path / "x.csv")], capsys)
    assert code == 0
    assert not stale.exists() and alive.exists() and other.exists()
    assert remove_stale_temporaries(tmp_path) == []


def test_repeats_is_bounded_with_a_clear_error(no_solving, capsys):
    """``bench --repeats 99999999999999999999`` grew to 4.4 GB in two minutes."""
    code, _, err = run_cli(["bench", "--repeats", "99999999999999999999"], capsys)
    assert code == 2 and "--repeats" in err and str(cli.MAX_REPEATS) in err
    assert cli.MAX_REPEATS == runner.MAX_REPEATS
    with pytest.raises(ValueError, match="repeats"):
        benchmarking.make_tasks([LP], repeats=runner.MAX_REPEATS + 1)


# -- Ctrl-C: the rows so far, and an "interrupted" row for what was running ----------------------

class Interrupting:
    """An executor that finishes the first task, starts the second and is then interrupted."""

    name = "serial"

    def __init__(self, finish=1, *args, **kwargs):
        self.finish, self.started = finish, {}

    def run(self, tasks):
        from infpush_cvx.benchmarking.tasks import run_task
        for k in range(self.finish):
            self.started[k] = 0.0
            yield k, run_task(tasks[k])
        self.started[self.finish] = 0.0
        raise KeyboardInterrupt


def test_an_interrupted_run_keeps_its_rows_and_marks_the_running_task(tmp_path):
    tasks = benchmarking.make_tasks([LP], cvxpy=["HIGHS", "CLARABEL", "SCS"], native=[])
    streamed = []
    with pytest.raises(runner.RunInterrupted) as caught:
        benchmarking.benchmark(tasks, Interrupting(), progress=False, on_row=streamed.append)
    run = caught.value.run
    assert isinstance(caught.value, KeyboardInterrupt) and run.interrupted
    assert list(run.table["solver"]) == ["HIGHS", "CLARABEL"]  # SCS never started: no row
    assert list(run.table["status"]) == ["optimal", runner.INTERRUPTED]
    assert "SIGINT" in run.table["error"].iloc[1] and not run.table["agrees"].iloc[1]
    assert [r["status"] for r in streamed] == ["optimal", runner.INTERRUPTED]
    assert run.metadata["summary"]["interrupted"] == 1
    assert run.metadata["summary"]["not_started"] == 1


class InterruptedAtOnce(Interrupting):
    def run(self, tasks):
        raise KeyboardInterrupt
        yield


def test_ctrl_c_before_any_solve_keeps_the_previous_table(tmp_path, monkeypatch, capsys):
    out = tmp_path / "x.csv"
    out.write_text("previous\n")
    monkeypatch.setattr(compare, "SerialExecutor", InterruptedAtOnce)
    code, _, err = run_cli([*CHECK, "--out", str(out)], capsys)
    assert code == 130 and "nothing saved" in err and "interrupted" in err
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv"]
