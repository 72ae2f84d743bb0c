"""TopPush (Li, Jin & Zhou, NIPS 2014): solvers against independent CVXPY + Clarabel solves, the
certificate recomputed here by explicit loops, the equal-sums projection against CVXPY, an exact
breakpoint search and its variational inequality."""

import itertools
import warnings

import cvxpy as cp
import numpy as np
import pytest

from infpush_cvx.data import BipartiteData
from infpush_cvx.formulations._toppush import toppush_problem
from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.prox.equal_sums import project_equal_sums
from infpush_cvx.solvers.result import ConvergenceWarning, SolverResult
from infpush_cvx.solvers.toppush import toppush

LOSSES = ("truncated_quadratic", "hinge")


# ---- independent references -------------------------------------------------------------------
def brute_primal(data, w, lam, loss):
    """``(lam/2)||w||^2 + sum_i c_i loss(max_j t_j - s_i)`` by explicit loops over the rows."""
    Xp, Xn = np.asarray(data.Xp.todense() if data.is_sparse else data.Xp), \
        np.asarray(data.Xn.todense() if data.is_sparse else data.Xn)
    p = data.pos_weights
    top = max(float(Xn[j] @ w) for j in range(data.n))
    total = 0.0
    for i in range(data.m):
        h = max(0.0, 1.0 + top - float(Xp[i] @ w))
        total += p[i] * (h * h if loss == "truncated_quadratic" else h)
    return 0.5 * lam * float(w @ w) + total / p.sum()


def brute_dual(data, alpha, beta, lam, loss):
    """The dual value from its definition, with the feasibility it needs asserted here."""
    Xp, Xn = np.asarray(data.Xp.todense() if data.is_sparse else data.Xp), \
        np.asarray(data.Xn.todense() if data.is_sparse else data.Xn)
    c = data.pos_weights / data.pos_weights.sum()
    assert alpha.min() >= 0 and beta.min() >= 0
    assert abs(alpha.sum() - beta.sum()) <= 1e-12 * max(1.0, alpha.sum())
    if loss == "hinge":
        assert np.all(alpha <= c * (1 + 1e-12))
    v = sum(alpha[i] * Xp[i] for i in range(data.m)) - sum(beta[j] * Xn[j] for j in range(data.n))
    value = float(alpha.sum()) - float(v @ v) / (2.0 * lam)
    if loss == "truncated_quadratic":
        value -= float(sum(alpha[i] ** 2 / (4.0 * c[i]) for i in range(data.m)))
    return value


def cvxpy_optimum(data, lam, loss):
    prob = toppush_problem(data, lam, loss=loss)
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal"
    return prob.value, prob.var_dict["w"].value


def check_certificate(data, res, lam, loss, tol):
    """The reported gap is reproduced by the loops above, and it bounds the distance to CVXPY."""
    alpha, beta = res.dual
    primal = brute_primal(data, res.w, lam, loss)
    dual = brute_dual(data, alpha, beta, lam, loss)
    assert res.objective == pytest.approx(primal, rel=1e-10, abs=1e-12)
    assert res.gap == pytest.approx((primal - dual) / abs(primal), rel=1e-6, abs=1e-12)
    assert res.gap <= tol
    return primal, dual


INSTANCES = {
    "dense": lambda: planted_bipartite(30, 45, 6, seed=11),
    "sparse": lambda: planted_bipartite(25, 40, 15, seed=12, density=0.4),
    "overlapping": lambda: planted_bipartite(30, 30, 4, seed=13, margin=0.02),
}


@pytest.mark.parametrize("method", ["interior_point", "dual_agd", "cvxpy"])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("instance,lam", [("dense", 0.05), ("sparse", 0.01),
                                          ("overlapping", 1.0), ("dense", 1e-3)])
def test_matches_cvxpy_and_certificate_holds(method, loss, instance, lam):
    data = INSTANCES[instance]()
    if method == "dual_agd" and lam < 0.01:
        pytest.skip("first-order method: thousands of steps at lam 1e-3 (covered at 0.01)")
    # CVXPY's certificate is as good as Clarabel's own accuracy (its default gap 1e-8)
    tol = 1e-6 if method == "cvxpy" else 1e-7
    res = toppush(data, None, lam, loss=loss, method=method, tol=tol)
    assert res.status == "optimal" and isinstance(res, SolverResult)
    value, _ = cvxpy_optimum(data, lam, loss)
    primal, dual = check_certificate(data, res, lam, loss, tol)
    # weak duality around the independent optimum (CVXPY's own accuracy ~1e-8)
    assert dual <= value + 1e-7 * abs(value)
    assert primal >= value - 1e-7 * abs(value)
    assert primal == pytest.approx(value, rel=2 * tol)


