"""Rank2Plan weighted-pair LP solvers against independent CVXPY solves (Clarabel, HiGHS).

The reference LP below is written from [Rank2PlanNote], eq. 1 (docs/mathematics.md, section 4.1)
directly (split beta = beta+ - beta-, explicit slacks xi, dense pair differences), independently
of infpush_cvx.formulations.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.data import PairData
from infpush_cvx.data.generators import rank2plan_pairs
from infpush_cvx.formulations.objectives import rank2plan_objective
from infpush_cvx.solvers.rank2plan.ops import PairOperator
from infpush_cvx.solvers.rank2plan import rank2plan_lambda_max, rank2plan_lp
from infpush_cvx.solvers.result import ConvergenceWarning

RTOL = 1e-6
CLARABEL_TIGHT = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


def reference_lp(data: PairData, lam: float, solver: str = "CLARABEL") -> float:
    """Optimal value of [Rank2PlanNote], eq. 1, written out in its split form."""
    X = data.X.toarray() if sp.issparse(data.X) else data.X
    D = X[data.j] - X[data.i]
    p = data.n_features
    bp, bm, xi = cp.Variable(p, nonneg=True), cp.Variable(p, nonneg=True), \
        cp.Variable(data.n_pairs, nonneg=True)
    prob = cp.Problem(cp.Minimize(data.weight @ xi + lam * cp.sum(bp + bm)),
                      [D @ (bp - bm) >= data.margin - xi])
    prob.solve(solver=solver, **(CLARABEL_TIGHT if solver == "CLARABEL" else {}))
    assert prob.status == "optimal"
    return float(prob.value)


def random_pairs(N=60, p=15, n_pairs=300, *, seed, sparse=False, weighted=True, k=4):
    """A planted noisy linear ranking: pairs ordered by a sparse true score plus noise."""
    rng = np.random.default_rng(seed)
    if sparse:
        X = sp.random(N, p, density=0.3, format="csr", random_state=rng,
                      data_rvs=rng.standard_normal)
    else:
        X = rng.standard_normal((N, p))
    truth = np.zeros(p)
    k = min(k, p)
    truth[rng.choice(p, k, replace=False)] = rng.standard_normal(k)
    score = np.asarray(X @ truth).ravel() + 0.5 * rng.standard_normal(N)
    i, j = rng.integers(0, N, n_pairs), rng.integers(0, N, n_pairs)
    keep = i != j
    i, j = i[keep], j[keep]
    swap = score[i] > score[j]
    i, j = np.where(swap, j, i), np.where(swap, i, j)
    gap = rng.uniform(0.2, 2.0, i.size) if weighted else None
    weight = rng.uniform(0.1, 3.0, i.size) if weighted else None
    return PairData(X, i, j, gap, weight)


def rel_err(value, ref):
    return abs(value - ref) / max(abs(ref), 1e-12)


# ---------------------------------------------------------------- exact methods vs references

@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("frac", [0.02, 0.2])
def test_ccg_matches_clarabel(sparse, weighted, frac):
    data = random_pairs(seed=3, sparse=sparse, weighted=weighted)
    lam = frac * rank2plan_lambda_max(data)
    res = rank2plan_lp(data, lam=lam)
    ref = reference_lp(data, lam)
    assert res.status == "optimal"
    assert res.method == "ccg"
    assert rel_err(res.objective, ref) <= RTOL
    assert res.gap <= 1e-6
    # The certified lower bound is a lower bound, and the objective is recomputed from beta.
    assert res.info["lower_bound"] <= ref * (1 + 1e-9) + 1e-12
    assert res.objective == pytest.approx(rank2plan_objective(data, res.beta, lam), rel=1e-14)
    assert np.array_equal(res.beta, res.w)


def test_ccg_matches_highs_on_generator_instance():
    data = rank2plan_pairs(4, 30, 25, 80, seed=11, density=0.3)
    lam = 0.05 * rank2plan_lambda_max(data)
    ref_h = reference_lp(data, lam, "HIGHS")
    ref_c = reference_lp(data, lam, "CLARABEL")
    assert rel_err(ref_h, ref_c) <= RTOL
    for kwargs in ({}, {"X": data.X.toarray()}):
        X = kwargs.get("X", data.X)
        res = rank2plan_lp(PairData(X, data.i, data.j, data.margin, data.weight), lam)
        assert res.status == "optimal"
        assert rel_err(res.objective, ref_h) <= RTOL


@pytest.mark.parametrize("lam", [1.0, "0.05 lambda_max"])
def test_the_benchmark_instance_is_certified_by_one_restricted_lp(lam):
    """Issue 29's target instance (2,000 states, 200 features, 20,000 pairs; 33 and 154 features
    active): the smoothed warm start finds the working sets, so one restricted LP certifies it.
    The optimal values (CVXPY + Clarabel agreed to 3e-11 and 2e-12) pin the answer; the
    speed-up is measured by benchmarks/bench_rank2plan.py."""
    data = rank2plan_pairs(20, 100, 200, 1000, seed=0)
    lam = lam if isinstance(lam, float) else 0.05 * rank2plan_lambda_max(data)
    res = rank2plan_lp(data, lam)
    assert res.status == "optimal" and res.gap <= 1e-6 and res.iterations == 1
    expected = 17.9334111598 if lam == 1.0 else 15.5576068675
    assert rel_err(res.objective, expected) <= 1e-10


@pytest.mark.parametrize("solver", ["CLARABEL", "HIGHS"])
@pytest.mark.parametrize("form", ["compact", "direct"])
def test_cvxpy_method_matches_reference(solver, form):
    data = random_pairs(seed=5, sparse=True)
    lam = 0.1 * rank2plan_lambda_max(data)
    res = rank2plan_lp(data, lam=lam, method="cvxpy", solver=solver, form=form)
    assert res.status == "optimal" and res.method == "cvxpy"
    assert rel_err(res.objective, reference_lp(data, lam)) <= RTOL


def test_ccg_with_zero_lambda():
    data = random_pairs(N=40, p=6, n_pairs=200, seed=8)
    res = rank2plan_lp(data, lam=0.0)
    assert res.status == "optimal"
    assert rel_err(res.objective, reference_lp(data, 0.0)) <= RTOL


def test_large_lambda_gives_zero_beta():
    data = random_pairs(seed=9)
    lmax = rank2plan_lambda_max(data)
    res = rank2plan_lp(data, lam=1.01 * lmax)
    assert res.status == "optimal"
    assert np.all(res.beta == 0)
    assert res.objective == pytest.approx(float(data.weight @ data.margin), rel=1e-12)
    # Just below lambda_max, beta = 0 is no longer optimal.
    res = rank2plan_lp(data, lam=0.9 * lmax)
    assert res.objective < float(data.weight @ data.margin) * (1 - 1e-6)


# ---------------------------------------------------------------- awkward pair sets

def test_duplicate_pairs_equal_doubled_weight():
    base = random_pairs(seed=12)
    k = np.arange(0, base.n_pairs, 3)
    dup = PairData(base.X, np.concatenate([base.i, base.i[k]]), np.concatenate([base.j, base.j[k]]),
                   np.concatenate([base.margin, base.margin[k]]),
                   np.concatenate([base.weight, base.weight[k]]))
    w2 = base.weight.copy()
    w2[k] *= 2
    merged = PairData(base.X, base.i, base.j, base.margin, w2)
    lam = 0.05 * rank2plan_lambda_max(merged)
    r_dup, r_merged = rank2plan_lp(dup, lam=lam), rank2plan_lp(merged, lam=lam)
    assert r_dup.status == r_merged.status == "optimal"
    assert rel_err(r_dup.objective, r_merged.objective) <= RTOL
    assert rel_err(r_dup.objective, reference_lp(dup, lam)) <= RTOL


def test_pairs_with_identical_feature_rows():
    data = random_pairs(seed=13)
    X = data.X.copy()
    X[1] = X[0]
    X[3] = X[2]
    # Pairs between identical rows have D_k = 0: a constant hinge s_k g_k whatever beta is.
    i = np.concatenate([data.i, [0, 2, 1]])
    j = np.concatenate([data.j, [1, 3, 0]])
    gap = np.concatenate([data.margin, [1.0, 0.0, 2.5]])
    weight = np.concatenate([data.weight, [2.0, 5.0, 0.5]])
    tied = PairData(X, i, j, gap, weight)
    lam = 0.05 * rank2plan_lambda_max(tied)
    res = rank2plan_lp(tied, lam=lam)
    assert res.status == "optimal"
    assert rel_err(res.objective, reference_lp(tied, lam)) <= RTOL
    assert res.objective >= 2.0 * 1.0 + 0.5 * 2.5


def test_zero_weights_and_zero_gaps():
    data = random_pairs(seed=14)
    w = data.weight.copy()
    g = data.margin.copy()
    w[::4] = 0.0
    g[1::4] = 0.0
    data = PairData(data.X, data.i, data.j, g, w)
    lam = 0.05 * rank2plan_lambda_max(data)
    res = rank2plan_lp(data, lam=lam)
    assert res.status == "optimal"
    assert rel_err(res.objective, reference_lp(data, lam)) <= RTOL


def test_sparse_and_dense_agree():
    data = random_pairs(seed=15, sparse=True)
    dense = PairData(data.X.toarray(), data.i, data.j, data.margin, data.weight)
    lam = 0.05 * rank2plan_lambda_max(data)
    a, b = rank2plan_lp(data, lam=lam), rank2plan_lp(dense, lam=lam)
    assert rel_err(a.objective, b.objective) <= RTOL


def test_a_full_sparse_x_is_held_dense_with_the_same_answer():
    """A sparse X at least DENSE_FILL full is held dense (BLAS products: half the time of CSR
    for a full X); the products, the LP rows and the certified optimum are unchanged."""
    dense = random_pairs(seed=16)
    data = PairData(sp.csr_matrix(dense.X), dense.i, dense.j, dense.margin, dense.weight)
    op = PairOperator(data)
    assert isinstance(op.X, np.ndarray) and isinstance(op.XT, np.ndarray)
    assert sp.issparse(PairOperator(random_pairs(seed=16, sparse=True)).X)  # 30% full: CSR
    D = dense.X[dense.j] - dense.X[dense.i]
    b = np.random.default_rng(0).standard_normal(data.n_features)
    np.testing.assert_allclose(op.matvec(b), D @ b, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(op.rows(np.array([3, 0]), np.array([5, 1])), D[[3, 0]][:, [5, 1]])
    lam = 0.05 * rank2plan_lambda_max(data)
    res = rank2plan_lp(data, lam)
    assert res.status == "optimal"
    assert rel_err(res.objective, reference_lp(dense, lam)) <= RTOL


def test_the_first_interior_point_lp_runs_without_presolve_unless_asked():
    from infpush_cvx.solvers.rank2plan.ccg import RestrictedDual
    op = PairOperator(random_pairs(seed=17))
    assert RestrictedDual(op, 0.1, 1.0, {}).presolve == {"ipm": "off", "simplex": "choose"}
    assert RestrictedDual(op, 0.1, 1.0, {"presolve": "on"}).presolve == {"ipm": "on",
                                                                         "simplex": "on"}


# ---------------------------------------------------------------- smoothing

def test_smoothed_within_its_bounds():
    data = random_pairs(seed=21)
    lam = 0.05 * rank2plan_lambda_max(data)
    ref = reference_lp(data, lam)
    res = rank2plan_lp(data, lam=lam, method="smoothed", max_iter=4000)
    info = res.info
    # [Rank2PlanNote], Lemma 1 (docs/mathematics.md, section 4.3; n = the number of pairs):
    # H^tau <= H^0 <= H^tau + n tau / 2 at the returned beta.
    assert info["smoothed_objective"] <= res.objective + 1e-12
    assert res.objective <= info["smoothed_objective"] + info["smoothing_bound"] + 1e-12
    # The certificate brackets the optimum: lower_bound <= P* <= P(beta) = lower_bound + gap * P.
    assert info["lower_bound"] <= ref * (1 + 1e-9)
    assert res.objective >= ref * (1 - 1e-9)
    assert res.objective - ref <= res.gap * res.objective * (1 + 1e-9)
    assert res.status in ("stalled", "max_iter", "optimal")


def test_smoothed_single_tau_minimiser_is_within_n_tau_over_2():
    # For the minimiser of the smoothed problem, P(beta_tau) - P* <= n tau / 2.
    data = random_pairs(N=40, p=8, n_pairs=150, seed=22)
    lam = 0.05 * rank2plan_lambda_max(data)
    ref = reference_lp(data, lam)
    tau = 0.02
    res = rank2plan_lp(data, lam=lam, method="smoothed", tau=tau, max_iter=20000,
                       stage_tol=1e-12)
    assert res.info["smoothing_bound"] == pytest.approx(data.n_pairs * tau / 2)
    assert res.objective - ref <= data.n_pairs * tau / 2
    assert res.objective - ref >= -1e-9 * ref


def test_smoothed_stops_early_and_says_so():
    data = random_pairs(seed=23)
    res = rank2plan_lp(data, lam=0.05 * rank2plan_lambda_max(data), method="smoothed", max_iter=5)
    assert res.status == "max_iter"
    assert res.iterations == 5


def test_ccg_stops_early_and_says_so():
    data = random_pairs(seed=24)
    lam = 0.02 * rank2plan_lambda_max(data)
    # A cold start with a tiny working set needs several restricted LPs.
    res = rank2plan_lp(data, lam=lam, warm_start=np.zeros(data.n_features), max_iter=1,
                       n_pairs_init=5, n_features_init=1)
    assert res.status == "max_iter"
    assert res.iterations == 1
    full = rank2plan_lp(data, lam=lam, warm_start=np.zeros(data.n_features), n_pairs_init=5,
                        n_features_init=1)
    assert full.status == "optimal" and full.iterations > 1
    assert rel_err(full.objective, reference_lp(data, lam)) <= RTOL


# ---------------------------------------------------------------- building blocks

def test_sigma_max_matches_dense_spectral_norm():
    data = random_pairs(seed=31)
    X = data.X
    Xt = data.weight[:, None] * (X[data.j] - X[data.i])
    exact = np.linalg.norm(Xt, 2) ** 2
    assert PairOperator(data).sigma_max(rtol=1e-10, max_iter=5000) == pytest.approx(exact, rel=1e-6)


def test_operator_products_match_dense():
    data = random_pairs(seed=32, sparse=True)
    op = PairOperator(data)
    D = (data.X[data.j] - data.X[data.i]).toarray()
    rng = np.random.default_rng(0)
    b, u = rng.standard_normal(data.n_features), rng.standard_normal(data.n_pairs)
    np.testing.assert_allclose(op.matvec(b), D @ b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.rmatvec(u), D.T @ u, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.rows(np.array([3, 0, 7]), np.array([5, 1])).toarray(),
                               D[[3, 0, 7]][:, [5, 1]], atol=0)


def test_rows_follow_the_order_of_every_feature():
    """The block of all features in the restricted LP's row order (features appended as they
    joined) came back in X's own order, so pair columns added once every feature had joined sat
    in the wrong rows: the 2,000-state instance at 0.002 lambda_max with 600 initial pairs
    ended "stalled" at a gap of 0.64."""
    data = random_pairs(seed=32, sparse=True)
    op = PairOperator(data)
    D = (data.X[data.j] - data.X[data.i]).toarray()
    order = np.random.default_rng(1).permutation(data.n_features)
    pairs = np.array([4, 2, 9])
    np.testing.assert_array_equal(op.rows(pairs, order).toarray(), D[pairs][:, order])


def test_ccg_certifies_when_every_feature_joins_out_of_order():
    """The end-to-end case of the test above: few initial features and pairs at a small lambda,
    so the last features join after the first LP and pairs follow them."""
    data = random_pairs(N=80, p=12, n_pairs=600, seed=31, sparse=True, k=12)
    lam = 1e-2 * rank2plan_lambda_max(data)
    res = rank2plan_lp(data, lam, n_features_init=2, max_features_add=3, n_pairs_init=10)
    assert res.status == "optimal" and res.gap <= 1e-6
    assert res.info["n_features_working"] == data.n_features
    assert rel_err(res.objective, reference_lp(data, lam)) <= RTOL


def test_certificate_lower_bound_holds_for_any_multipliers():
    data = random_pairs(seed=33)
    lam = 0.05 * rank2plan_lambda_max(data)
    ref = reference_lp(data, lam)
    op = PairOperator(data)
    rng = np.random.default_rng(1)
    for _ in range(20):
        pi = rng.uniform(-0.5, 1.5, data.n_pairs) * data.weight  # clipped into [0, s] inside
        cert = op.certificate(np.zeros(data.n_features), pi, lam)
        assert cert["dual"] <= ref * (1 + 1e-9)
        assert cert["primal"] >= ref * (1 - 1e-9)


# ---------------------------------------------------------------- input validation

def test_bad_inputs_are_rejected():
    data = random_pairs(N=10, p=3, n_pairs=20, seed=41)
    X, i, j = data.X, data.i, data.j
    Xnan = X.copy()
    Xnan[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        rank2plan_lp(PairData(Xnan, i, j), 1.0)
    with pytest.raises(ValueError, match="i == j"):
        rank2plan_lp(PairData(X, np.array([0, 1]), np.array([0, 2])), 1.0)
    with pytest.raises(ValueError, match="margin"):
        rank2plan_lp(PairData(X, i, j, margin=-np.ones(i.size)), 1.0)
    with pytest.raises(ValueError, match="weight"):
        rank2plan_lp(PairData(X, i, j, weight=np.r_[-1.0, np.ones(i.size - 1)]), 1.0)
    with pytest.raises(ValueError, match="j"):
        rank2plan_lp(PairData(X, i, np.full(i.size, 99)), 1.0)
    with pytest.raises(ValueError, match="lam"):
        rank2plan_lp(data, -1.0)
    with pytest.raises(TypeError, match="lam"):
        rank2plan_lp(data, "big")
    with pytest.raises(ValueError, match="method"):
        rank2plan_lp(data, 1.0, method="simplex")
    with pytest.raises(ValueError, match="tol"):
        rank2plan_lp(data, 1.0, tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        rank2plan_lp(data, 1.0, max_iter=0)
    with pytest.raises(ValueError, match="warm_start"):
        rank2plan_lp(data, 1.0, warm_start=np.zeros(X.shape[1] + 1))
    with pytest.raises(TypeError, match="data must be a PairData"):  # arrays: PairData(X, i, j)
        rank2plan_lp(X, 1.0)
    with pytest.raises(TypeError, match="positional"):  # i and j belong to the PairData
        rank2plan_lp(data, i, j, 1.0)
    with pytest.raises(TypeError, match="lam"):
        rank2plan_lp(data)
    for tau in (0.0, -1.0, [0.1, 0.2], np.nan):
        with pytest.raises(ValueError, match="tau"):
            rank2plan_lp(data, lam=1.0, method="smoothed", tau=tau)
    # a numeric string, a boolean or a complex number was taken as the number (issue 26)
    for tau in ("0.1", ["0.1", "0.01"], True, np.bool_(True), 0.1 + 0j):
        with pytest.raises(TypeError, match="tau"):
            rank2plan_lp(data, lam=1.0, method="smoothed", tau=tau)


def test_time_limit_is_reported():
    data = random_pairs(seed=25)
    res = rank2plan_lp(data, lam=0.02 * rank2plan_lambda_max(data), warm_start=np.zeros(15),
                       n_pairs_init=5, n_features_init=1, time_limit=1e-9)
    assert res.status == "time_limit"
    assert res.iterations == 1


def test_highs_stopping_short_names_why():
    """HiGHS's own time limit is "time_limit", any other stop of a restricted LP "failed"."""
    data = random_pairs(seed=25)
    lam = 0.02 * rank2plan_lambda_max(data)
    common = dict(warm_start=np.zeros(15), n_pairs_init=5, n_features_init=1)
    with pytest.warns(ConvergenceWarning):
        res = rank2plan_lp(data, lam, highs_options={"time_limit": 0.0}, **common)
    assert res.status == "time_limit" and "highs_options['time_limit']" in res.message
    with pytest.warns(ConvergenceWarning):
        res = rank2plan_lp(data, lam, lp_algorithm="simplex",
                           highs_options={"simplex_iteration_limit": 0}, **common)
    assert res.status == "failed" and res.message.startswith("HiGHS: ")


