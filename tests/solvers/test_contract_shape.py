"""The pieces every model shares through :mod:`infpush_cvx.solvers.base`: the history recorder,
the progress log and summary of a direct ``solve``, the generic ``from_catalog``, the checks of
lambda and data, and the CVXPY methods' one shape (info, messages, warm start)."""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.data import PairData
from infpush_cvx.data.generators import letor_like, planted_bipartite, rank2plan_pairs
from infpush_cvx.solvers import registry
from infpush_cvx.solvers.base import cvxpy_message, data_size, record

DATA = planted_bipartite(8, 10, 3, seed=0)


def test_record_appends_one_row_by_column():
    history = {"objective": [], "gap": []}
    record(history, objective=2.0, gap=0.5)
    record(history, objective=1.0, gap=0.1, step=0.5)  # a new column starts where it first is
    assert history == {"objective": [2.0, 1.0], "gap": [0.5, 0.1], "step": [0.5]}
    assert list(history) == ["objective", "gap", "step"]


def test_data_size_counts_stored_entries():
    dense = np.ones((3, 4))
    sparse = sp.csr_matrix(np.eye(5))
    assert data_size(dense) == 12 and data_size(sparse) == 5 and data_size(dense, sparse) == 17


def test_cvxpy_message():
    assert "could not be certified" in cvxpy_message("optimal", "unverified", None, "")
    said = cvxpy_message("optimal", "stalled", 3e-4, "")
    assert "reported 'optimal'" in said and said.endswith("0.0003")
    assert cvxpy_message("failed", "failed", None, "the cause") == "the cause"
    assert cvxpy_message("optimal", "optimal", 1e-9, "") == ""


def _problem(name):
    model = registry.model(name)
    if name == "rank2plan":
        pairs = rank2plan_pairs(3, 8, 4, 10, seed=0)
        return model.problem(pairs, 0.01)
    if name in ("query_infinite_push", "query_ranksvm"):  # models over queries
        from infpush_cvx.data.generators import letor_like
        return model.problem(letor_like(6, 8, 3, seed=0), 0.1)
    return model.problem(DATA, 0.1)


@pytest.mark.parametrize("name", sorted(registry.models()))
def test_a_direct_solve_logs_its_header_and_summary(name, caplog):
    """Solver.solve shows the progress of any method built with verbose=True (not only through
    the convenience functions) and ends it with the summary line."""
    model = registry.model(name)
    problem = _problem(name)
    caplog.set_level(logging.INFO, logger="infpush_cvx")
    result = model.certified(verbose=True).solve(problem, deadline=60.0)
    lines = [r.getMessage() for r in caplog.records if r.name == "infpush_cvx.solvers"]
    assert lines[0].startswith(f"{problem.log_name} {result.method}")
    assert lines[-1].startswith(f"{problem.log_name} {result.method}: status {result.status}")
    assert sum(" status " in line for line in lines) == 1  # one summary, not one per layer


@pytest.mark.parametrize("name", sorted(registry.models()))
def test_model_solve_is_the_method_s_solve(name):
    model = registry.model(name)
    problem = _problem(name)
    ours = model.solve(model.default.name, problem, None, None, tol=1e-6)
    theirs = model.default(tol=1e-6).solve(problem)
    assert ours.method == theirs.method and ours.status == theirs.status
    np.testing.assert_allclose(ours.w, theirs.w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(registry.models()))
def test_from_catalog_takes_only_the_problem_s_options(name):
    model = registry.model(name)
    fields = {f.name for f in dataclasses.fields(model.problem)}
    assert set(model.problem.catalog_options) <= fields
    with pytest.raises(ValueError, match=r"formulation must be one of .* got 'nope'"):
        model.problem.from_catalog("nope", {}, 0.1, DATA)


def test_from_catalog_ignores_cvxpy_options():
    model = registry.model("toppush")
    problem = model.problem.from_catalog("toppush", {"loss": "hinge", "form": "compact",
                                                     "scaling": "paper"}, 0.1, DATA)
    assert problem.loss == "hinge" and problem.lam_paper == 0.1


@pytest.mark.parametrize("name", ["pnorm_push", "toppush", "svmmap"])
def test_paper_only_problems_check_data_lambda_and_scaling(name):
    cls = registry.model(name).problem
    with pytest.raises(TypeError, match="data must be a BipartiteData"):
        cls(np.ones((3, 2)), 0.1)
    with pytest.raises(ValueError, match="lam"):
        cls(DATA, -1.0)
    with pytest.raises(ValueError, match="scaling"):
        cls(DATA, 0.1, scaling="seed")
    problem = cls(DATA, 0.25)
    assert problem.lam == problem.lam_paper == 0.25 and problem.solved.d == DATA.d


@pytest.mark.parametrize("name", ["rank2plan", "pnorm_push", "toppush"])
def test_the_cvxpy_methods_share_one_shape(name):
    model = registry.model(name)
    problem = _problem(name)
    cvxpy = model.method("cvxpy")
    result = cvxpy(solver="CLARABEL").solve(problem, deadline=60.0)
    assert result.status == "optimal" and result.method == "cvxpy"
    assert {"cvxpy_status", "cvxpy_value", "solver", "solve_time", "solver_options",
            "stage_times", "isolated"} <= set(result.info)
    assert result.info["solver"] == "CLARABEL" and result.info["isolated"] is False


@pytest.mark.parametrize("name,others", [("rank2plan", "'ccg' or 'smoothed'"),
                                         ("pnorm_push", "'newton' or 'boosting'")])
def test_a_cvxpy_method_refuses_a_warm_start_naming_the_methods_that_take_one(name, others):
    problem = _problem(name)
    w0 = np.zeros(problem.data.X.shape[1] if isinstance(problem.data, PairData)
                  else problem.data.d)
    with pytest.raises(TypeError, match=f"warm_start is used only by method {others}"):
        registry.model(name).method("cvxpy")().solve(problem, w0)


@pytest.mark.parametrize("name", ["pnorm_push", "toppush", "svmmap", "squared_hinge_ranksvm"])
def test_a_stopped_solve_warns_at_the_caller_s_line(name):
    from infpush_cvx.solvers.result import ConvergenceWarning

    method = registry.model(name).certified(tol=1e-12, max_iter=1)
    with pytest.warns(ConvergenceWarning) as caught:
        method.solve(_problem(name))
    assert caught[0].filename == __file__


@pytest.mark.parametrize("name", ["rank2plan", "pnorm_push", "toppush"])
def test_a_cvxpy_method_checks_its_solver_name(name):
    with pytest.raises(TypeError, match="solver must be a CVXPY solver name or None, got int"):
        registry.model(name).method("cvxpy")(solver=3)
