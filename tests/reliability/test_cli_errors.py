"""The command line's errors: one line on stderr naming the argument or file, and exit codes
2 (usage: bad arguments or values, unreadable or malformed input), 1 (disagreement with the
stored values) and 3 (unexpected failure, with a hint to the full traceback); every solve is
bounded by a time limit, and a solver never runs on a problem class it does not handle."""

import re

import pandas as pd
import pytest

from infpush_cvx import catalog, cli
from infpush_cvx.benchmarking import SerialExecutor, compare
from infpush_cvx.benchmarking.tasks import Task, solve_task
from infpush_cvx.catalog import registry
from cli_runs import run_cli  # tests/reliability/cli_runs.py

QP = "ip_l2_planted_s_paper_compact"     # 20 x 30 x 5, the smallest l2 problem
LP = "rank2plan_pairs_dense_compact"


def assert_one_line(err, *texts):
    err = err.strip()
    assert err and "\n" not in err, err
    assert "error" in err and "Traceback" not in err, err
    for text in texts:
        assert text in err, err


# -- 1. one compatibility table for every entry point; every solve has a time limit ----------

def test_solve_refuses_highs_on_a_qp_before_solving(no_solving, capsys):
    code, out, err = run_cli(["solve", QP, "--solver", "HIGHS"], capsys)
    assert code == 2
    assert_one_line(err, "HIGHS", "QP", QP)


def test_the_library_refuses_highs_on_a_qp(no_solving):
    with pytest.raises(ValueError, match="HIGHS.*QP"):
        solve_task(Task(QP, "cvxpy", "HIGHS"))


@pytest.fixture
def in_process(monkeypatch):
    """Solves in this process, where the test's monkeypatches apply (the command line runs
    them in a worker process killed at the time limit)."""
    monkeypatch.setattr(SerialExecutor, "isolate", False)


@pytest.fixture
def solve_options(monkeypatch, in_process):
    """The options handed to the solver in every CVXPY solve (the backend's solve stage,
    ``SolvingChain.solve_via_data``; the solves still run)."""
    from cvxpy.reductions.solvers.solving_chain import SolvingChain
    seen = []
    real = SolvingChain.solve_via_data

    def recording(self, problem, data, warm_start, verbose, solver_opts, *args, **kwargs):
        seen.append(solver_opts)
        return real(self, problem, data, warm_start, verbose, solver_opts, *args, **kwargs)
    monkeypatch.setattr(SolvingChain, "solve_via_data", recording)
    return seen


@pytest.mark.parametrize("solver, option, problem", [
    ("CLARABEL", "time_limit", QP), ("SCS", "time_limit_secs", QP), ("HIGHS", "time_limit", LP)])
def test_solve_passes_its_time_limit_to_the_solver(solver, option, problem, solve_options,
                                                   capsys):
    # the time left when the solver starts: the limit less the build and the compilation
    assert cli.main(["solve", problem, "--solver", solver, "--time-limit", "7.5"]) == 0
    assert 7.5 - 3 < solve_options[-1][option] <= 7.5
    assert cli.main(["solve", problem, "--solver", solver]) == 0
    assert cli.DEFAULT_TIME_LIMIT - 3 < solve_options[-1][option] <= cli.DEFAULT_TIME_LIMIT


def test_check_passes_its_time_limit_to_the_solver(solve_options, tmp_path, capsys):
    assert cli.main(["check", "--problems", QP, "--cvxpy", "CLARABEL", "--native",
                     "--no-progress", "--time-limit", "9", "--out", str(tmp_path / "c.csv")]) == 0
    assert 9.0 - 3 < solve_options[-1]["time_limit"] <= 9.0


