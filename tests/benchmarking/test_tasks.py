"""Tasks: which solvers apply to which catalog problem (the catalog's registry), and the row a
task produces, for a catalog problem or a generated instance."""

import json
import math

import pytest

from infpush_cvx import catalog
from infpush_cvx.benchmarking import ProcessExecutor, make_tasks, native_methods, run_task
from infpush_cvx.benchmarking import run_benchmark
from infpush_cvx.benchmarking.tasks import COLUMNS, Instance, Task
from infpush_cvx.catalog import registry
from infpush_cvx.solvers import registry as solver_registry
from infpush_cvx.solvers.infinite_push import METHODS as IP_METHODS
from infpush_cvx.solvers.rank2plan import METHODS as R2P_METHODS
from infpush_cvx.solvers.ranksvm import METHODS as RANKSVM_METHODS


def test_native_methods_follow_the_solver_modules():
    get = catalog.get
    assert native_methods(get("ip_l2_planted_s_paper_compact")) == \
        [f"infinite_push.{m}" for m in IP_METHODS["l2"]]
    assert native_methods(get("ip_l1_planted_s_seed_compact")) == \
        [f"infinite_push.{m}" for m in IP_METHODS["l1"]]
    assert native_methods(get("ranksvm_planted_s_paper_compact")) == \
        [f"ranksvm.{m}" for m in RANKSVM_METHODS]
    assert native_methods(get("rank2plan_pairs_dense_compact")) == \
        [f"rank2plan.{m}" for m in R2P_METHODS if m != "cvxpy"]
    # the direct form is the same optimisation problem: project solvers run once, on compact
    assert native_methods(get("ip_l2_planted_s_paper_direct")) == []
    # duals have no project solver; the original script's problem (direct form) neither
    assert native_methods(get("ip_dual_planted_s_paper")) == []
    assert native_methods(get("infinite_push_0")) == []


def test_make_tasks_respects_solver_classes_and_repeats():
    tasks = make_tasks(["ip_l2_planted_s_paper_compact", "ip_l1_planted_s_paper_compact"],
                       cvxpy=["CLARABEL", "HIGHS"], native=["infinite_push.working_set"],
                       repeats=2)
    got = {(t.problem, t.solver, t.repeat) for t in tasks}
    # HiGHS is run on LPs only (the l1 problem), never on the l2 QP
    assert ("ip_l2_planted_s_paper_compact", "HIGHS", 0) not in got
    assert ("ip_l1_planted_s_paper_compact", "HIGHS", 1) in got
    assert len(tasks) == 2 * (2 + 3)
    assert {t.kind for t in tasks if t.solver == "infinite_push.working_set"} == {"native"}


def test_make_tasks_module_name_selects_all_its_methods():
    tasks = make_tasks(["rank2plan_pairs_dense_compact"], cvxpy=[], native=["rank2plan"])
    assert sorted(t.solver for t in tasks) == ["rank2plan.ccg", "rank2plan.smoothed"]


@pytest.mark.parametrize("kwargs, match", [
    ({"problems": "no-such-problem"}, "selects no catalog problem"),
    ({"problems": ["nope"]}, "unknown problem"),
    ({"problems": ["ip_dual_planted_s_paper"], "cvxpy": [], "native": None}, "no solver"),
    ({"problems": ["ip_dual_planted_s_paper"], "cvxpy": ["NOPE"]}, "unknown solver"),
    ({"problems": ["ip_dual_planted_s_paper"], "repeats": 0}, "repeats"),
    ({"problems": ["ip_dual_planted_s_paper"], "timeout": -1}, "timeout"),
])
def test_make_tasks_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_tasks(**kwargs)


def test_cvxpy_row_agrees_with_the_stored_value():
    row = run_task(Task("ip_l1_planted_s_paper_compact", "cvxpy", "HIGHS"))
    assert set(COLUMNS) - {"executor", "run_id"} <= set(row)  # set by the runner
    assert row["status"] == "optimal" and row["agrees"] and row["converged"]
    assert row["rel_error"] <= 1e-6
    assert row["version_cvxpy"] and row["version_numpy"] and row["version_highspy"]
    assert row["compile_time"] > 0 and row["solve_time"] > 0 and row["setup_time"] >= 0
    assert row["time"] >= row["compile_time"] + row["solve_time"]


def test_native_row_carries_the_certificate():
    row = run_task(Task("ranksvm_planted_s_paper_compact", "native", "ranksvm.working_set",
                        tol=1e-7))
    assert row["status"] == "optimal" and row["agrees"]
    assert row["gap"] <= 1e-7 and row["iterations"] >= 1
    assert row["rel_error"] <= registry.rtol(1e-7)
    assert row["rtol"] == registry.rtol(1e-7)


