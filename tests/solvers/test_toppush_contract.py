"""TopPush on the solver contract: its MODEL, its problem, its method classes and the polish."""

import numpy as np
import pytest

from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.result import ConvergenceWarning
from infpush_cvx.solvers.toppush import (MODEL, DualAGD, InteriorPoint, TopPushProblem,
                                         duality_gap)
from infpush_cvx.solvers.toppush.polish import polish

LOSSES = ("truncated_quadratic", "hinge")


def test_the_solvers_package_exports_the_function():
    """Issue 28: ``from infpush_cvx.solvers import toppush; toppush(Xp, Xn, 0.1)`` raised
    ``TypeError: 'module' object is not callable``."""
    from infpush_cvx.solvers import pnorm_push, svmmap, toppush
    rng = np.random.default_rng(0)
    Xp, Xn = rng.normal(size=(6, 3)) + 0.5, rng.normal(size=(7, 3))
    for solve in (toppush, pnorm_push, svmmap):
        assert callable(solve)
        assert solve(Xp, Xn, 0.1).status == "optimal"


@pytest.mark.parametrize("loss", LOSSES)
def test_every_method_solves_the_catalog_problem_and_is_certified(loss):
    data = planted_bipartite(10, 12, 3, seed=0)
    assert MODEL.formulations == ("toppush",) and MODEL.certified is InteriorPoint
    problem = TopPushProblem.from_catalog("toppush", {"loss": loss}, 0.1, data)
    values = []
    for method in MODEL.methods:
        res = method(tol=1e-7).solve(problem)
        assert res.status == "optimal" and res.gap <= 1e-7, method.name
        primal, _, gap = problem.certificate(res.w, res.dual)
        assert gap == pytest.approx(res.gap, abs=1e-12) and primal == res.objective
        values.append(res.objective)
    np.testing.assert_allclose(values, values[0], rtol=1e-6)


@pytest.mark.parametrize("method", MODEL.methods, ids=lambda m: m.name)
def test_history_frame_works_for_every_method(method):
    res = method().solve(TopPushProblem(planted_bipartite(8, 9, 3, seed=1), 0.1))
    frame = res.history_frame()
    assert {"iteration", "objective", "gap", "time"} <= set(frame.columns)
    assert len(frame) == len(res.history["objective"])


def test_an_option_a_method_has_not_is_a_type_error_naming_it():
    from infpush_cvx.solvers import toppush
    data = planted_bipartite(5, 6, 3, seed=0)
    with pytest.raises(TypeError, match="cvxpy_solver"):  # the CVXPY method takes solver=
        toppush(data, 0.1, method="cvxpy", cvxpy_solver="CLARABEL")
    with pytest.raises(TypeError, match="polish"):
        MODEL.method("cvxpy")(polish=True)
    with pytest.raises(TypeError, match="polish"):
        InteriorPoint(polish="yes")
    with pytest.raises(TypeError, match="solver"):
        DualAGD(solver="SCS")


@pytest.mark.parametrize("loss", LOSSES)
def test_polish_is_a_step_of_the_native_solve(loss):
    """The rankers' refinement (:mod:`.polish`), now ``polish=True``: the same point as the
    polish applied by hand, certified by the same gap."""
    data = planted_bipartite(15, 20, 4, seed=3)
    problem = TopPushProblem(data, 0.05, loss=loss)
    plain = InteriorPoint().solve(problem)
    polished = InteriorPoint(polish=True).solve(problem)
    by_hand = polish(data, 0.05, loss, plain)
    assert polished.info["polished"] == by_hand.info["polished"]
    np.testing.assert_allclose(polished.w, by_hand.w, rtol=1e-12, atol=1e-15)
    assert polished.gap == by_hand.gap <= plain.gap
    assert duality_gap(data, polished.w, *polished.dual, 0.05, loss)[2] == \
        pytest.approx(polished.gap, abs=1e-15)
    assert "polished" not in plain.info


def test_an_uncertified_solve_is_not_polished():
    data = planted_bipartite(15, 20, 4, seed=3)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        res = DualAGD(polish=True, max_iter=3).solve(TopPushProblem(data, 0.05))
    assert res.status == "max_iter" and "polished" not in res.info


def test_a_deadline_passed_down_stops_the_solve():
    """One Deadline flows from solve() down to the interior-point engine (an injected clock
    past its limit; no time measured here)."""
    expired = Deadline(1.0, start=0.0, clock=lambda: 5.0)
    problem = TopPushProblem(planted_bipartite(8, 9, 3, seed=2), 0.1)
    for method in (InteriorPoint, DualAGD):
        with pytest.warns(ConvergenceWarning, match="time_limit"):
            res = method().solve(problem, deadline=expired)
        assert res.status == "time_limit" and res.iterations == 0 and res.time == 5.0


def test_a_problem_is_validated_once_naming_the_argument():
    data = planted_bipartite(5, 6, 3, seed=0)
    with pytest.raises(ValueError, match="loss"):
        TopPushProblem(data, 0.1, loss="square")
    with pytest.raises(ValueError, match="lam"):
        TopPushProblem(data, 0.0)
    from infpush_cvx.solvers.pnorm_push import PNormPushProblem
    with pytest.raises(ValueError, match="solves TopPushProblem, got PNormPushProblem"):
        InteriorPoint().solve(PNormPushProblem(data, 0.1))
