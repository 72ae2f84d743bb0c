"""Rank2Plan on the solver contract: the problem value, its methods as classes, MODEL in the
registry, one Deadline through every stage, and a history frame from every method."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from infpush_cvx import catalog
from infpush_cvx.catalog.reference import load_reference
from infpush_cvx.data import PairData
from infpush_cvx.data.generators import rank2plan_pairs
from infpush_cvx.formulations.objectives import rank2plan_objective
from infpush_cvx.solvers import registry
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.rank2plan import (CCG, CVXPY, METHODS, MODEL, Rank2PlanProblem,
                                           Smoothed, rank2plan_lambda_max, rank2plan_lp)
from infpush_cvx.solvers.result import ConvergenceWarning

PAIRS = rank2plan_pairs(4, 15, 10, 30, seed=0)
LAM = 0.05 * rank2plan_lambda_max(PAIRS)
#: A tolerance each method reaches on the small catalog problem (smoothing: low accuracy).
TOLS = {"ccg": 1e-8, "smoothed": 1e-2, "cvxpy": 1e-6}
OPTIONS = {"ccg": {}, "smoothed": {"max_iter": 20000, "stage_tol": 1e-12},
           "cvxpy": {"solver": "CLARABEL"}}


def quiet(solve, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solve(*args, **kwargs)


def test_the_model_is_registered():
    # what registry.models() imports (registry.model itself needs every model's MODEL)
    assert "rank2plan" in registry.MODEL_PACKAGES and MODEL.name == "rank2plan"
    assert MODEL.formulations == ("rank2plan_lp",)
    assert MODEL.default is CCG and MODEL.certified is CCG
    assert METHODS == ("ccg", "smoothed", "cvxpy")
    assert MODEL.method_names(penalty="l1") == METHODS
    assert MODEL.method_names(penalty="l2") == ()  # an l1 model
    assert CCG.accepts(penalty="l1", kernel=True) is not None


@pytest.mark.parametrize("method", [CCG, Smoothed, CVXPY])
@pytest.mark.parametrize("formulation", MODEL.formulations)
def test_each_method_solves_the_catalog_problem_and_is_certified(method, formulation):
    [pid] = [p for p in catalog.problem_ids()
             if catalog.get(p).formulation == formulation and p.endswith("dense_compact")]
    spec = catalog.get(pid)
    data = catalog.instance_data(spec.instance)
    problem = MODEL.problem.from_catalog(formulation, spec.options, spec.lam, data)
    res = method(tol=TOLS[method.name], **OPTIONS[method.name]).solve(problem, deadline=60.0)
    assert res.status == "optimal" and res.converged and res.method == method.name
    assert res.gap <= TOLS[method.name]
    stored = load_reference(pid)["opt_val"]
    assert res.objective == pytest.approx(stored, rel=2 * TOLS[method.name])
    assert res.objective == pytest.approx(problem.objective(res.w), rel=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_an_unknown_option_is_a_type_error_naming_it(method):
    with pytest.raises(TypeError, match="not_an_option"):
        MODEL.method(method)(not_an_option=1)
    with pytest.raises(TypeError, match="not_an_option"):
        rank2plan_lp(PAIRS, LAM, method=method, not_an_option=1)


def test_options_are_checked_once_when_the_method_is_built():
    with pytest.raises(ValueError, match="lp_algorithm"):
        CCG(lp_algorithm="fast")
    with pytest.raises(ValueError, match="tau"):
        Smoothed(tau=[0.1, 0.2])
    with pytest.raises(TypeError, match="max_iter"):
        CVXPY(max_iter=5)
    with pytest.raises(TypeError, match="solver_options"):
        CVXPY(solver_options="x")
    assert CCG(n_pairs_init=5).options() == {"n_pairs_init": 5}


def test_the_problem_is_validated_once_and_knows_its_objective_and_certificate():
    with pytest.raises(TypeError, match="data must be a PairData"):
        Rank2PlanProblem(PAIRS.X, LAM)
    with pytest.raises(ValueError, match="lam"):
        Rank2PlanProblem(PAIRS, -1.0)
    problem = Rank2PlanProblem(PAIRS, LAM)
    res = CCG().solve(problem)
    assert problem.objective(res.w) == rank2plan_objective(PAIRS, res.w, LAM)
    cert = problem.certificate(res.w, res.dual)
    assert cert["gap"] == pytest.approx(res.gap, abs=1e-12)
    assert problem.lambda_max() == rank2plan_lambda_max(PAIRS)
    cvx = problem.cvxpy_problem()
    cvx.solve(solver="CLARABEL")
    assert cvx.value == pytest.approx(res.objective, rel=1e-6)
    with pytest.raises(ValueError, match="solves Rank2PlanProblem"):
        CCG().solve(object())


@pytest.mark.parametrize("method", [CCG, Smoothed])
def test_the_callers_deadline_is_the_one_every_stage_reads(method):
    """A Deadline already past on an injected clock stops the method at its first check: the
    solve reads the caller's Deadline, not one of its own."""
    now = [0.0]
    deadline = Deadline(5.0, clock=lambda: now[0])
    now[0] = 10.0
    res = quiet(method().solve, Rank2PlanProblem(PAIRS, LAM), np.zeros(PAIRS.n_features),
                deadline)
    assert res.status == "time_limit" and "time limit of 5 s" in res.message
    assert res.time == 10.0  # the caller's clock


@pytest.mark.parametrize("run", [
    lambda: rank2plan_lp(PAIRS, LAM),
    lambda: rank2plan_lp(PAIRS, LAM, warm_start=np.zeros(PAIRS.n_features), max_iter=1),
    lambda: rank2plan_lp(PAIRS, LAM, method="smoothed"),
    lambda: rank2plan_lp(PAIRS, LAM, method="smoothed", record_every=0),
    lambda: rank2plan_lp(PAIRS, LAM, method="cvxpy"),
    lambda: rank2plan_lp(PAIRS, 2 * rank2plan_lambda_max(PAIRS)),  # beta = 0, not solved
    lambda: rank2plan_lp(PAIRS, LAM, time_limit=1e-9),
], ids=["ccg", "ccg_max_iter", "smoothed", "smoothed_unrecorded", "cvxpy", "zero",
        "time_limit"])
def test_history_frame_works_for_every_method(run):
    res = quiet(run)
    frame = res.history_frame()
    assert {"iteration", "objective", "gap", "time"} <= set(frame.columns)
    assert len(frame) == max((len(v) for v in res.history.values()), default=0)


def test_arrays_make_the_pairdata_and_give_the_same_answer():
    data = PairData(PAIRS.X.toarray(), PAIRS.i, PAIRS.j, PAIRS.margin, PAIRS.weight)
    assert rank2plan_lp(data, LAM).objective == pytest.approx(
        rank2plan_lp(PAIRS, LAM).objective, rel=1e-9)
