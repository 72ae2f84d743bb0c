"""Benchmark results with provenance: every ``bench`` run writes new, timestamped files with its
metadata (date, commit, machine, thread pools, every solver option, instance parameters), the
project solvers' convergence curves on request, rows with primal residuals; workers are warmed
up before timing; ``bench`` exits 1 on disagreement; output is quiet unless -v asks."""

import json
import re
from datetime import datetime

import pandas as pd
import pytest

from infpush_cvx import cli
from infpush_cvx.benchmarking import (SerialExecutor, benchmark, load_metadata, make_tasks,
                                      run_paths, save_run)
from infpush_cvx.benchmarking.curves import CURVE_COLUMNS, curve_rows, curves_frame
from infpush_cvx.benchmarking.provenance import code_revision, new_run_id, platform_info
from infpush_cvx.benchmarking.warmup import warmup_jobs

LP = "rank2plan_pairs_dense_compact"
QP = "ip_l2_planted_s_paper_compact"
BENCH = ["bench", "--problems", LP, "--cvxpy", "CLARABEL", "--native", "rank2plan.ccg",
         "--executor", "serial", "--no-progress"]


def runs_in(folder):
    return sorted(p.with_suffix("") for p in folder.glob("*.json"))


class Runs:
    """Two ``bench`` runs into the same folder, ``second`` with --curves."""

    def __init__(self, folder):
        self.folder = folder
        assert cli.main(BENCH + ["--out", str(folder)]) == 0
        [self.first] = runs_in(folder)
        assert cli.main(BENCH + ["--curves", "--out", str(folder)]) == 0
        [self.second] = set(runs_in(folder)) - {self.first}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    return Runs(tmp_path_factory.mktemp("bench") / "results")


def test_every_run_writes_new_files_and_never_replaces_any(two_runs):
    first, second = two_runs.first, two_runs.second
    assert set(runs_in(two_runs.folder)) == {first, second}
    assert first.name != second.name
    assert re.fullmatch(r"\d{8}T\d{6}Z_[0-9a-f]{6}", first.name)
    for run in (first, second):
        for suffix in (".csv", ".parquet", ".json"):
            assert run.with_suffix(suffix).is_file()
        assert (run.parent / (run.name + "_report") / "comparison.csv").is_file()
    assert not (two_runs.folder / (first.name + "_curves.csv")).exists()
    assert (two_runs.folder / (second.name + "_curves.parquet")).is_file()
    table = pd.read_parquet(first.with_suffix(".parquet"))
    assert (table["run_id"] == first.name).all()


def test_metadata_records_date_code_machine_and_threads(two_runs):
    run = two_runs.first
    meta = load_metadata(run.with_suffix(".csv"))
    assert meta["run_id"] == run.name
    date = datetime.fromisoformat(meta["date"].replace("Z", "+00:00"))
    assert date.utcoffset().total_seconds() == 0
    assert meta["duration_s"] >= 0
    code = meta["code"]
    assert code["version"] and len(code["git_commit"]) >= 7
    assert isinstance(code["git_dirty"], bool)
    machine = meta["platform"]
    assert machine["cpu_model"] and machine["cpu_count"] >= 1 and machine["ram_bytes"] > 0
    assert machine["python"] and machine["os"]
    assert any(pool["user_api"] == "blas" for pool in machine["threadpools"])
    assert meta["versions"]["version_cvxpy"]
    warm = meta["execution"]["warmup"]
    assert meta["execution"]["executor"] == "serial" and len(warm) == 1
    assert all(p["num_threads"] == 1 for p in warm[0]["threadpools"])
    assert meta["command"][:2] == ["infpush-cvx", "bench"]
    assert meta["files"] == {"csv": run.name + ".csv", "parquet": run.name + ".parquet"}
    assert meta["summary"] == {"rows": 2, "agree": 2, "disagree": [], "suboptimal": [],
                               "failed": []}


