"""The command line: the main job's exit codes and output, and clear one-line errors."""

import json

import pandas as pd

from infpush_cvx import cli
from infpush_cvx.benchmarking import SerialExecutor
from infpush_cvx.catalog import reference


def test_check_saves_table_and_exits_zero(tmp_path, capsys):
    out = tmp_path / "cmp.csv"
    rc = cli.main(["check", "--problems", "planted_s_paper_compact", "--cvxpy", "CLARABEL",
                   "ECOS", "--no-progress", "--out", str(out)])
    assert rc == 0
    df = pd.read_csv(out)
    # The project's certified solvers run on the compact problems by default.
    assert set(df["solver"]) == {"CLARABEL", "ECOS", "infinite_push.working_set",
                                 "infinite_push.fista", "ranksvm.smoothing_newton",
                                 "ranksvm.working_set", "ranksvm.fista",
                                 "squared_hinge_ranksvm.newton"}
    assert df["agrees"].all()
    assert {"compile_time", "setup_time", "solve_time", "iterations", "rel_error", "gap"} \
        <= set(df.columns)
    native = df[df["solver"].str.contains(".", regex=False)]
    assert (native["gap"] <= 1e-6).all() and native["gap"].notna().all()
    out = capsys.readouterr().out
    assert f"{len(df)} solves of 4 problems: {len(df)} solved, 0 suboptimal, 0 disagrees, " \
        f"0 failed" in out


def test_check_without_project_solvers(tmp_path):
    out = tmp_path / "cmp.csv"
    assert cli.main(["check", "--problems", "rank2plan_pairs_dense", "--cvxpy", "HIGHS",
                     "--native", "--no-progress", "--out", str(out)]) == 0
    assert set(pd.read_csv(out)["solver"]) == {"HIGHS"}
    assert cli.main(["check", "--problems", "rank2plan_pairs_dense", "--cvxpy", "HIGHS",
                     "--native", "ccg", "--no-progress", "--out", str(out)]) == 0
    assert set(pd.read_csv(out)["solver"]) == {"HIGHS", "rank2plan.ccg"}


def test_unknown_project_method_is_a_clear_error(capsys):
    assert cli.main(["check", "--native", "gauss_seidel", "--no-progress"]) == 2
    assert "unknown project solver method 'gauss_seidel'" in capsys.readouterr().err


def test_check_exits_nonzero_on_disagreement(tmp_path, monkeypatch, capsys):
    pid = "ip_l2_planted_s_paper_compact"
    record = reference.load_reference(pid)
    record["opt_val"] *= 1.01
    (tmp_path / f"{pid}.json").write_text(json.dumps(record))
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(tmp_path))
    monkeypatch.setattr(SerialExecutor, "isolate", False)  # the solves see the patched values
    rc = cli.main(["check", "--problems", pid, "--cvxpy", "CLARABEL", "--no-progress",
                   "--out", str(tmp_path / "x.csv")])
    assert rc == 1
    assert "DISAGREEMENTS" in capsys.readouterr().err


def test_errors_are_one_clear_line(capsys):
    assert cli.main(["check", "--problems", "no-such-problem", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("infpush-cvx: error:") and "\n" not in err


def test_unknown_solver_is_a_clear_error(capsys):
    assert cli.main(["check", "--cvxpy", "NOPE", "--no-progress"]) == 2
    assert "unknown solver 'NOPE'" in capsys.readouterr().err


def test_reference_verify_passes_on_the_stored_values(capsys):
    assert cli.main(["reference", "verify"]) == 0
    assert "match their fingerprints" in capsys.readouterr().out


def test_check_and_bench_run_the_core_tier_by_default(tmp_path, monkeypatch):
    from infpush_cvx import benchmarking, catalog
    from infpush_cvx.benchmarking import compare
    seen = {}

    def fake_run(ids, *args, **kwargs):
        seen["check"] = list(ids)
        return pd.DataFrame(columns=compare.COLUMNS)

    class Stop(Exception):
        pass

    def fake_make_tasks(ids, **kwargs):
        seen["bench"] = list(ids)
        raise Stop

    monkeypatch.setattr(compare, "run", fake_run)
    monkeypatch.setattr(benchmarking, "make_tasks", fake_make_tasks)
    real = set(catalog.problem_ids(tier="real"))
    assert real, "the catalog declares a real tier"
    out = str(tmp_path / "cmp.csv")
    assert cli.main(["check", "--no-progress", "--out", out]) == 0
    assert seen["check"] == catalog.problem_ids() and not real & set(seen["check"])
    # the fake's exception is an unexpected failure of the command: exit 3
    assert cli.main(["bench", "--no-progress"]) == 3
    assert seen["bench"] == catalog.problem_ids()
    assert cli.main(["check", "--tier", "real", "--no-progress", "--out", out]) == 0
    assert set(seen["check"]) == real
    assert cli.main(["check", "--tier", "all", "--problems", "a8a_300x3000", "--no-progress",
                     "--out", out]) == 0
    assert seen["check"] == ["ip_l2_lam1e-3_a8a_300x3000_s0_paper_compact",
                             "ranksvm_lam1e-3_a8a_300x3000_s0_paper_compact"]
    assert cli.main(["bench", "--tier", "real", "--problems", "spambase", "--no-progress"]) == 3
    assert len(seen["bench"]) == 2


def test_tier_errors_are_one_clear_line(capsys):
    assert cli.main(["check", "--tier", "huge", "--no-progress"]) == 2
    assert "unknown tier 'huge'; expected one of ['core', 'real', 'all']" in \
        capsys.readouterr().err
    assert cli.main(["check", "--problems", "a8a", "--no-progress"]) == 2
    assert "no catalog problem of tier 'core' matches 'a8a'" in capsys.readouterr().err


def test_list_shows_the_core_tier_by_default_with_a_header(capsys):
    from infpush_cvx import catalog
    assert cli.main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["problem", "instance", "formulation", "lambda", "tier", "options"]
    assert len(lines) == 1 + len(catalog.problem_ids()) + 2  # header, rows, blank, count
    assert lines[-1] == f"{len(catalog.problem_ids())} problems of tier 'core' (--tier all for " \
                        f"every tier)"
    assert cli.main(["list", "--tier", "all", "--problems", "a8a_300x3000_s0_paper_compact"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "2 problems of tier 'all'"
    assert cli.main(["list", "--problems", "ip_l2_planted_s_paper_compact"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:5] == ["ip_l2_planted_s_paper_compact", "planted_s",
                                    "infinite_push", "0.1", "core"]
    assert lines[-1] == "1 problem of tier 'core' (--tier all for every tier)"
