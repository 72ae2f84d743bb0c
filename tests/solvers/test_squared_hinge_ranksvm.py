"""The squared-hinge RankSVM: its pair sums and certificate against brute force over the m x n
pairs, its Newton method against CVXPY + Clarabel (planted, weighted, sparse, seed scaling,
Ionosphere), the time limit, bad input and the model's registration."""

import itertools
import logging
import time

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.data import BipartiteData
from infpush_cvx.data.generators import degenerate_bipartite, planted_bipartite
from infpush_cvx.formulations import squared_hinge_ranksvm_problem
from infpush_cvx.solvers import SquaredHingeRankSVMProblem, squared_hinge_ranksvm
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.result import ConvergenceWarning
from infpush_cvx.solvers.squared_hinge_ranksvm import MODEL, Newton

TOL = 1e-8


def weighted(data, seed=0):
    rng = np.random.default_rng(seed)
    return BipartiteData(data.Xp, data.Xn, rng.uniform(0.2, 3.0, data.m),
                         rng.uniform(0.2, 3.0, data.n))


def brute_force(problem, w):
    """``(P, D(tau* alpha), gradient)`` of ``w`` in paper scaling from the m x n pairs."""
    data, lam = problem.data, problem.lam_paper
    Xp = data.Xp.toarray() if sp.issparse(data.Xp) else data.Xp
    Xn = data.Xn.toarray() if sp.issparse(data.Xn) else data.Xn
    c = np.outer(data.pos_weights, data.neg_weights) / (data.wp_sum * data.wn_sum)
    x = np.maximum(1.0 - (Xp @ w)[:, None] + (Xn @ w)[None, :], 0.0)
    alpha = 2.0 * c * x
    u = Xp.T @ alpha.sum(axis=1) - Xn.T @ alpha.sum(axis=0)  # sum alpha_ij (x_i - x_j)
    A, B, C = alpha.sum(), (c * x * x).sum(), (u @ u) / (2.0 * lam)
    tau = A / (2.0 * (B + C))
    return 0.5 * lam * (w @ w) + B, tau * A - tau * tau * (B + C), lam * w - u


def cvxpy_value(data, lam, scaling="paper"):
    problem = squared_hinge_ranksvm_problem(data, lam, scaling=scaling)
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert problem.status == "optimal"
    return problem.value


def ionosphere():
    from infpush_cvx.data.datasets import load_ionosphere
    try:
        X, y = load_ionosphere()
    except FileNotFoundError as exc:
        pytest.skip(f"ionosphere not available: {exc}")
    return BipartiteData(X[y == 1], X[y == 0])


DATA = {
    "planted": lambda: planted_bipartite(30, 40, 8, seed=1),
    "weighted": lambda: weighted(planted_bipartite(25, 35, 6, seed=2)),
    "sparse": lambda: planted_bipartite(40, 50, 30, density=0.2, seed=3),
    "degenerate": lambda: degenerate_bipartite(20, 30, 5, seed=4),  # ties at the margin
    "ionosphere": ionosphere,
}


@pytest.mark.parametrize("name", ["planted", "weighted", "sparse", "degenerate"])
def test_sums_and_certificate_match_brute_force(name):
    data = DATA[name]()
    problem = SquaredHingeRankSVMProblem(data, 0.05)
    rng = np.random.default_rng(5)
    for w in (np.zeros(data.d), rng.normal(size=data.d), np.ones(data.d)):
        point = problem.point(w)
        primal, dual, gradient = brute_force(problem, w)
        assert point.primal == pytest.approx(primal, rel=1e-12, abs=1e-14)
        assert problem.certificate(point)[0] == pytest.approx(dual, rel=1e-10, abs=1e-14)
        assert np.allclose(problem.lam_paper * w - 2 * point.pairs, gradient, atol=1e-12)
        assert dual <= primal  # weak duality: the certificate is a bound at any w


@pytest.mark.parametrize("name", ["planted", "weighted", "sparse"])
def test_hessian_vector_product_matches_brute_force(name):
    from infpush_cvx.solvers.squared_hinge_ranksvm.newton import _hessian_product

    data = DATA[name]()
    problem = SquaredHingeRankSVMProblem(data, 0.05)
    rng = np.random.default_rng(6)
    w, u = rng.normal(size=data.d), rng.normal(size=data.d)
    point = problem.point(w)
    Xp = data.Xp.toarray() if sp.issparse(data.Xp) else data.Xp
    Xn = data.Xn.toarray() if sp.issparse(data.Xn) else data.Xn
    c = np.outer(data.pos_weights, data.neg_weights) / (data.wp_sum * data.wn_sum)
    active = c * (1.0 - (Xp @ w)[:, None] + (Xn @ w)[None, :] > 0)
    zu = (Xp @ u)[:, None] - (Xn @ u)[None, :]
    expected = problem.lam_paper * u + 2 * (Xp.T @ (active * zu).sum(axis=1)
                                            - Xn.T @ (active * zu).sum(axis=0))
    assert np.allclose(_hessian_product(problem, point.sums, u), expected, atol=1e-12)