@pytest.mark.parametrize("loss", LOSSES)
def test_strong_duality_at_the_cvxpy_optimum(loss):
    """The derived dual is the right one: the CVXPY multipliers give D = P* to solver accuracy."""
    data = planted_bipartite(20, 25, 5, seed=21)
    res = toppush(data, None, 0.1, loss=loss, method="cvxpy")
    primal, dual = check_certificate(data, res, 0.1, loss, 1e-6)
    assert dual == pytest.approx(primal, rel=1e-6)


@pytest.mark.parametrize("loss", LOSSES)
def test_sample_weights_equal_repeated_rows(loss):
    data = planted_bipartite(15, 20, 4, seed=31)
    reps = np.random.default_rng(31).integers(1, 4, data.m)
    repeated = BipartiteData(np.repeat(data.Xp, reps, axis=0), data.Xn)
    weighted = toppush(data, None, 0.05, loss=loss, wp=reps.astype(float), tol=1e-8)
    plain = toppush(repeated, None, 0.05, loss=loss, tol=1e-8)
    check_certificate(BipartiteData(data.Xp, data.Xn, reps.astype(float)), weighted, 0.05, loss,
                      1e-8)
    assert weighted.objective == pytest.approx(plain.objective, rel=1e-7)
    np.testing.assert_allclose(weighted.w, plain.w, atol=1e-4)


def test_working_set_grows_until_every_negative_is_certified():
    """Many negatives near the top (lam large: w small): the final certificate covers all n."""
    data = planted_bipartite(60, 400, 8, seed=41, margin=0.02)
    res = toppush(data, None, 1.0, tol=1e-8)
    assert res.status == "optimal"
    assert res.info["working_set"] > 2 * (data.d + 1) + 8  # grew beyond its first size
    check_certificate(data, res, 1.0, "truncated_quadratic", 1e-8)


def test_warm_start_and_both_argument_forms():
    data = planted_bipartite(20, 30, 5, seed=51)
    first = toppush(data.Xp, data.Xn, 0.1)
    again = toppush(data, None, 0.05, warm_start=first)
    agd = toppush(data, None, 0.05, method="dual_agd", warm_start=first)
    assert again.status == agd.status == "optimal"
    assert again.objective == pytest.approx(agd.objective, rel=3e-6)


def test_early_stop_is_honest():
    data = planted_bipartite(30, 40, 6, seed=61)
    with pytest.warns(ConvergenceWarning):
        res = toppush(data, None, 1e-3, method="dual_agd", max_iter=3)
    assert res.status == "max_iter" and res.gap > 1e-6
    primal, dual = brute_primal(data, res.w, 1e-3, "truncated_quadratic"), \
        brute_dual(data, *res.dual, 1e-3, "truncated_quadratic")
    assert res.gap == pytest.approx((primal - dual) / abs(primal), rel=1e-6)
    with pytest.warns(ConvergenceWarning):
        res = toppush(data, None, 1e-3, time_limit=1e-9)
    assert res.status == "time_limit"


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(lam=0.0), ValueError, "lam"),
    (dict(lam=1.0, loss="square"), ValueError, "loss"),
    (dict(lam=1.0, method="newton"), ValueError, "method"),
    (dict(lam=1.0, tol=-1.0), ValueError, "tol"),
    (dict(lam=1.0, max_iter=0), ValueError, "max_iter"),
    (dict(lam=1.0, warm_start=np.zeros(3)), TypeError, "warm_start"),
])
def test_bad_input_names_the_argument(kwargs, error, match):
    data = planted_bipartite(5, 6, 3, seed=0)
    with pytest.raises(error, match=match):
        toppush(data, None, **kwargs)


def test_bad_data_is_refused():
    data = planted_bipartite(5, 6, 3, seed=0)
    with pytest.raises(TypeError, match="Xn"):
        toppush(data.Xp, None, 1.0)
    with pytest.raises(TypeError, match="Xn"):
        toppush(data, data.Xn, 1.0)
    bad = data.Xp.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError):
        toppush(bad, data.Xn, 1.0)