def test_metadata_records_every_solver_option_and_instance(two_runs):
    meta = load_metadata(two_runs.first.with_suffix(".json"))
    clarabel = meta["solvers"]["CLARABEL (timeout=1200.0)"]
    assert clarabel["options"]["time_limit"] == cli.DEFAULT_TIME_LIMIT
    assert clarabel["options"]["tol_gap_rel"] == 1e-9 and clarabel["options"]["verbose"] is False
    assert clarabel["time_limit_option"] == "time_limit" and clarabel["rtol"] == 1e-6
    [ccg] = [v for k, v in meta["solvers"].items() if k.startswith("rank2plan.ccg")]
    assert ccg["options"] == {"method": "ccg", "tol": 1e-6, "time_limit": 1200.0}
    assert "max_iter" in ccg["defaults"] and "method" not in ccg["defaults"]  # left to it
    problem = meta["problems"][LP]
    assert problem["instance"] == "pairs_dense" and problem["reference_value"] > 0
    instance = meta["instances"]["pairs_dense"]
    assert instance["generator"] == "rank2plan_pairs" and instance["seed"] == 201
    assert instance["tier"] == "core"
    assert instance["m"] == 100 and instance["d"] == 12 and instance["n"] > 0
    assert 0 < instance["nnz"] <= 100 * 12


def test_rows_record_instance_options_and_residuals(two_runs):
    df = pd.read_csv(two_runs.first.with_suffix(".csv"))
    assert (df["generator"] == "rank2plan_pairs").all() and (df["seed"] == 201).all()
    assert (df["m"] == 100).all() and (df["nnz"] > 0).all()
    cvx = df[df["kind"] == "cvxpy"].iloc[0]
    assert 0 <= cvx["primal_residual"] < 1e-6
    assert json.loads(cvx["solver_options"])["time_limit"] == cli.DEFAULT_TIME_LIMIT
    native = df[df["kind"] == "native"].iloc[0]
    assert json.loads(native["solver_options"]) == {"method": "ccg", "time_limit": 1200.0,
                                                    "tol": 1e-6}


def test_curves_are_one_row_per_iteration(two_runs):
    run = two_runs.second
    curves = pd.read_parquet(two_runs.folder / (run.name + "_curves.parquet"))
    assert list(curves.columns[:4]) == ["run_id", "problem", "solver", "repeat"]
    assert list(curves.columns[4:8]) == CURVE_COLUMNS
    assert set(curves["solver"]) == {"rank2plan.ccg"}  # project solvers only
    assert list(curves["stop_val"]) == list(range(1, len(curves) + 1))
    assert curves["objective"].notna().all() and (curves["run_id"] == run.name).all()
    meta = load_metadata(run.with_suffix(".json"))
    assert meta["files"]["curves_csv"] == run.name + "_curves.csv" and meta["tasks"]["curves"]


def test_report_metric_iterations_on_a_saved_run(two_runs, tmp_path):
    pytest.importorskip("matplotlib")
    table = two_runs.first.with_suffix(".parquet")
    assert pd.read_parquet(table)["iterations"].dtype == "Int64"
    assert cli.main(["report", str(table), "--metric", "iterations",
                     "--out", str(tmp_path)]) == 0
    assert (tmp_path / "profile_iterations.png").is_file()


def test_out_with_a_table_suffix_is_the_folder(tmp_path):
    paths = run_paths(tmp_path / "bench.csv", "20260101T000000Z_abcdef")
    assert paths["csv"] == tmp_path / "bench" / "20260101T000000Z_abcdef.csv"
    assert paths["report"] == tmp_path / "bench" / "20260101T000000Z_abcdef_report"


def test_save_run_refuses_to_replace_a_file(tmp_path):
    run = benchmark(make_tasks([LP], cvxpy=[], native=["rank2plan.ccg"]),
                    SerialExecutor(warmup=False), progress=False)
    save_run(run, tmp_path)
    with pytest.raises(FileExistsError, match="never replaces"):
        save_run(run, tmp_path)


def test_bench_reports_a_fixed_budget_as_suboptimal_and_exits_zero(tmp_path, capsys):
    # the paper's method does not reach a 1e-9 gap in its iteration budget: a protocol, not a
    # wrong answer (a disagreement exits 1: tests/cli/test_run_job.py)
    code = cli.main(["bench", "--problems", QP, "--cvxpy", "--native", "infinite_push.paper",
                     "--tol", "1e-9", "--executor", "serial", "--no-progress",
                     "--out", str(tmp_path)])
    assert code == 0
    assert "DISAGREEMENTS" not in capsys.readouterr().err
    [run] = runs_in(tmp_path)
    summary = load_metadata(run.with_suffix(".json"))["summary"]
    assert summary["disagree"] == [] and summary["agree"] == 0
    assert summary["suboptimal"][0]["solver"] == "infinite_push.paper"
    assert summary["suboptimal"][0]["status"] == "max_iter"


