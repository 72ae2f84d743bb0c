"""SVMMAP on the solver contract: its MODEL (no catalog formulation), problem and method."""

import numpy as np
import pytest

from infpush_cvx.data import BipartiteData
from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.result import ConvergenceWarning
from infpush_cvx.solvers.svmmap import MODEL, CuttingPlane, SVMMAPProblem, svmmap


def test_the_model_solves_its_problem_and_is_certified():
    assert MODEL.formulations == () and MODEL.methods == (CuttingPlane,)
    assert MODEL.certified is CuttingPlane
    data = planted_bipartite(8, 10, 3, seed=0)
    problem = SVMMAPProblem(data, 0.1)
    res = CuttingPlane(tol=1e-7).solve(problem)
    assert res.status == "optimal" and res.gap <= 1e-7
    assert res.objective == pytest.approx(problem.objective(res.w), rel=1e-10)
    assert res.objective == pytest.approx(svmmap(data, 0.1, tol=1e-7).objective, rel=1e-12)
    frame = res.history_frame()
    assert {"iteration", "objective", "gap", "time", "cuts"} <= set(frame.columns)
    assert len(frame) == res.iterations


def test_an_option_it_has_not_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="solver"):
        CuttingPlane(solver="SCS")


def test_a_problem_is_validated_once_naming_the_argument():
    rng = np.random.default_rng(0)
    Xp, Xn = rng.normal(size=(4, 2)), rng.normal(size=(5, 2))
    with pytest.raises(ValueError, match="sample weights"):
        SVMMAPProblem(BipartiteData(Xp, Xn, np.ones(4), 2 * np.ones(5)), 1.0)
    with pytest.raises(ValueError, match="lam"):
        SVMMAPProblem(BipartiteData(Xp, Xn), 0.0)


def test_a_deadline_passed_down_stops_the_solve():
    """The cutting planes and Clarabel under them share the Deadline given to solve()."""
    expired = Deadline(1.0, start=0.0, clock=lambda: 5.0)
    problem = SVMMAPProblem(planted_bipartite(8, 10, 3, seed=1), 0.01)
    with pytest.warns(ConvergenceWarning, match="time_limit"):
        res = CuttingPlane().solve(problem, deadline=expired)
    assert res.status == "time_limit" and res.iterations == 1 and res.time == 5.0
