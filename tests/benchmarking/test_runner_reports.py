"""The results table (CSV + Parquet), its comparison view and performance profiles."""

import numpy as np
import pandas as pd
import pytest

from infpush_cvx.benchmarking import (comparison_table, load_results, make_tasks,
                                      performance_profile, performance_ratios,
                                      plot_performance_profile, run_benchmark, save_results)
from infpush_cvx.benchmarking.tasks import COLUMNS


@pytest.fixture(scope="module")
def small_table():
    tasks = make_tasks(["rank2plan_pairs_dense_compact", "ip_l1_planted_s_paper_compact"],
                       cvxpy=["CLARABEL", "HIGHS"], native=["rank2plan.ccg"], repeats=2)
    return run_benchmark(tasks, "serial", progress=False)


def test_table_is_tidy_and_complete(small_table):
    df = small_table
    assert len(df) == 2 * (2 + 1 + 2)
    assert list(df.columns[:len(COLUMNS)]) == COLUMNS
    assert {"version_cvxpy", "version_numpy", "version_infpush_cvx"} <= set(df.columns)
    assert (df["executor"] == "serial").all()
    assert df["agrees"].all(), df[["problem", "solver", "status", "rel_error"]]
    assert (df["blas_threads"] == 1).all()


def test_save_and_load_round_trip(small_table, tmp_path):
    paths = save_results(small_table, tmp_path / "sub" / "bench.csv")
    assert paths["csv"].exists() and paths["parquet"].exists()
    back = load_results(tmp_path / "sub" / "bench")
    pd.testing.assert_frame_equal(back, small_table, check_dtype=False)
    csv = pd.read_csv(paths["csv"])
    assert len(csv) == len(small_table)
    np.testing.assert_allclose(csv["objective"], small_table["objective"])


def test_comparison_table_aggregates_repeats(small_table):
    table = comparison_table(small_table)
    assert len(table) == 5 and (table["runs"] == 2).all()
    assert table["agrees"].all()
    row = table[(table["solver"] == "rank2plan.ccg")].iloc[0]
    assert row["max_rel_error"] == small_table.loc[small_table["solver"] == "rank2plan.ccg",
                                                   "rel_error"].max()


def _synthetic():
    # 3 problems, 3 solvers; B fails on p3, C never ran p1.
    rows = []
    times = {("p1", "A"): 1.0, ("p1", "B"): 2.0,
             ("p2", "A"): 4.0, ("p2", "B"): 1.0, ("p2", "C"): 8.0,
             ("p3", "A"): 3.0, ("p3", "B"): 1.0, ("p3", "C"): 3.0}
    for (p, s), t in times.items():
        rows.append({"problem": p, "solver": s, "kind": "x", "repeat": 0, "time": t,
                     "agrees": not (p == "p3" and s == "B"), "status": "optimal"})
    return pd.DataFrame(rows)


def test_performance_ratios_by_hand():
    df = _synthetic()
    r = performance_ratios(df, problems="all")
    # C never ran p1: not attempted is NaN (left out of C's profile), not a failure (inf)
    assert r.loc["p1", "A"] == 1.0 and r.loc["p1", "B"] == 2.0 and np.isnan(r.loc["p1", "C"])
    assert r.loc["p2", "A"] == 4.0 and r.loc["p2", "B"] == 1.0 and r.loc["p2", "C"] == 8.0
    # B's faster run on p3 does not count: it disagreed with the stored value
    assert r.loc["p3", "A"] == 1.0 and np.isinf(r.loc["p3", "B"]) and r.loc["p3", "C"] == 1.0
    common = performance_ratios(df, problems="common")
    assert list(common.index) == ["p2", "p3"]


def test_performance_profile_by_hand():
    prof = performance_profile(_synthetic(), problems="all", taus=[1.0, 2.0, 4.0, 8.0])
    np.testing.assert_allclose(prof["A"], [2 / 3, 2 / 3, 1.0, 1.0])
    np.testing.assert_allclose(prof["B"], [1 / 3, 2 / 3, 2 / 3, 2 / 3])
    # C attempted p2 (ratio 8) and p3 (ratio 1) only: its fractions are out of 2
    np.testing.assert_allclose(prof["C"], [1 / 2, 1 / 2, 1 / 2, 1.0])
    common = performance_profile(_synthetic(), taus=[1.0, 2.0, 4.0, 8.0])  # p2, p3
    np.testing.assert_allclose(common["A"], [1 / 2, 1 / 2, 1.0, 1.0])
    np.testing.assert_allclose(common["C"], [1 / 2, 1 / 2, 1 / 2, 1.0])


def test_profile_counts_separate_failed_from_not_attempted():
    from infpush_cvx.benchmarking.reports import profile_counts
    counts = profile_counts(_synthetic(), problems="all")
    assert counts.loc["B"].to_dict() == {"problems": 3, "attempted": 3, "solved": 2,
                                         "failed": 1, "not_attempted": 0}
    assert counts.loc["C"].to_dict() == {"problems": 3, "attempted": 2, "solved": 2,
                                         "failed": 0, "not_attempted": 1}
    assert (profile_counts(_synthetic())["problems"] == 2).all()


def test_iterations_metric_nullable_integers():
    # the table's iterations column is Int64 with <NA> (a solver that reports no count)
    df = _synthetic()
    df["iterations"] = pd.array([10, 20, 40, 10, 80, 30, 5, pd.NA], dtype="Int64")
    r = performance_ratios(df, metric="iterations", problems="all")
    assert r.loc["p1", "B"] == 2.0 and r.loc["p2", "B"] == 1.0 and r.loc["p2", "C"] == 8.0
    assert np.isinf(r.loc["p3", "B"])  # failed
    assert np.isnan(r.loc["p3", "C"])  # agreed, but no count to compare: left out
    assert r.loc["p3", "A"] == 1.0


def test_zero_costs_are_floored():
    df = _synthetic()
    df["iterations"] = [0, 2, 4, 1, 8, 3, 1, 3]
    r = performance_ratios(df, metric="iterations", problems="all")
    assert r.loc["p1", "A"] == 1.0 and r.loc["p1", "B"] == 2.0  # 0 counts as 1, the floor
    with pytest.raises(ValueError, match="status"):
        performance_ratios(df, metric="status")


def test_profile_needs_a_common_problem():
    df = _synthetic()
    df = df[~((df["problem"] != "p1") & (df["solver"] == "A"))]
    df = df[~((df["problem"] == "p1") & (df["solver"] == "B"))]
    with pytest.raises(ValueError, match="attempted by every solver"):
        performance_ratios(df)
    with pytest.raises(ValueError, match="problems"):
        performance_ratios(df, problems="some")


def test_profile_png(tmp_path, small_table):
    pytest.importorskip("matplotlib")
    path = plot_performance_profile(small_table, tmp_path / "p" / "profile.png")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_complete_solvers():
    from infpush_cvx.benchmarking.reports import complete_solvers
    assert complete_solvers(_synthetic()) == ["A", "B"]