# -- warm-up -------------------------------------------------------------------------------

def test_warmup_uses_the_smallest_problem_of_the_same_kind():
    tasks = make_tasks(["ip_l2_planted_m_paper_compact"], cvxpy=["CLARABEL"],
                       native=["infinite_push.fista"])
    jobs = warmup_jobs(tasks)
    assert {(j.kind, j.solver) for j in jobs} == {("cvxpy", "CLARABEL"),
                                                  ("native", "infinite_push.fista")}
    problem = jobs[0].problem
    assert problem != "ip_l2_planted_m_paper_compact"  # a 20 x 30 problem, not the 60 x 80 one
    assert problem.startswith("ip_l2_") and problem.endswith("_paper_compact")


def test_serial_executor_warms_up_before_timing():
    executor = SerialExecutor()
    tasks = make_tasks([QP], cvxpy=["ECOS"], native=["infinite_push.fista"])
    run = benchmark(tasks, executor, progress=False)
    [info] = executor.warmup_info
    assert info["failed"] == {}
    assert run.metadata["execution"]["warmup"] == [info]
    assert run.table["agrees"].all()


# -- pieces --------------------------------------------------------------------------------

def test_curve_rows_keep_what_was_recorded():
    rows = curve_rows({"objective": [3.0, 2.0, 1.0], "gap": [0.5, 0.1], "time": [0.1, 0.2, 0.3],
                       "step": ["null", "serious", "serious"], "final": 1.0})
    assert [r["stop_val"] for r in rows] == [1, 2, 3]
    assert rows[2]["gap"] is None and rows[2]["objective"] == 1.0 and "final" not in rows[0]
    frame = curves_frame(rows)
    assert frame["gap"].isna().tolist() == [False, False, True]
    assert curve_rows({}) == [] and curves_frame([]).empty


def test_code_revision_outside_a_checkout_is_the_version(tmp_path):
    info = code_revision(tmp_path)
    assert info["git_commit"] is None and info["git_dirty"] is None and info["version"]


def test_platform_info_and_run_ids():
    info = platform_info()
    assert info["cpu_count"] >= 1 and isinstance(info["threadpools"], list)
    assert new_run_id() != new_run_id()


# -- quiet by default, -v for progress -------------------------------------------------------

def test_bench_is_quiet_without_verbose_and_logs_with_it(tmp_path, capsys):
    assert cli.main(BENCH + ["--out", str(tmp_path / "q")]) == 0
    err = capsys.readouterr().err
    assert "INFO" not in err and "HiGHS" not in err and "benchmark (" not in err
    assert cli.main(BENCH + ["-v", "--out", str(tmp_path / "v")]) == 0
    err = capsys.readouterr().err
    assert "INFO infpush_cvx.benchmarking.runner: run " in err


def test_progress_bars_unless_no_progress(tmp_path, capsys):
    argv = ["check", "--problems", LP, "--cvxpy", "HIGHS", "--native",
            "--out", str(tmp_path / "c.csv")]
    assert cli.main(argv) == 0
    assert "benchmark (serial)" in capsys.readouterr().err  # check runs the serial executor
    assert cli.main(argv + ["--no-progress"]) == 0
    assert "benchmark" not in capsys.readouterr().err


def test_a_warm_up_is_bounded_even_for_a_slow_solver():
    # OSQP needs ~6 s to reach max_iter on this LP; its warm-up stops at its 1 s limit
    pytest.importorskip("osqp")
    from infpush_cvx.benchmarking.warmup import WarmupJob, warm_up
    info = warm_up([WarmupJob("cvxpy", "OSQP", "ip_l1_planted_s_paper_compact")])
    assert info["warmed"] == ["OSQP on ip_l1_planted_s_paper_compact"]
    assert info["seconds"] < 4