def test_a_stale_stored_value_is_not_compared_with_and_the_row_says_why(tmp_path, monkeypatch):
    """Issue 26: ``check`` and ``solve`` used a record whose instance fingerprint no longer
    matched without a word."""
    from infpush_cvx.catalog import reference
    pid = "ip_l2_planted_s_paper_compact"
    fresh = run_task(Task(pid, "native", "infinite_push.working_set"))
    assert fresh["agrees"] and fresh["reference_note"] == ""
    record = json.loads(reference.reference_path(pid).read_text())
    record["instance_fingerprint"] = "0" * len(record["instance_fingerprint"])
    (tmp_path / f"{pid}.json").write_text(json.dumps(record))
    monkeypatch.setenv(reference.REFERENCE_DIR_ENV_VAR, str(tmp_path))
    row = run_task(Task(pid, "native", "infinite_push.working_set"))
    assert row["status"] == "optimal" and row["reference"] is None and not row["agrees"]
    assert "not used" in row["reference_note"]
    assert f"reference regenerate --only {pid}" in row["reference_note"]


def test_a_method_that_stops_early_is_a_row_not_an_agreement():
    # the paper's gradient projection does not reach a 1e-8 gap in its default 1000 steps
    row = run_task(Task("ip_l2_planted_s_paper_compact", "native", "infinite_push.paper",
                        tol=1e-8))
    assert row["status"] != "optimal" and not row["agrees"]
    assert row["rel_error"] > 1e-8


def test_exceptions_become_rows():
    row = run_task(Task("ip_l2_planted_s_paper_compact", "native", "infinite_push.nope"))
    assert row["status"].startswith("error") and "nope" in row["error"]
    assert not row["agrees"] and math.isinf(row["rel_error"])
    row = run_task(Task("no-such-problem", "cvxpy", "CLARABEL"))
    assert row["status"] == "error" and "unknown problem" in row["error"]


def test_every_catalog_problem_has_a_certified_project_solver_in_the_registry():
    for pid in catalog.problem_ids(tier="all"):
        spec = catalog.get(pid)
        model, _, method = registry.certified_label(spec).partition(".")
        assert method in solver_registry.model(model).method_names(**registry.traits(spec)), pid
        # the project methods of a primal compact problem are exactly its model's
        primal = spec.formulation == solver_registry.model(model).formulations[0]
        if primal and spec.options.get("form") != "direct":
            assert registry.certified_label(spec) in native_methods(spec), pid
    assert registry.certified_label(catalog.get("ip_dual_planted_s_paper")) == \
        "infinite_push.working_set"  # a dual is re-solved through its primal
    with pytest.raises(ValueError, match="unknown model 'nope'"):
        registry.method_class("nope.fista")


GENERATED = Instance("planted_tiny", "planted_bipartite",
                     (("m", 12), ("n", 15), ("d", 4), ("seed", 1)), "infinite_push",
                     (("penalty", "l2"), ("scaling", "paper"), ("form", "compact")), 0.1)


def test_a_generated_instance_is_a_task_without_a_stored_value():
    native = run_task(Task(GENERATED, "native", "infinite_push.working_set"))
    cvx = run_task(Task(GENERATED, "cvxpy", "CLARABEL", options=()))
    for row in (native, cvx):
        assert row["problem"] == "planted_tiny" and row["tier"] == "generated", row
        assert row["generator"] == "planted_bipartite" and row["seed"] == 1
        assert (row["m"], row["n"], row["d"]) == (12, 15, 4)
        assert row["status"] == "optimal" and row["converged"]
        assert row["reference"] is None and row["rel_error"] is None and not row["agrees"]
        assert row["peak_rss_mib"] >= row["rss_before_mib"] > 0
        assert 1 <= row["nnz_w"] <= 4  # of the 4 features
    assert native["objective"] == pytest.approx(cvx["objective"], rel=1e-6)
    # the task's options replace the comparison options (here: CVXPY's defaults)
    assert json.loads(cvx["solver_options"]) == {"solver": "CLARABEL", "verbose": False}


def test_a_generated_instance_names_a_known_generator_and_formulation():
    with pytest.raises(ValueError, match="generator"):
        Instance("x", "no_such_generator")
    with pytest.raises(ValueError, match="formulation"):
        Instance("x", "planted_bipartite", formulation="nope")


def test_a_warm_start_solves_the_other_lambda_first(monkeypatch):
    calls = []
    solve = registry.solve

    def spy(spec, label, data, **kwargs):
        calls.append((spec.lam, "warm_start" in kwargs))
        return solve(spec, label, data, **kwargs)
    monkeypatch.setattr(registry, "solve", spy)
    row = run_task(Task(GENERATED, "native", "infinite_push.working_set",
                        options=(("warm_start_lam", 0.2),)))
    assert calls == [(0.2, False), (0.1, True)]
    assert row["status"] == "optimal" and json.loads(row["solver_options"])["warm_start_lam"] == 0.2


@pytest.mark.slow  # two worker processes that import CVXPY
def test_fresh_processes_run_every_task_in_a_new_worker():
    tasks = [Task(GENERATED, "native", "infinite_push.working_set", repeat=r) for r in range(2)]
    df = run_benchmark(tasks, ProcessExecutor(n_workers=1, fresh=True), progress=False)
    assert (df["status"] == "optimal").all() and df["pid"].nunique() == 2