def test_ccg_warm_start_from_optimum_needs_one_lp():
    data = random_pairs(seed=26, sparse=True)
    lam = 0.05 * rank2plan_lambda_max(data)
    first = rank2plan_lp(data, lam=lam)
    again = rank2plan_lp(data, lam=lam, warm_start=first)
    assert again.status == "optimal" and again.iterations == 1
    assert rel_err(again.objective, first.objective) <= 1e-9


@pytest.mark.parametrize("bad", [np.array([["1", "2"], ["3", "4"]]),
                                 np.array([["1", "2"], ["3", "4"]], dtype=object),
                                 np.array([[b"1", b"2"], [b"3", b"4"]])])
def test_numeric_strings_are_refused(bad):
    """Issue 26: NumPy parsed numeric strings as numbers, though strings are refused."""
    with pytest.raises(TypeError, match="X must be a numeric 2-D array, got strings"):
        rank2plan_lp(PairData(bad, [0], [1]), 0.1)
    with pytest.raises(TypeError, match="margin must be a numeric 1-D array, got strings"):
        rank2plan_lp(PairData(np.eye(2), [0], [1], margin=np.array(["1"])), 0.1)


def test_smoothed_says_why_it_stalled():
    """Its schedule can converge at every level above tol; the result said "stalled" with an
    empty message (issue 26, re-tested)."""
    data = random_pairs(seed=3)
    res = rank2plan_lp(data, lam=1e-3 * rank2plan_lambda_max(data), method="smoothed",
                       tol=1e-9)
    assert res.status in ("stalled", "max_iter")
    assert res.message
