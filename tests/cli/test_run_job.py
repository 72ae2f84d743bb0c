"""The main job measures what it says and reads well (issue 27): warmed-up timings, outcomes
and exit codes, the per-solver summary, readable output, the experiments subcommand."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from infpush_cvx import cli
from infpush_cvx.benchmarking import SerialExecutor, compare, make_tasks, run_benchmark
from infpush_cvx.benchmarking import warmup
from infpush_cvx.catalog import reference
from infpush_cvx.solvers.result import CERTIFIED

QP = "ip_l2_planted_s_paper_compact"
UCI = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "uci"


# -- timings: every executor warms up, and says how long in warmup_time ----------------------

def test_a_row_carries_the_warm_up_of_its_solver_in_its_process_not_in_its_time():
    tasks = make_tasks([QP], cvxpy=[], native=["infinite_push.fista"], timeout=60)
    df = run_benchmark(tasks, SerialExecutor(isolate=False), progress=False)
    [row] = df.to_dict("records")
    assert row["warmup_time"] == warmup.warmup_seconds("native", "infinite_push.fista") > 0
    assert row["time"] >= row["solve_time"] > 0  # the solve itself, timed after the warm-up


def test_check_warms_up_its_worker_before_the_first_timed_solve(tmp_path):
    # the reproducer: fista's first solve in a fresh process counted numba's
    # compilation (7.7 s against 0.03 s for the next problem of the same size)
    out = tmp_path / "c.csv"
    assert cli.main(["check", "--problems", "ip_l2_planted_s_", "--cvxpy", "--native",
                     "fista", "working_set", "--no-progress", "--out", str(out)]) == 0
    df = pd.read_csv(out)
    assert len(df) == 4 and df["agrees"].all()
    # every row was timed after its solver's warm-up in the same worker process
    assert df["warmup_time"].notna().all() and (df["warmup_time"] > 0).all()
    assert df.groupby("solver")["warmup_time"].nunique().eq(1).all()
    assert df["pid"].nunique() == 1


# -- outcomes and exit codes -----------------------------------------------------------------

def row(status, objective=1.0, rel_error=0.0, rtol=1e-6, agrees=None, **more):
    agrees = status in CERTIFIED and rel_error <= rtol \
        if agrees is None else agrees
    return {"problem": "p", "solver": "s", "status": status, "objective": objective,
            "reference": 1.0, "rel_error": rel_error, "rtol": rtol, "agrees": agrees,
            "time": 0.1, "timeout": 10.0, **more}


@pytest.mark.parametrize("status, kw, expected", [
    ("optimal", {}, "solved"),
    ("degenerate_optimal", {}, "solved"),
    ("unverified", {"rel_error": 1e-8}, "solved"),          # within tolerance, uncertified
    ("optimal", {"rel_error": 1e-2}, "disagrees"),          # a claim the stored value refutes
    ("optimal", {"rel_error": None, "agrees": False}, "disagrees"),  # no stored value backs it
    ("infeasible", {"objective": math.inf, "rel_error": math.inf}, "disagrees"),
    ("max_iter", {"rel_error": 0.4}, "suboptimal"),         # the papers' fixed budgets
    ("time_limit", {"rel_error": 1e-3}, "suboptimal"),
    ("stalled", {"rel_error": 1e-3}, "suboptimal"),
    ("unverified", {"rel_error": 1e-3}, "suboptimal"),
    ("optimal_inaccurate", {"rel_error": 1e-3}, "suboptimal"),
    ("numerical_error", {"rel_error": 1e-3}, "failed"),
    ("failed", {"objective": None, "rel_error": math.inf}, "failed"),
    ("timeout", {"objective": None, "rel_error": math.inf}, "failed"),
    ("error: ValueError", {"objective": None, "rel_error": math.inf}, "failed"),
    ("worker_died", {"objective": None, "rel_error": math.inf}, "failed"),
    ("solver_error: SCS failed", {"objective": None, "rel_error": math.inf}, "failed"),
])
def test_outcome_of_a_row(status, kw, expected):
    assert compare.outcome(row(status, **kw)) == expected


@pytest.mark.parametrize("statuses, code", [
    (["optimal", "max_iter", "time_limit", "stalled", "unverified"], 0),
    (["optimal", "numerical_error", "timeout", "solver_error: x"], 0),  # reported, not exit 1
    (["optimal", "error: RuntimeError"], 1),                   # the solve could not run
    (["optimal", "worker_died"], 1),
])
def test_exit_status_fails_only_on_a_refuted_claim_or_a_broken_solve(statuses, code):
    df = pd.DataFrame([row(s, rel_error=0.0 if s == "optimal" else 0.3) for s in statuses])
    assert compare.exit_status(df) == code
    refuted = pd.concat([df, pd.DataFrame([row("optimal", rel_error=0.01)])])
    assert compare.exit_status(refuted) == 1


def altered_references(tmp_path, monkeypatch, pid=QP, factor=1.01):
    """A reference folder where ``pid``'s stored value is multiplied by ``factor``."""
    folder = tmp_path / "refs"
    folder.mkdir()
    record = reference.load_reference(pid)
    record["opt_val"] *= factor
    (folder / f"{pid}.json").write_text(json.dumps(record))
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(folder))  # here and in workers
    return record["opt_val"]


