"""Issue 26 tried again by someone who had not seen the tests: the run path's promises (results
never lost, paths kept in their folders, time limits, one-line errors, Ctrl-C at once) under
inputs the first round of tests did not use. Each test names the reproducer it came from."""

import os
import signal
import stat
from pathlib import Path

import pandas as pd
import pytest

from infpush_cvx import cli
from infpush_cvx.benchmarking.partial import PartialTable
from cli_runs import run_cli  # tests/reliability/cli_runs.py

LP = "rank2plan_pairs_dense_compact"     # HiGHS solves it in milliseconds
CHECK = ["check", "--problems", LP, "--cvxpy", "HIGHS", "--native", "--no-progress"]
BENCH = ["bench", "--problems", LP, "--cvxpy", "HIGHS", "--native", "--executor", "serial",
         "--no-progress"]


def one_line_error(err: str, *words) -> None:
    err = err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    for word in words:
        assert word in err, err


# -- the .partial file: the run's own name, never a link, a FIFO or a folder -----------------

def _make_fifo(path):
    os.mkfifo(path)


def _make_folder(path):
    path.mkdir()


@pytest.mark.parametrize("make, kind", [(_make_fifo, "FIFO"), (_make_folder, "folder")])
def test_check_refuses_a_partial_path_that_is_not_a_regular_file(make, kind, no_solving,
                                                                  tmp_path, capsys):
    """``mkfifo r.csv.partial; check --out r.csv`` hung for ever after its first solve (the
    open for writing waits for a reader); a folder there ended the run at its first row."""
    out = tmp_path / "r.csv"
    make(tmp_path / "r.csv.partial")
    code, _, err = run_cli([*CHECK, "--out", str(out)], capsys)
    assert code == 2
    one_line_error(err, "--out", "r.csv.partial", kind)


def test_a_link_at_the_partial_path_is_refused_and_its_target_left_alone(no_solving, tmp_path,
                                                                       capsys):
    """``ln -s ~/notes.txt r.csv.partial; check --out r.csv`` replaced notes.txt, outside the
    run's folder, by the run's rows."""
    victim = tmp_path / "elsewhere" / "notes.txt"
    victim.parent.mkdir()
    victim.write_text("precious\n")
    (tmp_path / "r.csv.partial").symlink_to(victim)
    code, _, err = run_cli([*CHECK, "--out", str(tmp_path / "r.csv")], capsys)
    assert code == 2
    one_line_error(err, "--out", "symbolic link")
    assert victim.read_text() == "precious\n"


def test_the_partial_table_never_writes_through_a_link_that_appears_later(tmp_path):
    """The check runs before the run; a link made afterwards is not followed either."""
    victim = tmp_path / "notes.txt"
    victim.write_text("precious\n")
    table = PartialTable(tmp_path / "r.csv", ["a"])
    table.check()
    table.path.symlink_to(victim)
    with pytest.raises(OSError, match="r.csv.partial"):
        table.append({"a": 1})
    assert victim.read_text() == "precious\n"


def test_a_partial_file_left_by_a_killed_run_is_replaced(tmp_path):
    table = PartialTable(tmp_path / "r.csv", ["a"])
    table.path.write_text("a\nold\n")
    table.check()
    table.append({"a": 1})
    table.close()
    assert table.path.read_text() == "a\n1\n"
    assert stat.S_ISREG(os.lstat(table.path).st_mode)


# -- time limits: any accepted value holds; the rest are usage errors -------------------------

@pytest.mark.parametrize("command", [CHECK, BENCH, ["solve", LP, "--solver", "HIGHS"]])
@pytest.mark.parametrize("value", ["1e20", "1e308", "inf", "nan", "0", "-1"])
def test_a_time_limit_out_of_range_is_a_usage_error(command, value, no_solving, capsys):
    """``--time-limit 1e20`` failed after the warm-up with exit 3 (an OverflowError of the
    clock the executor waits on); 1e308 likewise."""
    code, _, err = run_cli([*command, "--time-limit", value], capsys)
    assert code == 2
    one_line_error(err, "--time-limit", value)


def test_the_executor_waits_for_a_huge_time_limit_in_pieces(monkeypatch):
    """A library caller's Task(timeout=1e20) ran into the same overflow."""
    from infpush_cvx.benchmarking import executors
    from infpush_cvx.benchmarking.tasks import Task
    waits = []
    real_wait = executors.wait

    def recording_wait(objects, timeout=None):
        waits.append(timeout)
        return real_wait(objects, timeout)
    monkeypatch.setattr(executors, "wait", recording_wait)
    [(_, row)] = list(executors.SerialExecutor(warmup=False).run(
        [Task(LP, "cvxpy", "HIGHS", timeout=1e20)]))
    assert row["status"] == "optimal", row.get("error")
    assert max(w for w in waits if w is not None) <= executors.MAX_WAIT