@pytest.mark.parametrize("hessian", ["cg", "formed"])
@pytest.mark.parametrize(("name", "lam", "scaling"), [
    ("planted", 0.1, "paper"), ("planted", 1e-3, "paper"), ("planted", 0.1, "seed"),
    ("weighted", 0.01, "paper"), ("weighted", 0.5, "seed"), ("sparse", 0.01, "paper"),
    ("degenerate", 0.1, "paper"), ("ionosphere", 1e-3, "paper")])
def test_newton_agrees_with_clarabel(name, lam, scaling, hessian):
    data = DATA[name]()
    result = squared_hinge_ranksvm(data, lam, scaling=scaling, tol=TOL, hessian=hessian)
    assert result.status == "optimal" and result.info["hessian"] == hessian
    assert 0 <= result.gap <= TOL or abs(result.gap) <= result.info["gap_roundoff"]
    reference = cvxpy_value(data, lam, scaling)
    assert result.objective == pytest.approx(reference, rel=1e-6)
    # the certificate bounds the distance to the optimum: P(w) - P* <= gap |P(w)|
    assert result.objective - reference <= 2 * TOL * abs(result.objective) + 1e-7 * reference


def test_arrays_and_warm_start():
    data = planted_bipartite(30, 40, 8, seed=1)
    cold = squared_hinge_ranksvm(data.Xp, data.Xn, 0.01, tol=TOL)
    assert cold.objective == pytest.approx(squared_hinge_ranksvm(data, 0.01).objective,
                                           rel=1e-6)
    warm = squared_hinge_ranksvm(data, 0.011, warm_start=cold, tol=TOL)
    assert warm.status == "optimal" and warm.iterations < cold.iterations


def test_history_frame_has_one_row_per_iteration():
    result = squared_hinge_ranksvm(planted_bipartite(30, 40, 8, seed=1), 0.01)
    frame = result.history_frame()
    assert len(frame) == result.iterations
    assert {"iteration", "objective", "gap", "time", "cg_iterations", "step_size"} \
        <= set(frame.columns)
    assert frame["gap"].iloc[-1] == result.gap


