"""The benchmarking subcommands of ``infpush-cvx``: generate, solve, bench, report, prox."""

import re
import subprocess
import sys

import pandas as pd
import pytest

from infpush_cvx import cli
from infpush_cvx.benchmarking.instances import load_instance

SUBCOMMANDS = ["check", "reference", "list", "generate", "solve", "bench", "report", "prox",
               "experiments"]


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_help_everywhere(sub, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([sub, "--help"])
    assert exc.value.code == 0
    assert "usage: infpush-cvx " + sub in capsys.readouterr().out


def test_entry_point_runs_as_a_module():
    out = subprocess.run([sys.executable, "-m", "infpush_cvx.cli", "--help"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and all(s in out.stdout for s in SUBCOMMANDS)


def test_generate_writes_fingerprinted_npz(tmp_path, capsys):
    assert cli.main(["generate", "--instances", "planted_sparse", "pairs_dense",
                     "--out", str(tmp_path)]) == 0
    assert load_instance(tmp_path / "planted_sparse.npz").is_sparse
    assert load_instance(tmp_path / "pairs_dense.npz").n_pairs > 0
    assert "pairs_dense" in capsys.readouterr().out


@pytest.mark.parametrize("solver", ["ECOS", "ranksvm.working_set"])
def test_solve_one_problem(solver, capsys):
    assert cli.main(["solve", "ranksvm_planted_s_seed_compact", "--solver", solver]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^status +optimal$", out, re.M), out
    # formatted numbers, not raw floats: seconds to the millisecond, errors in 2 digits
    assert re.search(r"^relative error +\d\.\de[-+]\d\d$", out, re.M), out
    assert re.search(r"^time +\d+\.\d{3} s$", out, re.M), out


def test_solve_of_a_fixed_budget_protocol_is_suboptimal_not_a_failure(capsys):
    # the paper's 1000 steps stop at max_iter, short of the optimum: reported, exit 0
    assert cli.main(["solve", "ip_l2_planted_s_paper_compact", "--solver",
                     "infinite_push.paper", "--tol", "1e-9"]) == 0
    out = capsys.readouterr().out
    assert "max_iter" in out and "relative error" in out


def the_run(folder):
    """The stem (``<folder>/<run id>``) of the one run saved in ``folder``."""
    [metadata] = sorted(folder.glob("*.json"))
    return metadata.with_suffix("")


def test_bench_then_report(tmp_path, capsys):
    pytest.importorskip("matplotlib")  # its figures need the plots extra
    out = tmp_path / "run" / "bench"
    rc = cli.main(["bench", "--problems", "rank2plan_pairs_dense_compact", "--cvxpy", "CLARABEL",
                   "HIGHS", "--native", "rank2plan.ccg", "--repeats", "2", "--executor",
                   "serial", "--no-progress", "--out", str(out)])
    assert rc == 0
    run = the_run(out)
    df = pd.read_parquet(run.with_suffix(".parquet"))
    assert len(df) == 6 and df["agrees"].all()
    assert len(pd.read_csv(run.with_suffix(".csv"))) == 6
    report = run.with_name(run.name + "_report")
    assert (report / "comparison.csv").exists() and (report / "profile_time.png").exists()
    assert "6 solves (6 tasks): 6 solved, 0 suboptimal, 0 disagrees, 0 failed" in \
        capsys.readouterr().out
    assert cli.main(["report", str(run.with_suffix(".csv")), "--metric", "solve_time",
                     "--out", str(tmp_path / "r2")]) == 0
    assert (tmp_path / "r2" / "profile_solve_time.png").exists()


def test_prox_timing_table(tmp_path, capsys):
    csv = tmp_path / "prox.csv"
    assert cli.main(["prox", "--sizes", "20", "--factors", "0.1", "--repeats", "2",
                     "--out", str(csv)]) == 0
    df = pd.read_csv(csv)
    assert set(df["method"]) == {"ssn", "sort"}
    assert (df["max_abs_diff"] < 1e-10).all() and (df["ratio_to_floor"] > 0).all()


@pytest.mark.parametrize("argv, text", [
    (["prox", "--methods", "newton", "sort"], "unknown --methods 'newton'"),
    (["solve", "nope", "--solver", "ECOS"], "unknown problem 'nope'"),
    (["solve", "ip_dual_planted_s_paper", "--solver", "ranksvm.fista"], "does not solve"),
    (["solve", "ip_dual_planted_s_paper", "--solver", "NOPE"], "unknown solver 'NOPE'"),
    (["bench", "--problems", "zzz", "--no-progress"], "no catalog problem of tier 'core' matches"),
    (["bench", "--problems", "planted_s", "--scheduler", "tcp://h:1", "--executor", "serial"],
     "--scheduler needs --executor dask"),
    (["generate", "--instances", "nope", "--out", "/tmp"], "unknown instance 'nope'"),
    (["report", "/no/such/table.csv"], "does not exist"),
])
def test_errors_are_one_line_and_nonzero(argv, text, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("infpush-cvx: error:") and "\n" not in err and text in err


def test_bench_profile_keeps_every_solver_when_no_problem_is_common(tmp_path, capsys):
    pytest.importorskip("matplotlib")  # its figures need the plots extra
    # HiGHS runs the LP only and ranksvm.working_set the QP only: no common problem
    out = tmp_path / "b"
    assert cli.main(["bench", "--problems", "planted_s_paper_compact", "--cvxpy", "ECOS",
                     "HIGHS", "--native", "ranksvm.working_set", "--executor", "serial",
                     "--no-progress", "--out", str(out)]) == 0
    assert "every solver on the problems it attempted" in capsys.readouterr().err
    assert list(out.glob("*_report/profile_time.png"))
    run = the_run(out)
    assert (run.with_name(run.name + "_report") / "profile_time.png").exists()


@pytest.mark.parametrize("argv", [["bench", "--executor", "threads"], ["solve"], ["nope"],
                                  ["bench", "--repeats", "x"], ["prox", "--sizes", "0"]])
def test_usage_errors_are_one_line(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "error:" in err and "\n" not in err