# -- Ctrl-C at once, while the workers still warm up -------------------------------------------

def test_ctrl_c_while_the_workers_warm_up_kills_them_at_once(monkeypatch):
    """``bench`` interrupted 3 s in (the workers importing and warming up) took 10.6 s to stop:
    each worker was sent a stop message it does not read before it is ready, then waited for
    5 s. Now every worker is killed."""
    import time
    from infpush_cvx.benchmarking import executors
    from infpush_cvx.benchmarking.tasks import Task
    started = []
    real_worker = executors._Worker

    def worker(*args, **kwargs):
        started.append(real_worker(*args, **kwargs))
        return started[-1]

    def interrupted_wait(objects, timeout=None):
        raise KeyboardInterrupt
    monkeypatch.setattr(executors, "_Worker", worker)
    monkeypatch.setattr(executors, "wait", interrupted_wait)
    tasks = [Task(LP, "cvxpy", "HIGHS", timeout=60.0, repeat=k) for k in range(2)]
    begin = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        list(executors.ProcessExecutor(n_workers=2).run(tasks))
    assert len(started) == 2
    assert all(w.proc.exitcode == -signal.SIGKILL for w in started)
    assert time.perf_counter() - begin < 4.5  # not 5 s a worker (measured: 0.3 s)


# -- report: what it reads is checked, and never replaced ---------------------------------------

def _results(tmp_path, name="run.csv", **changes):
    row = {"problem": "p1", "kind": "cvxpy", "solver": "CLARABEL", "repeat": 0,
           "status": "optimal", "agrees": True, "objective": 1.0, "reference": 1.0,
           "rel_error": 0.0, "gap": None, "iterations": 10, "compile_time": 0.0,
           "setup_time": 0.0, "solve_time": 0.1, "time": 0.1}
    path = tmp_path / name
    pd.DataFrame([row, {**row, "solver": "ECOS", **changes}]).to_csv(path, index=False)
    return path


def test_report_refuses_to_replace_the_table_it_reads(tmp_path, capsys):
    """``report run/comparison.csv --out run`` replaced the results table by its comparison."""
    table = _results(tmp_path, "comparison.csv")
    before = table.read_bytes()
    code, _, err = run_cli(["report", str(table), "--out", str(tmp_path)], capsys)
    assert code == 2
    one_line_error(err, "--out", "comparison.csv")
    assert table.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["comparison.csv"]


@pytest.mark.parametrize("column", ["time", "objective", "reference", "gap", "iterations"])
def test_report_names_the_column_of_a_text_value(column, tmp_path, capsys):
    """``report`` on a table with "abc" in a numeric column failed with exit 3 (TypeError:
    dtype 'str' does not support operation 'median')."""
    table = _results(tmp_path, **{column: "abc"})
    code, _, err = run_cli(["report", str(table), "--out", str(tmp_path / "r")], capsys)
    assert code == 2
    one_line_error(err, str(table), repr(column), "'abc'", "data row 2")
    assert not (tmp_path / "r").exists()


def test_report_reads_the_partial_file_of_a_run_that_did_not_end(tmp_path, capsys, caplog):
    """``report r.csv.partial`` said that ``r.csv.partial.csv`` did not exist; a run killed
    while it appended a row leaves that row cut."""
    partial = _results(tmp_path, "r.csv.partial")
    with open(partial, "a") as fh:
        fh.write("p2,cvxpy,SC")
    code, out, err = run_cli(["report", str(partial)], capsys)
    assert code == 0, err
    assert "last line was cut" in caplog.text
    comparison = pd.read_csv(tmp_path / "r_report" / "comparison.csv")
    assert sorted(comparison["solver"]) == ["CLARABEL", "ECOS"]


def test_report_says_a_fifo_is_not_a_regular_file(tmp_path, capsys):
    fifo = tmp_path / "t.csv"
    os.mkfifo(fifo)
    code, _, err = run_cli(["report", str(fifo), "--out", str(tmp_path / "r")], capsys)
    assert code == 2
    one_line_error(err, str(fifo), "not a regular file")