def test_ecos_has_no_time_limit_so_solve_runs_it_in_a_worker_killed_at_the_limit(capsys):
    code, out, err = run_cli(["solve", "ip_l2_planted_m_paper_compact", "--solver", "ECOS",
                              "--time-limit", "0.001"], capsys)
    # stopped at the limit: no answer, reported as such; like a solver's own time limit, not a
    # wrong answer (exit 0; issue 27). The worker is killed at the limit ("timeout"), unless the
    # solve's own deadline, checked between CVXPY's stages, stops it first ("time_limit"): on
    # an idle machine a 1 ms limit can pass before ECOS is even called.
    assert code == 0
    assert re.search(r"^status +(timeout|time_limit)$", out, re.M), out


# -- 3. an unwritable output is refused before any solve --------------------------------------

def _a_file_where_a_folder_should_be(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    return blocker


def test_check_refuses_an_unwritable_out_before_solving(no_solving, tmp_path, capsys):
    out = _a_file_where_a_folder_should_be(tmp_path) / "cmp.csv"
    code, _, err = run_cli(["check", "--problems", QP, "--cvxpy", "CLARABEL",
                            "--no-progress", "--out", str(out)], capsys)
    assert code == 2
    assert_one_line(err, "--out", str(out))


@pytest.mark.parametrize("where", ["parent", "folder"])
def test_bench_refuses_an_unwritable_output_before_solving(where, no_solving, tmp_path, capsys):
    # every run writes new files in the folder --out names: a file in its way is refused
    blocker = _a_file_where_a_folder_should_be(tmp_path)
    out = blocker / "bench" if where == "parent" else blocker
    code, _, err = run_cli(["bench", "--problems", QP, "--cvxpy", "CLARABEL", "--native",
                            "--executor", "serial", "--no-progress", "--out", str(out)], capsys)
    assert code == 2
    assert_one_line(err, "--out")


def test_experiments_refuse_an_unwritable_out_before_running(monkeypatch, tmp_path, capsys):
    from infpush_cvx.evaluation.experiments import perceptron
    _break(monkeypatch, perceptron, "perceptron_experiment", AssertionError("it ran"))
    out = _a_file_where_a_folder_should_be(tmp_path) / "runs.csv"
    code, _, err = run_cli(["experiments", "perceptron", "--out", str(out)], capsys)
    assert code == 2
    assert_one_line(err, "--out", str(out))


# -- 4. report reads exactly the table it is given -------------------------------------------

def results_table(solvers, problems=(QP, LP)):
    """A small, well-formed results table."""
    rows = [{"problem": p, "kind": "cvxpy", "solver": s, "repeat": 0, "status": "optimal",
             "agrees": True, "objective": 1.0, "reference": 1.0, "rel_error": 0.0, "gap": None,
             "iterations": 10, "compile_time": 0.01, "setup_time": 0.0, "solve_time": 0.1 + i,
             "time": 0.2 + i}
            for p in problems for i, s in enumerate(solvers)]
    return pd.DataFrame(rows)


def test_report_reads_the_named_csv_not_a_parquet_beside_it(tmp_path, capsys):
    results_table(["A", "B"]).to_csv(tmp_path / "t.csv", index=False)
    results_table(["X", "Y"]).to_parquet(tmp_path / "t.parquet", index=False)
    assert cli.main(["report", str(tmp_path / "t.csv"), "--out", str(tmp_path / "r")]) == 0
    assert set(pd.read_csv(tmp_path / "r" / "comparison.csv")["solver"]) == {"A", "B"}
    assert cli.main(["report", str(tmp_path / "t.parquet"), "--out", str(tmp_path / "q")]) == 0
    assert set(pd.read_csv(tmp_path / "q" / "comparison.csv")["solver"]) == {"X", "Y"}


# -- 5. one-line errors with distinct exit codes ----------------------------------------------

def _truncated(tmp_path):
    text = results_table(["A", "B"]).to_csv(index=False)
    return text[: len(text) - 40]  # the last row stops in the middle


@pytest.mark.parametrize("content", [
    pytest.param("", id="empty"),
    pytest.param("just,some\ncsv,text\n", id="not-a-results-table"),
    pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", id="binary"),
    pytest.param(_truncated, id="truncated"),
])
def test_report_on_a_malformed_table_is_a_one_line_usage_error(content, tmp_path, capsys):
    table = tmp_path / "t.csv"
    content = content(tmp_path) if callable(content) else content
    if isinstance(content, bytes):
        table.write_bytes(content)
    else:
        table.write_text(content)
    code, _, err = run_cli(["report", str(table), "--out", str(tmp_path / "r")], capsys)
    assert code == 2
    assert_one_line(err, str(table))


def test_report_on_a_table_without_the_metric_is_a_usage_error(tmp_path, capsys):
    results_table(["A", "B"]).drop(columns="solve_time").to_csv(tmp_path / "t.csv", index=False)
    code, _, err = run_cli(["report", str(tmp_path / "t.csv"), "--metric", "solve_time"], capsys)
    assert code == 2
    assert_one_line(err, "solve_time")


@pytest.mark.parametrize("argv, text", [
    (["solve", QP, "--solver", "CLARABEL", "--tol", "-1"], "--tol"),
    (["solve", QP, "--solver", "CLARABEL", "--tol", "nan"], "--tol"),
    (["solve", QP, "--solver", "CLARABEL", "--tol", "inf"], "--tol"),
    (["solve", QP, "--solver", "CLARABEL", "--tol", "abc"], "--tol"),
    (["solve", QP, "--solver", "CLARABEL", "--time-limit", "0"], "--time-limit"),
    (["solve", QP, "--solver", "CLARABEL", "--time-limit", "-5"], "--time-limit"),
    (["check", "--time-limit", "nan"], "--time-limit"),
    (["check", "--cvxpy", "--native"], "--cvxpy and --native select no solver"),
    (["bench", "--native", "nope"], "unknown project solver method 'nope'"),
    (["bench", "--native", "nope"], "infinite_push.fista"),  # the valid names are listed
    (["bench", "--repeats", "0"], "--repeats"),
    (["bench", "--workers", "0"], "--workers"),
    (["bench", "--time-limit", "-1"], "--time-limit"),
    (["bench", "--tol", "0"], "--tol"),
    (["list", "--problems", "zzz"], "no catalog problem of tier 'core' matches 'zzz'"),
    (["list", "--tier", "huge"], "unknown tier 'huge'"),
    (["prox", "--factors", "-1"], "--factors"),
    (["prox", "--repeats", "0"], "--repeats"),
    (["prox", "--methods", "nope"], "nope"),
])
def test_bad_option_values_are_one_line_usage_errors(argv, text, no_solving, capsys):
    code, out, err = run_cli(argv, capsys)
    assert code == 2
    assert_one_line(err, text)
    assert not out.strip()


def test_generate_checks_every_name_before_writing(tmp_path, capsys):
    code, _, err = run_cli(["generate", "--instances", "pairs_dense", "nope", "--out",
                            str(tmp_path)], capsys)
    assert code == 2 and not list(tmp_path.iterdir())
    assert_one_line(err, "unknown instance 'nope'")


def test_generate_refuses_a_file_as_its_folder(tmp_path, capsys):
    out = _a_file_where_a_folder_should_be(tmp_path)
    code, _, err = run_cli(["generate", "--instances", "pairs_dense", "--out", str(out)], capsys)
    assert code == 2
    assert_one_line(err, "--out", str(out))


def _break(monkeypatch, module, name, exc):
    def broken(*args, **kwargs):
        raise exc
    monkeypatch.setattr(module, name, broken)


def test_an_unexpected_failure_exits_3_with_a_hint(monkeypatch, capsys):
    _break(monkeypatch, catalog, "problem_ids", RuntimeError("boom"))
    code, out, err = run_cli(["list"], capsys)
    assert code == 3
    assert_one_line(err, "boom", "--traceback", cli.TRACEBACK_ENV_VAR)


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_full_traceback_on_request(how, monkeypatch, capsys):
    _break(monkeypatch, catalog, "problem_ids", RuntimeError("boom"))
    if how == "flag":
        argv = ["list", "--traceback"]
    else:
        argv = ["list"]
        monkeypatch.setenv(cli.TRACEBACK_ENV_VAR, "1")
    code, _, err = run_cli(argv, capsys)
    assert code == 3
    assert "Traceback (most recent call last)" in err and "RuntimeError: boom" in err


def test_a_failure_inside_a_solve_is_an_internal_error_not_a_table(monkeypatch, in_process,
                                                                  capsys):
    # a ValueError raised while solving is not the user's fault: exit 3, not 2 or 1
    _break(monkeypatch, registry, "solve", ValueError("boom"))
    code, out, err = run_cli(["solve", "ranksvm_planted_s_seed_compact", "--solver",
                              "ranksvm.working_set"], capsys)
    assert code == 3
    assert_one_line(err, "boom", "--traceback")
    assert "status" not in out


def test_check_disagreement_still_exits_1(tmp_path, monkeypatch, capsys):
    def disagreeing(ids, *args, **kwargs):
        return pd.DataFrame([{"problem": QP, "solver": "CLARABEL", "status": "optimal",
                              "agrees": False}], columns=compare.COLUMNS)
    monkeypatch.setattr(compare, "run", disagreeing)
    code, _, err = run_cli(["check", "--problems", QP, "--no-progress", "--out",
                            str(tmp_path / "c.csv")], capsys)
    assert code == 1 and "DISAGREEMENTS" in err


@pytest.mark.parametrize("argv, text", [
    (["check", "--solvers", "ECOS"], "unrecognized arguments: --solvers"),
    (["check", "--timeout", "7"], "unrecognized arguments: --timeout"),
    (["bench", "--timeout", "7"], "unrecognized arguments: --timeout"),
    (["reference", "migrate"], "invalid choice: 'migrate'"),
])
def test_the_spellings_before_0_2_are_usage_errors(argv, text, capsys):
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and text in err, err


def test_a_malformed_stored_value_is_a_usage_error_naming_the_file(tmp_path, monkeypatch,
                                                                   capsys):
    """A truncated reference file read while ``check`` works is bad input (exit 2, its path),
    not an internal failure (exit 3)."""
    from infpush_cvx.catalog import reference

    (tmp_path / f"{QP}.json").write_text('{"problem_id": "trunc')
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(tmp_path))
    code, out, err = run_cli(["check", "--problems", QP, "--cvxpy", "CLARABEL", "--out",
                              str(tmp_path / "c.csv")], capsys)  # not in the working folder
    assert code == 2
    assert_one_line(err.strip().splitlines()[-1], str(tmp_path / f"{QP}.json"))  # after tqdm


def test_a_closed_pipe_ends_the_command_quietly():
    """``infpush-cvx list | head``: the reader goes away before the output is written; the
    command stops with SIGPIPE's status (141), and no error line or traceback."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "infpush_cvx.cli", "list", "--tier", "all"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before the interpreter has started: every write meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert err == ""


def test_a_catalog_problem_refuses_highs_on_a_qp_in_its_own_solve():
    """``problem.solve(solver="HIGHS")`` on an l2 catalog problem hung (issue 15, item 2); the
    catalog's problems consult the same solver table as the command line."""
    problem = catalog.get(QP).build()
    with pytest.raises(ValueError, match=f"HIGHS.*QP.*{QP}"):
        problem.solve(solver="HIGHS")
    lp = catalog.get("ip_l1_planted_s_paper_compact").build()
    assert lp.solve(solver="HIGHS") == pytest.approx(lp.solve(solver="CLARABEL"), rel=1e-6)
    assert problem.solve(solver="CLARABEL") > 0 and "w" in problem.var_dict