class StepClock:
    """A clock that advances one second at every reading."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("limit", [1.5, 4.5, 8.5])
def test_deadline_stops_at_a_stage_with_its_best_certified_point(limit):
    problem = SquaredHingeRankSVMProblem(planted_bipartite(30, 40, 8, seed=1), 1e-3)
    with pytest.warns(ConvergenceWarning, match="time limit"):
        result = Newton(tol=1e-12).solve(problem, deadline=Deadline(limit, clock=StepClock()))
    assert result.status == "time_limit"
    assert len(result.history_frame()) == result.iterations
    if result.gap is not None:  # a certified point: its gap is the true one of its w
        primal, dual, _ = brute_force(problem, result.w)
        assert result.gap == pytest.approx((primal - dual) / primal, rel=1e-8)


def test_deadline_passed_in_the_set_up_returns_the_start():
    problem = SquaredHingeRankSVMProblem(planted_bipartite(30, 40, 8, seed=1), 1e-3)
    start = np.full(8, 0.25)
    with pytest.warns(ConvergenceWarning, match="time limit"):
        result = Newton().solve(problem, start, Deadline(0.5, clock=StepClock()))
    assert result.status == "time_limit" and result.gap is None and result.iterations == 0
    assert np.array_equal(result.w, start)
    assert result.objective == pytest.approx(brute_force(problem, start)[0])


def test_verbose_logs_the_iterations(caplog):
    """(Under pytest the INFO lines reach caplog, not stderr: tests/solvers/test_verbose.py.)"""
    data = planted_bipartite(30, 40, 8, seed=1)
    with caplog.at_level(logging.INFO, logger="infpush_cvx.solvers"):
        squared_hinge_ranksvm(data, 0.01)
        assert not caplog.records
        result = squared_hinge_ranksvm(data, 0.01, verbose=True)
    lines = [r.getMessage() for r in caplog.records]
    assert sum(line.startswith("newton ") for line in lines) == result.iterations
    assert "status optimal" in lines[-1]


def test_time_limit_is_honoured():
    rng = np.random.default_rng(0)
    data = BipartiteData(rng.normal(size=(3000, 200)) + 0.1, rng.normal(size=(3000, 200)))
    started = time.perf_counter()
    with pytest.warns(ConvergenceWarning):
        result = squared_hinge_ranksvm(data, 1e-6, tol=1e-14, time_limit=0.05)
    assert result.status == "time_limit"
    assert time.perf_counter() - started < 3.0  # generous: a loaded 2-core machine


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"lam": -1.0}, ValueError, "lam"),
    ({"lam": "x"}, TypeError, "lam"),
    ({"scaling": "papr"}, ValueError, "scaling"),
    ({"method": "fista"}, ValueError, "method"),
    ({"tol": 0.0}, ValueError, "tol"),
    ({"max_cg": 0}, ValueError, "max_cg"),
    ({"hessian": "exact"}, ValueError, "hessian"),
    ({"eta0": 1.0}, TypeError, "eta0"),
    ({"time_limit": -1.0}, ValueError, "time_limit"),
    ({"warm_start": np.ones(3)}, ValueError, "warm_start"),
])
def test_bad_input_names_the_argument(kwargs, error, match):
    data = planted_bipartite(10, 12, 4, seed=0)
    kwargs = {"lam": 0.1, **kwargs}
    with pytest.raises(error, match=match):
        squared_hinge_ranksvm(data, **kwargs)


def test_auto_forms_the_hessian_only_where_it_is_cheaper():
    small = squared_hinge_ranksvm(planted_bipartite(30, 40, 8, seed=1), 0.01)
    assert small.info["hessian"] == "formed"
    rng = np.random.default_rng(0)  # dense rows of 400 entries: forming costs ~200 products
    wide = BipartiteData(rng.normal(size=(60, 400)), rng.normal(size=(60, 400)))
    tall = sp.random(10, 3001, density=0.01, random_state=0, format="csr")
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        assert squared_hinge_ranksvm(wide, 0.01, max_iter=1).info["hessian"] == "cg"
        assert squared_hinge_ranksvm(tall, tall, 0.01, max_iter=1).info["hessian"] == "cg"
    with pytest.raises(ValueError, match="hessian='formed' needs d <= 3000"):
        squared_hinge_ranksvm(tall, tall, 0.01, hessian="formed")


def test_bad_data_is_a_type_error():
    with pytest.raises(TypeError, match="data must be a BipartiteData"):
        SquaredHingeRankSVMProblem(np.ones((3, 2)), 0.1)
    with pytest.raises(TypeError, match="Xn"):
        squared_hinge_ranksvm(np.ones((3, 2)), 0.1)


def test_model_is_complete():
    data = planted_bipartite(20, 30, 5, seed=101)
    for formulation, cls in itertools.product(MODEL.formulations, MODEL.methods):
        problem = MODEL.problem.from_catalog(formulation, {"scaling": "seed", "form": "compact"},
                                             0.5, data)
        assert problem.lam_paper == pytest.approx(2 * 0.5 / (data.m * data.n))
        result = cls().solve(problem)
        assert result.converged and result.gap <= cls().tol
        assert result.objective == pytest.approx(problem.cvxpy_problem().solve(
            solver="CLARABEL"), rel=1e-5)
    assert MODEL.certified is Newton and MODEL.method("newton") is Newton
    with pytest.raises(TypeError, match="rho"):
        Newton(rho=1.0)
    with pytest.raises(ValueError, match="formulation"):
        MODEL.problem.from_catalog("ranksvm", {}, 0.1, data)


def test_registered():
    from infpush_cvx.solvers.registry import MODEL_PACKAGES
    assert "squared_hinge_ranksvm" in MODEL_PACKAGES


@pytest.mark.parametrize("name", ["planted", "sparse", "degenerate"])
def test_preconditioned_cg_solves_the_newton_system_of_another_point(name):
    """CG preconditioned by the factor of the Hessian at one point solves the Newton system at
    another (the formed route's steps between two formations), as a direct solve does."""
    import scipy.linalg

    from infpush_cvx.solvers.engines.deadline import Deadline
    from infpush_cvx.solvers.engines.pair_gram import PairGram
    from infpush_cvx.solvers.engines.conjugate_gradients import conjugate_gradients
    from infpush_cvx.solvers.squared_hinge_ranksvm.newton import _factor, _hessian_product

    data = DATA[name]()
    problem = SquaredHingeRankSVMProblem(data, 1e-3)
    rng = np.random.default_rng(8)
    gram = PairGram(problem.Xp, problem.Xn, *problem.pair_weights)
    here, there = problem.point(rng.normal(size=data.d)), problem.point(rng.normal(size=data.d))
    factor = _factor(problem, gram, there, Deadline(None))
    grad = problem.lam_paper * here.w - 2.0 * here.pairs
    exact = -scipy.linalg.cho_solve(_factor(problem, gram, here, Deadline(None)), grad)
    product = (lambda u: _hessian_product(problem, here.sums, u))
    d, iterations = conjugate_gradients(product, grad, 1e-10 * np.linalg.norm(grad), 500,
                                        Deadline(None), factor)
    plain, plain_iterations = conjugate_gradients(product, grad, 1e-10 * np.linalg.norm(grad),
                                                  500, Deadline(None))
    assert np.allclose(d, exact, rtol=1e-6, atol=1e-9 * np.abs(exact).max())
    assert np.allclose(plain, exact, rtol=1e-6, atol=1e-9 * np.abs(exact).max())
    assert 0 < iterations <= data.d + 1