def test_report_names_metadata_that_is_not_json(tmp_path, capsys):
    table = _results(tmp_path)
    (tmp_path / "run.json").write_text('{"a":')
    code, _, err = run_cli(["report", str(table), "--out", str(tmp_path / "r")], capsys)
    assert code == 0
    assert "run metadata not used" in err and str(tmp_path / "run.json") in err


# -- SIGHUP, and a second signal while the run saves ---------------------------------------------

SLOW = "pnorm_planted_m_64"   # CLARABEL and ECOS in about 0.1 s, SCS several seconds
SLOW_CHECK = ["check", "--problems", SLOW, "--cvxpy", "CLARABEL", "ECOS", "SCS", "--native",
              "--no-progress"]


@pytest.mark.parametrize("signals, code", [((signal.SIGHUP,), 129),
                                           ((signal.SIGINT, signal.SIGINT), 130),
                                           ((signal.SIGINT, signal.SIGTERM), 130)])
def test_a_hang_up_or_a_second_signal_still_saves_the_run(signals, code, tmp_path):
    """SIGHUP (the terminal closed) killed ``check`` and ``bench`` at once: no final table, no
    message, the workers left solving. A second Ctrl-C 20 ms after the first cut the save
    short: the final table was never written."""
    import subprocess
    import sys
    import time
    from infpush_cvx.benchmarking.partial import partial_path
    out = tmp_path / "x.csv"
    env = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).resolve().parents[2])}
    with open(tmp_path / "stderr.log", "wb") as log:
        # SIGHUP at its default in the child: the CLI keeps an ignored SIGHUP ignored (nohup),
        # and a suite run under nohup would hand the child that disposition
        proc = subprocess.Popen([sys.executable, "-m", "infpush_cvx.cli", *SLOW_CHECK, "--out",
                                 str(out)], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                                stderr=log, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
    partial, deadline = partial_path(out), time.monotonic() + 120
    while not (partial.exists() and partial.read_text().count("\n") >= 3):  # header, 2 rows
        assert proc.poll() is None and time.monotonic() < deadline, \
            (tmp_path / "stderr.log").read_text()
        time.sleep(0.05)
    time.sleep(0.3)  # SCS is solving
    for k, signum in enumerate(signals):
        if k:
            time.sleep(0.02)
        os.killpg(proc.pid, signum)
    assert proc.wait(timeout=60) == code, (tmp_path / "stderr.log").read_text()
    err = (tmp_path / "stderr.log").read_text()
    assert "2 finished and 1 interrupted solves saved" in err, err
    table = pd.read_csv(out)
    assert list(table["status"]) == ["optimal", "optimal", "interrupted"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stderr.log", "x.csv"]
    # no worker is left solving: they die with the run (a zombie not reaped yet is gone too)
    time.sleep(0.5)
    left = subprocess.run(["ps", "-o", "stat=", "-s", str(proc.pid)], capture_output=True,
                          text=True).stdout.split()
    assert [state for state in left if not state.startswith("Z")] == []


# -- outputs: a loop of links, and generate's every file, refused before any work --------------

def _loop(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    return tmp_path / "a"


@pytest.mark.parametrize("command", [CHECK, BENCH, ["prox", "--sizes", "10", "--repeats", "1"]])
def test_a_loop_of_symbolic_links_as_out_is_refused_before_any_work(command, no_solving,
                                                                     tmp_path, capsys,
                                                                     monkeypatch):
    """``check --out loop`` (loop -> other -> loop) solved everything, then failed to save
    (ELOOP; the rows left in loop.partial); ``bench --out loop`` failed at its first row."""
    from infpush_cvx.benchmarking import prox_timing
    monkeypatch.setattr(prox_timing, "time_projection",
                        lambda *a, **k: pytest.fail("prox timed before checking --out"))
    loop = _loop(tmp_path)
    code, _, err = run_cli([*command, "--out", str(loop)], capsys)
    assert code == 2
    one_line_error(err, "--out", "loop of symbolic links")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_generate_checks_every_file_before_writing_the_first(tmp_path, capsys):
    """``generate --instances planted_s planted_m`` with a FIFO at planted_m.npz wrote
    planted_s.npz, then failed with exit 3."""
    os.mkfifo(tmp_path / "planted_m.npz")
    code, _, err = run_cli(["generate", "--instances", "planted_s", "planted_m", "--out",
                            str(tmp_path)], capsys)
    assert code == 2
    one_line_error(err, "--out", "planted_m.npz", "FIFO")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["planted_m.npz"]


def test_generate_writes_a_repeated_instance_once(tmp_path, capsys):
    code, out, _ = run_cli(["generate", "--instances", "planted_s", "planted_s", "--out",
                            str(tmp_path)], capsys)
    assert code == 0 and out.count("planted_s") == 2  # one line: name, then path


# -- bounds of the other numeric options ----------------------------------------------------------

@pytest.mark.parametrize("argv, option", [
    ([*BENCH, "--tol", "1e308"], "--tol"), ([*CHECK, "--tol", "1"], "--tol"),
    (["solve", LP, "--solver", "HIGHS", "--tol", "2"], "--tol"),
    ([*BENCH[:-3], "--workers", "100000"], "--workers"),
    ([*BENCH[:-3], "--workers", "0"], "--workers")])
def test_tolerances_and_workers_out_of_range_are_usage_errors(argv, option, no_solving,
                                                              capsys):
    """``--tol 1e308`` made the agreement tolerance infinite (``tolerance inf``: any answer
    agreed); ``--workers 100000`` would start one process per task, 250 MB each."""
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    one_line_error(err, option)


@pytest.mark.parametrize("argv", [CHECK, BENCH, ["generate", "--instances", "planted_s"],
                                  ["prox", "--sizes", "10"], ["report", "t.csv"]])
def test_an_empty_out_is_a_usage_error(argv, no_solving, tmp_path, capsys, monkeypatch):
    """``bench --out ""`` wrote the run's files into the working folder, ``report`` and
    ``generate`` too."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli([*argv, "--out", ""], capsys)
    assert code == 2
    one_line_error(err, "--out", "empty")
    assert list(tmp_path.iterdir()) == []


def test_regenerate_never_writes_through_a_link_in_the_reference_folder(tmp_path):
    """A record that is a link to a file elsewhere: ``reference regenerate --accept-changes``
    replaced that file, outside the reference folder, by the new record."""
    from infpush_cvx.catalog import reference
    folder, elsewhere = tmp_path / "refs", tmp_path / "elsewhere.txt"
    folder.mkdir()
    elsewhere.write_text("precious\n")
    (folder / f"{LP}.json").symlink_to(elsewhere)
    with pytest.raises(ValueError, match="symbolic link"):
        reference.regenerate([LP], accept_changes=True, directory=folder)
    assert elsewhere.read_text() == "precious\n"


# -- closed standard streams --------------------------------------------------------------------

def _run_closed(argv, fd, tmp_path):
    import subprocess
    import sys
    env = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).resolve().parents[2])}
    return subprocess.run([sys.executable, "-m", "infpush_cvx.cli", *argv], cwd=tmp_path,
                          env=env, capture_output=fd != 2, preexec_fn=lambda: os.close(fd),
                          timeout=300)


def test_a_closed_stdout_keeps_the_table_and_is_named(tmp_path):
    """``infpush-cvx list >&-`` and ``check ... >&-`` failed with exit 3, an AttributeError."""
    proc = _run_closed(["list"], 1, tmp_path)
    assert proc.returncode == 2
    one_line_error(proc.stderr.decode(), "<stdout>")
    out = tmp_path / "c.csv"
    proc = _run_closed([*CHECK, "--out", str(out)], 1, tmp_path)
    assert proc.returncode == 2, proc.stderr.decode()
    assert pd.read_csv(out)["agrees"].all()


def test_a_closed_stderr_loses_the_messages_not_the_run(tmp_path):
    """``check ... 2>&-`` ended with exit 1 and no table: the progress bar's first write to the
    closed stderr failed; ``solve nope --solver X 2>&-`` exited 1, not 2."""
    out = tmp_path / "c.csv"
    proc = _run_closed([*CHECK[:-1], "--out", str(out)], 2, tmp_path)  # with the progress bar
    assert proc.returncode == 0
    assert pd.read_csv(out)["agrees"].all()
    assert _run_closed(["solve", "nope", "--solver", "X"], 2, tmp_path).returncode == 2


@pytest.mark.parametrize("argv", [CHECK, BENCH, ["solve", LP, "--solver", "HIGHS"],
                                  ["reference", "verify", "--only", LP]])
@pytest.mark.parametrize("make, words", [(lambda p: None, "does not exist"),
                                         (lambda p: p.write_text("x"), "is not a folder")])
def test_a_reference_folder_that_is_not_one_is_a_usage_error(argv, make, words, no_solving,
                                                             tmp_path, monkeypatch, capsys):
    """INFPUSH_CVX_REFERENCE_DIR mistyped: every solve "disagreed" with a value it could not
    find (exit 1); set to a file, the error named a record, not the variable."""
    from infpush_cvx.catalog import reference
    folder = tmp_path / "refs"
    make(folder)
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(folder))
    monkeypatch.setattr(reference, "verify", lambda *a, **k: pytest.fail("verified"))
    code, _, err = run_cli([*argv, "--out", str(tmp_path / "o")] if argv[0] in ("check", "bench")
                           else argv, capsys)
    assert code == 2
    one_line_error(err, str(folder), words, "INFPUSH_CVX_REFERENCE_DIR")


def test_a_long_file_name_is_written_and_a_too_long_partial_name_refused_first(
        tmp_path, no_solving, capsys):
    """A 250-character --out name (255 allowed) was refused: the temporary file's name, which
    repeated it, was too long. A name whose .partial file cannot exist is refused before any
    solve, naming that file."""
    from infpush_cvx.files import write_text_atomic
    long_name = tmp_path / ("a" * 246 + ".csv")
    write_text_atomic(long_name, "x\n")
    assert long_name.read_text() == "x\n" and list(tmp_path.iterdir()) == [long_name]
    code, _, err = run_cli([*CHECK, "--out", str(long_name)], capsys)
    assert code == 2
    one_line_error(err, "--out", ".partial", "too long")


# -- a missing extra turns off its feature, not the run ---------------------------------------

def _without(modules, *argv, cwd):
    import subprocess
    import sys
    env = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).resolve().parents[2])}
    code = ("import sys\n" f"for name in {list(modules)!r}: sys.modules[name] = None\n"
            "from infpush_cvx import cli\nsys.exit(cli.main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_bench_with_dask_missing_is_a_usage_error(tmp_path):
    """``bench --executor dask`` without dask failed with exit 3 (ModuleNotFoundError)."""
    proc = _without(["dask", "distributed", "dask.distributed"], *BENCH[:-3], "--executor",
                    "dask", "--no-progress", "--out", str(tmp_path / "b"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    one_line_error(proc.stderr, "--executor dask", "'dask' extra")
    assert not (tmp_path / "b").exists()


def test_report_of_a_stem_without_pyarrow_reads_the_csv_file(tmp_path):
    """``report run`` (a stem, run.csv and run.parquet beside) without pyarrow picked the
    Parquet file, which it could not read (exit 2), over the CSV file."""
    table = _results(tmp_path, "run.csv")
    pd.read_csv(table).to_parquet(tmp_path / "run.parquet")
    proc = _without(["pyarrow", "fastparquet"], "report", str(tmp_path / "run"), "--out",
                    str(tmp_path / "r"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r" / "comparison.csv").exists()
    assert str(table) in (tmp_path / "r" / "report.html").read_text()  # its source: the CSV


# -- links of /proc: they lead to an open file, not to a name -----------------------------------

def test_out_to_dev_stdout_on_a_pipe_is_refused_as_a_fifo(tmp_path):
    """``check --out /dev/stdout | cat`` said "cannot write to /dev/stdout: No such file or
    directory" (the link leads to ``pipe:[123]``, which names no file)."""
    import subprocess
    import sys
    env = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-m", "infpush_cvx.cli", *CHECK, "--out",
                           "/dev/stdout"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2
    one_line_error(proc.stderr, "--out", "/dev/stdout", "FIFO")


def test_out_to_the_proc_link_of_a_deleted_file_is_refused(tmp_path, no_solving, capsys):
    """The link names ``/tmp/x (deleted)``; the atomic write would have replaced the link."""
    opened = tmp_path / "x.csv"
    with open(opened, "w") as fh:
        opened.unlink()
        code, _, err = run_cli([*CHECK, "--out", f"/proc/self/fd/{fh.fileno()}"], capsys)
    assert code == 2
    one_line_error(err, "--out", "no name")


def test_reference_verify_checks_a_repeated_id_once(capsys):
    code, out, _ = run_cli(["reference", "verify", "--only", LP, LP, "--no-resolve"], capsys)
    assert code == 0 and "1 of 1 stored value matches" in out


def test_prox_sizes_beyond_memory_are_a_usage_error(capsys, monkeypatch):
    """``prox --sizes 100000`` (a 74.5 GiB matrix) failed with exit 3, a MemoryError."""
    from infpush_cvx.benchmarking import prox_timing
    monkeypatch.setattr(prox_timing, "time_projection", lambda *a, **k: pytest.fail("timed"))
    code, _, err = run_cli(["prox", "--sizes", "100", "100000"], capsys)
    assert code == 2
    one_line_error(err, "--sizes", "100000")