# ---- the projection ---------------------------------------------------------------------------
def exact_projection(a, b, u):
    """The root of g(gamma) = sum clip(a - gamma, 0, u) - sum (b + gamma)_+ by evaluating g at
    every breakpoint and interpolating linearly (an O((m + n)^2) reference)."""
    uu = np.full(a.size, np.inf) if u is None else u

    def g(gamma):
        return np.clip(a - gamma, 0, uu).sum() - np.maximum(b + gamma, 0).sum()
    points = np.unique(np.concatenate([a, a - uu, -b]))
    points = points[np.isfinite(points)]
    values = np.array([g(p) for p in points])
    zero = np.flatnonzero(values == 0)
    if zero.size:
        gamma = points[zero[0]]
    else:
        k = np.flatnonzero((values[:-1] > 0) & (values[1:] < 0))[0]
        x0, x1, y0, y1 = points[k], points[k + 1], values[k], values[k + 1]
        gamma = x0 + y0 * (x1 - x0) / (y0 - y1)
    return np.clip(a - gamma, 0, uu), np.maximum(b + gamma, 0)


CASES = list(itertools.product(range(6), (None, "box")))


@pytest.mark.parametrize("seed,box", CASES)
def test_projection_against_exact_search_and_cvxpy(seed, box):
    rng = np.random.default_rng(seed)
    m, n = rng.integers(1, 25, 2)
    a, b = rng.normal(size=m) * 2, rng.normal(size=n) * 2 - seed % 3
    u = rng.uniform(0.05, 1.0, m) if box else None
    alpha, beta, _ = project_equal_sums(a, b, u, gamma0=float(rng.normal()))
    ea, eb = exact_projection(a, b, u)
    np.testing.assert_allclose(alpha, ea, atol=1e-12)
    np.testing.assert_allclose(beta, eb, atol=1e-12)
    A, B = cp.Variable(m), cp.Variable(n)
    cons = [A >= 0, B >= 0, cp.sum(A) == cp.sum(B)] + ([] if u is None else [A <= u])
    cp.Problem(cp.Minimize(cp.sum_squares(A - a) + cp.sum_squares(B - b)), cons).solve(
        solver="CLARABEL")
    np.testing.assert_allclose(alpha, A.value, atol=1e-5)
    np.testing.assert_allclose(beta, B.value, atol=1e-5)


@pytest.mark.parametrize("seed,box", CASES)
def test_projection_properties(seed, box):
    """Feasible, idempotent, and the variational inequality <v - p, q - p> <= 0 at random
    feasible q (q built feasible by construction)."""
    rng = np.random.default_rng(100 + seed)
    m, n = 40, 30
    a, b = rng.normal(size=m), rng.normal(size=n) + 0.3
    u = rng.uniform(0.01, 0.2, m) if box else None
    alpha, beta, _ = project_equal_sums(a, b, u)
    assert alpha.min() >= 0 and beta.min() >= 0
    assert abs(alpha.sum() - beta.sum()) <= 1e-12 * max(1.0, alpha.sum())
    if box:
        assert np.all(alpha <= u)
    again = project_equal_sums(alpha, beta, u)
    np.testing.assert_allclose(again[0], alpha, atol=1e-14)
    np.testing.assert_allclose(again[1], beta, atol=1e-14)
    for _ in range(50):
        qa = rng.uniform(0, 1, m) * (u if box else 1.0)
        qb = rng.dirichlet(np.ones(n)) * qa.sum()
        inner = (a - alpha) @ (qa - alpha) + (b - beta) @ (qb - beta)
        assert inner <= 1e-12


def test_projection_edge_cases_and_bad_input():
    # everything nonpositive with max a + max b <= 0: the projection is 0
    alpha, beta, _ = project_equal_sums(np.array([-1.0, -2.0]), np.array([0.5, -3.0]))
    assert alpha.sum() == beta.sum() == 0
    # ties: equal entries give equal outputs
    alpha, beta, _ = project_equal_sums(np.ones(4), np.ones(3))
    assert np.ptp(alpha) == 0 and np.ptp(beta) == 0
    assert alpha.sum() == pytest.approx(beta.sum(), abs=1e-15)
    with pytest.raises(ValueError, match="nonempty"):
        project_equal_sums(np.zeros(0), np.ones(2))
    with pytest.raises(ValueError, match="finite"):
        project_equal_sums(np.array([np.nan]), np.ones(2))
    with pytest.raises(ValueError, match="upper"):
        project_equal_sums(np.ones(2), np.ones(2), np.array([1.0, 0.0]))
    with pytest.raises(ValueError):
        project_equal_sums(np.ones(2), np.ones(2), np.ones(3))


