"""Tasks: which solvers apply to which catalog problem, and the row a task produces."""

import math

import pytest

from infpush_cvx import catalog
from infpush_cvx.benchmarking import make_tasks, native_methods, run_task
from infpush_cvx.benchmarking.tasks import COLUMNS, Task, native_rtol
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
    assert row["rel_error"] <= native_rtol(1e-7)
    assert row["rtol"] == native_rtol(1e-7)


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