def test_bench_with_its_default_solvers_exits_0_then_1_on_an_altered_stored_value(
        tmp_path, monkeypatch, capsys):
    # defaults: every project method, the papers' fixed-iteration protocols included
    out = tmp_path / "runs"
    argv = ["bench", "--problems", QP, "--executor", "serial", "--no-progress", "--out"]
    assert cli.main(argv + [str(out)]) == 0
    [table] = out.glob("*.csv")
    df = pd.read_csv(table)
    paper = df[df["solver"] == "infinite_push.paper"].iloc[0]
    assert paper["status"] == "max_iter" and paper["rel_error"] > paper["rtol"]
    text = capsys.readouterr()
    assert "DISAGREEMENTS" not in text.err
    assert re.search(r"^ *infinite_push\.paper +1 +1 +0 +1 +0 +0 ", text.out, re.M), text.out

    altered = altered_references(tmp_path, monkeypatch)
    out = tmp_path / "runs2"
    assert cli.main(argv + [str(out), "--cvxpy", "CLARABEL", "--native",
                            "infinite_push.paper"]) == 1
    [table] = out.glob("*.csv")
    df = pd.read_csv(table).set_index("solver")
    assert df.loc["CLARABEL", "reference"] == pytest.approx(altered, rel=1e-12)
    err = capsys.readouterr().err
    assert "DISAGREEMENTS" in err and "CLARABEL" in err and "infinite_push.paper" not in err


# -- the summary -----------------------------------------------------------------------------

def test_shifted_geometric_mean():
    assert compare.shifted_geometric_mean([1.0, 1.0], shift=10) == pytest.approx(1.0)
    # exp(mean(log(t + sh))) - sh
    t = np.array([0.5, 3.0, 100.0])
    assert compare.shifted_geometric_mean(t, shift=10) == \
        pytest.approx(np.exp(np.log(t + 10).mean()) - 10)
    assert math.isnan(compare.shifted_geometric_mean([]))


def test_summary_counts_outcomes_and_charges_unsolved_problems_the_time_limit():
    df = pd.DataFrame([
        {**row("optimal"), "problem": "a", "solver": "fast", "time": 1.0},
        {**row("optimal"), "problem": "b", "solver": "fast", "time": 1.0},
        {**row("optimal"), "problem": "a", "solver": "slow", "time": 3.0},
        {**row("max_iter", rel_error=0.5), "problem": "b", "solver": "slow", "time": 2.0},
        {**row("optimal"), "problem": "c", "solver": "lp_only", "time": 5.0},
    ])
    s = compare.summary(df, shift=10).set_index("solver")
    assert s.loc["slow", ["problems", "solves", "solved", "suboptimal", "disagrees",
                          "failed"]].tolist() == [2, 2, 1, 1, 0, 0]
    assert s.loc["fast", "time_ratio"] == pytest.approx(1.0)
    # slow: 3 s on a, and the 10 s limit on b (unsolved), against the best 1 s on each
    sgm = compare.shifted_geometric_mean
    assert s.loc["slow", "time_ratio"] == pytest.approx(sgm([3.0, 10.0]) / sgm([1.0, 1.0]))
    # alone on its problem, it is the best there
    assert s.loc["lp_only", "time_ratio"] == pytest.approx(1.0)
    assert s.loc["slow", "median_time"] == 3.0