# ---- the catalog's stored values ---------------------------------------------------------------
def _catalog_ids():
    from infpush_cvx import catalog
    return [pid for pid in catalog.problem_ids() if catalog.get(pid).formulation == "toppush"]


@pytest.mark.parametrize("method", ["interior_point", "dual_agd"])
@pytest.mark.parametrize("problem_id", _catalog_ids())
def test_catalog_values_are_reproduced(problem_id, method):
    from infpush_cvx import catalog
    from infpush_cvx.catalog.reference import load_reference
    spec = catalog.get(problem_id)
    data = catalog.instance_data(spec.instance)
    stored = load_reference(problem_id)["opt_val"]
    res = toppush(data, None, spec.lam, loss=spec.options["loss"], method=method)
    primal, dual = check_certificate(data, res, spec.lam, spec.options["loss"], 1e-6)
    # the stored value (Clarabel at 1e-10, cross-checked) lies between the two certified bounds
    assert dual <= stored * (1 + 1e-8) and primal >= stored * (1 - 1e-8)


@pytest.mark.parametrize("method", ["interior_point", "dual_agd"])
@pytest.mark.parametrize("extreme", [1e300, 1e-300])
def test_an_extreme_sample_weight_is_solved_and_certified(method, extreme):
    """Issue 26: a weight of 1e300 or 1e-300 among ones stalled both native methods."""
    data = planted_bipartite(m=8, n=10, d=3, seed=0)
    wp = np.r_[extreme, np.ones(7)]
    res = toppush(data, None, 0.1, method=method, wp=wp)
    assert res.status == "optimal" and res.gap <= 1e-6
    weighted = BipartiteData(data.Xp, data.Xn, wp)
    value, _ = cvxpy_optimum(weighted, 0.1, "truncated_quadratic")
    assert res.objective == pytest.approx(value, rel=1e-5)
    check_certificate(weighted, res, 0.1, "truncated_quadratic", 1e-6)
    # the weights are only ratios: a common factor changes nothing
    again = toppush(data, None, 0.1, method=method, wp=wp * 2.0 ** -60)
    np.testing.assert_allclose(again.w, res.w, rtol=1e-12, atol=1e-15)


def test_numeric_strings_are_refused():
    with pytest.raises(TypeError, match="Xp must be a numeric 2-D array, got strings"):
        toppush(np.array([["1", "2"]]), np.ones((2, 2)), 0.1)


@pytest.mark.parametrize("sparse", [False, True])
def test_data_lipschitz_by_blocks_is_the_top_eigenvalue(sparse, monkeypatch):
    import scipy.sparse as sp

    from infpush_cvx.solvers.toppush.problem import data_lipschitz

    data = planted_bipartite(3000, 2500, 6, seed=3)
    if sparse:
        data = BipartiteData(sp.csr_matrix(data.Xp), sp.csr_matrix(data.Xn))
    X = np.vstack([np.asarray(sp.csr_matrix(data.Xp).todense()),
                   np.asarray(sp.csr_matrix(data.Xn).todense())])
    assert data_lipschitz(data) == pytest.approx(np.linalg.norm(X, 2) ** 2, rel=1e-12)


def test_dual_agd_stops_in_the_lipschitz_constant_at_its_deadline():
    """The Gram matrix of the step size is summed by blocks of rows, each begun only when the
    time left exceeds the previous one's (550,000 x 300 rows took 1.3 s in one product)."""
    from infpush_cvx.solvers.engines.deadline import Deadline
    from infpush_cvx.solvers.toppush.problem import data_lipschitz

    data = planted_bipartite(3000, 2500, 6, seed=3)  # blocks of 2^27 / 36 rows: one a class
    ticks = iter(np.arange(0.0, 100.0, 1.0))
    # each reading advances the clock 1 s: start 0; the positives' block is allowed at 1, begun
    # at 2, ends at 3 (it took 1 s); at 4, 3 s are left of 7, more than 1: the negatives' block
    # is begun too. Of 5, 1 s is left at 4, no more than the 1 s the last block took: not begun.
    assert data_lipschitz(data, Deadline(7.0, clock=lambda: next(ticks))) is not None
    ticks = iter(np.arange(0.0, 100.0, 1.0))
    assert data_lipschitz(data, Deadline(5.0, clock=lambda: next(ticks))) is None
    with pytest.warns(ConvergenceWarning, match="Lipschitz"):
        result = toppush(data, 0.1, method="dual_agd", time_limit=1e-9)
    assert result.status == "time_limit" and not np.any(result.w)