def test_check_prints_a_short_table_and_a_summary_line_per_solver(tmp_path, capsys):
    out = tmp_path / "c.csv"
    assert cli.main(["check", "--problems", QP, "--cvxpy", "CLARABEL", "--native", "fista",
                     "--no-progress", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0].split() == ["problem", "solver", "status", "objective", "rel.", "error",
                                "time", "(s)", "outcome"]
    assert lines[-1] == f"table saved to {out}"
    assert max(map(len, lines[:-1])) <= 110
    assert re.search(r"^ *CLARABEL +1 +1 +1 +0 +0 +0 +\d+\.\d{3} +\d\.\d\d$", text, re.M), text
    assert re.search(r"^ *infinite_push\.fista +1 +1 +1 +0 +0 +0 ", text, re.M), text
    assert "2 solves of 1 problem: 2 solved, 0 suboptimal, 0 disagrees, 0 failed" in text
    assert len(pd.read_csv(out).columns) > 40  # the saved table has every column


# -- readable command line -------------------------------------------------------------------

def test_top_help_is_plain_text(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    description = out.split("\n\n")[1]
    assert description.startswith("infpush-cvx: ") and "``" not in out and ":mod:" not in out
    assert "experiments" in out


def test_counts_have_correct_plurals():
    from infpush_cvx.cli.common import plural
    assert plural(1, "solve") == "1 solve" and plural(2, "problem") == "2 problems"
    assert plural(0, "task") == "0 tasks"


@pytest.mark.parametrize("argv, says, never", [
    (["solve", "no_such_problem", "--solver", "ECOS"], "infpush-cvx list", "problem_ids()"),
    (["experiments", "perceptron", "--data-dir", "/no/such/folder", "--ks", "5", "--out",
      "/tmp/infpush_never.csv"], "--data-dir", "data_dir="),
])
def test_errors_name_command_line_flags_not_python_arguments(argv, says, never, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and never not in err, err


def test_experiments_subcommand_writes_its_table_and_a_figure(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    if not (UCI / "ionosphere.data").is_file():
        pytest.skip("shared UCI data folder not present")
    monkeypatch.setenv("INFPUSH_CVX_DATA", str(UCI))
    out = tmp_path / "exp" / "agarwal.csv"
    assert cli.main(["experiments", "agarwal", "--datasets", "ionosphere", "--n-splits", "1",
                     "--n-folds", "2", "--methods", "ranksvm", "infinite_push", "--no-progress",
                     "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert len(pd.read_csv(out)) == 2
    assert (tmp_path / "exp" / "agarwal.png").stat().st_size > 10_000
    assert max(map(len, text.splitlines())) <= 200
    assert re.search(r"ionosphere +ranksvm +0\.\d{3} \[0\.927\]", text), text


def test_experiments_perceptron_writes_one_figure_per_stream(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    if not (UCI / "spambase.data").is_file():
        pytest.skip("shared UCI data folder not present")
    monkeypatch.setenv("INFPUSH_CVX_DATA", str(UCI))
    out = tmp_path / "perceptron.csv"
    assert cli.main(["experiments", "perceptron", "--ks", "50", "--no-progress",
                     "--out", str(out)]) == 0
    assert set(pd.read_csv(out)["stream"]) == {"spambase", "generated"}
    for stream in ("spambase", "generated"):
        assert (tmp_path / f"perceptron_{stream}.png").stat().st_size > 10_000
    assert "written: " in capsys.readouterr().out
