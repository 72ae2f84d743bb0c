"""Sample weights on bipartite data: validation, fingerprints, objectives, CVXPY primals and duals.

The test of correctness: with integer weights, a weighted problem equals the unweighted problem on
the data with every row repeated as many times as its weight.
"""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx import BipartiteData
from infpush_cvx.formulations import scaling
from infpush_cvx.formulations import (infinite_push_dual_problem, infinite_push_problem,
                                      primal_value_from_dual, ranksvm_dual_problem,
                                      ranksvm_problem)
from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.formulations.objectives import bipartite_objective, negative_hinge_sums

OPTS = {"solver": "CLARABEL", "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}
rng = np.random.default_rng(0)
Xp, Xn = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))


def expanded(data: BipartiteData) -> BipartiteData:
    """The unweighted data with row i repeated wp_i (or wn_j) times; weights must be integers."""
    p, q = data.pos_weights.astype(int), data.neg_weights.astype(int)
    assert np.array_equal(p, data.pos_weights) and np.array_equal(q, data.neg_weights)
    rows_p, rows_n = np.repeat(np.arange(data.m), p), np.repeat(np.arange(data.n), q)
    return BipartiteData(data.Xp[rows_p], data.Xn[rows_n])


def with_integer_weights(data: BipartiteData, seed: int) -> BipartiteData:
    r = np.random.default_rng(seed)
    return BipartiteData(data.Xp, data.Xn, r.integers(1, 4, data.m), r.integers(1, 4, data.n))


# --- validation ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["wp", "wn"])
@pytest.mark.parametrize("make, exc, match", [
    (lambda k: np.ones(k + 1), ValueError, "must have length"),
    (lambda k: np.r_[np.ones(k - 1), 0.0], ValueError, "must be strictly positive"),
    (lambda k: np.r_[np.ones(k - 1), -1.0], ValueError, "must be strictly positive"),
    (lambda k: np.r_[np.ones(k - 1), np.nan], ValueError, "contains NaN or infinite"),
    (lambda k: np.r_[np.ones(k - 1), np.inf], ValueError, "contains NaN or infinite"),
    (lambda k: np.ones((k, 1)), ValueError, "must be 1-D"),
    (lambda k: ["a"] * k, TypeError, "must be a numeric 1-D array"),
])
def test_weight_errors_name_the_argument(name, make, exc, match):
    k = Xp.shape[0] if name == "wp" else Xn.shape[0]
    with pytest.raises(exc, match=f"^{name} {match}"):
        BipartiteData(Xp, Xn, **{name: make(k)})


def test_weights_are_stored_as_float64_copies():
    wp = np.array([1, 2, 3, 4])
    data = BipartiteData(Xp, Xn, wp=wp)
    assert data.wp.dtype == np.float64 and data.wn is None
    wp[0] = 100
    assert data.wp[0] == 1.0
    assert data.weighted and not BipartiteData(Xp, Xn).weighted
    np.testing.assert_array_equal(data.pos_weights, [1, 2, 3, 4])
    np.testing.assert_array_equal(data.neg_weights, np.ones(5))
    assert (data.wp_sum, data.wn_sum) == (10.0, 5.0)
    assert isinstance(data.wp_sum, float)
    plain = BipartiteData(Xp, Xn)
    assert (plain.wp_sum, plain.wn_sum) == (4.0, 5.0)
    assert repr(data) == "BipartiteData(m=4, n=5, d=3, dense, weighted)"
    assert repr(plain) == "BipartiteData(m=4, n=5, d=3, dense)"


def test_from_labels_splits_and_filters_sample_weights():
    X = np.vstack([Xp, Xn])
    y = np.r_[np.ones(4), np.zeros(5)]
    weight = np.array([1.0, 0.0, 2.0, 3.0, 0.5, 0.0, 1.0, 2.0, 4.0])
    data = BipartiteData.from_labels(X, y, sample_weight=weight)
    np.testing.assert_array_equal(data.Xp, Xp[[0, 2, 3]])
    np.testing.assert_array_equal(data.Xn, Xn[[0, 2, 3, 4]])
    np.testing.assert_array_equal(data.wp, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(data.wn, [0.5, 1.0, 2.0, 4.0])
    sparse = BipartiteData.from_labels(sp.csr_matrix(X), y, sample_weight=weight)
    np.testing.assert_array_equal(sparse.Xp.toarray(), Xp[[0, 2, 3]])
    assert BipartiteData.from_labels(X, y).wp is None
    with pytest.raises(ValueError, match="sample_weight must be nonnegative"):
        BipartiteData.from_labels(X, y, sample_weight=-weight)
    with pytest.raises(ValueError, match="sample_weight contains NaN"):
        BipartiteData.from_labels(X, y, sample_weight=np.r_[np.nan, weight[1:]])
    with pytest.raises(ValueError, match="sample_weight must have length 9"):
        BipartiteData.from_labels(X, y, sample_weight=weight[:3])
    with pytest.raises(ValueError, match="one class is empty.*sample_weight 0"):
        BipartiteData.from_labels(X, y, sample_weight=np.r_[np.zeros(4), np.ones(5)])


# --- fingerprints ----------------------------------------------------------------------------

# Computed with the code before sample weights existed (commit a570c92), as
# BipartiteData(FP_XP, FP_XN).fingerprint() and the same for the sparse (CSR) matrices
# np.maximum(FP_XP, 0), np.maximum(FP_XN, 0). The data are exact binary fractions, so the
# values cannot depend on the machine.
FP_XP = np.arange(12, dtype=float).reshape(4, 3) / 4 - 1
FP_XN = np.arange(15, dtype=float).reshape(5, 3) % 4 - 1.5
FP_DENSE = "7346e61d60493728dcafb6ddcc14475dd4297b760ef792012d892a8056c6addf"
FP_SPARSE = "64a0d3847c5de8d05422815948f9a0bb4f69b407e2162e42b8c4dd1c3268158a"


def test_unweighted_fingerprints_unchanged():
    assert BipartiteData(FP_XP, FP_XN).fingerprint() == FP_DENSE
    sparse = BipartiteData(sp.csr_matrix(np.maximum(FP_XP, 0)), sp.csr_matrix(np.maximum(FP_XN, 0)))
    assert sparse.fingerprint() == FP_SPARSE
    assert set(BipartiteData(FP_XP, FP_XN).arrays()) == {"Xp", "Xn"}


def test_weights_enter_the_fingerprint_only_when_given():
    plain = BipartiteData(FP_XP, FP_XN)
    ones = BipartiteData(FP_XP, FP_XN, wp=np.ones(4))
    assert set(ones.arrays()) == {"Xp", "Xn", "wp"}
    assert ones.fingerprint() != plain.fingerprint()
    assert BipartiteData(FP_XP, FP_XN, wn=np.ones(5)).fingerprint() != ones.fingerprint()
    assert BipartiteData(FP_XP, FP_XN, wp=[1, 1, 1, 1]).fingerprint() == ones.fingerprint()
    assert BipartiteData(FP_XP, FP_XN, wp=[1, 1, 1, 2]).fingerprint() != ones.fingerprint()


# --- NumPy objectives ------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_weighted_hinge_sums_match_brute_force(seed):
    r = np.random.default_rng(seed)
    m, n = r.integers(1, 30, 2)
    # Rounded scores give ties among the s, among the t, and exact kinks s_i = 1 + t_j.
    s = np.round(r.standard_normal(m), 1)
    t = np.round(r.standard_normal(n), 1)
    t[: min(n, m)] = s[: min(n, m)] - 1.0
    wp = r.random(m) * 3 + 0.01
    brute = (wp[:, None] * np.maximum(0.0, 1.0 - s[:, None] + t[None, :])).sum(axis=0)
    np.testing.assert_allclose(negative_hinge_sums(s, t, wp), brute, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(negative_hinge_sums(s, t, np.ones(m)), negative_hinge_sums(s, t),
                               rtol=1e-12, atol=1e-12)


DATA = {"dense": planted_bipartite(7, 9, 3, seed=4),
        "sparse": planted_bipartite(7, 9, 6, seed=5, density=0.5)}


@pytest.mark.parametrize("kind", DATA)
@pytest.mark.parametrize("loss, penalty", [("infinite_push", "l2"), ("infinite_push", "l1"),
                                           ("ranksvm", "l2"), ("ranksvm", "l1")])
@pytest.mark.parametrize("sc", ["paper", "seed"])
def test_weighted_objective_equals_repeated_rows(kind, loss, penalty, sc):
    data = with_integer_weights(DATA[kind], seed=1)
    big = expanded(data)
    for trial in range(3):
        w = np.random.default_rng(trial).standard_normal(data.d)
        assert bipartite_objective(data, w, 0.3, loss=loss, penalty=penalty, scaling=sc) == \
            pytest.approx(bipartite_objective(big, w, 0.3, loss=loss, penalty=penalty,
                                              scaling=sc), rel=1e-12)


def test_infinite_push_ignores_negative_weights():
    data = DATA["dense"]
    w = np.random.default_rng(0).standard_normal(data.d)
    heavy = BipartiteData(data.Xp, data.Xn, wn=np.arange(1.0, data.n + 1))
    assert bipartite_objective(heavy, w, 0.3) == bipartite_objective(data, w, 0.3)
    assert bipartite_objective(heavy, w, 0.3, loss="ranksvm") != \
        pytest.approx(bipartite_objective(data, w, 0.3, loss="ranksvm"))


# --- CVXPY primals and duals -----------------------------------------------------------------

def solve(problem):
    problem.solve(**OPTS)
    assert problem.status == cp.OPTIMAL
    return problem.value


def build(data, loss, penalty, lam_paper, sc, form):
    """The problem in scaling ``sc`` whose paper-scaling lambda is ``lam_paper``."""
    lam = scaling.from_paper_lambda(lam_paper, sc, loss=loss, penalty=penalty, m=data.wp_sum,
                                    n=data.wn_sum)
    if loss == "infinite_push":
        return infinite_push_problem(data, lam, penalty=penalty, scaling=sc, form=form)
    return ranksvm_problem(data, lam, scaling=sc, form=form)


@pytest.mark.parametrize("loss, penalty", [("infinite_push", "l2"), ("infinite_push", "l1"),
                                           ("ranksvm", "l2")])
@pytest.mark.parametrize("form", ["compact", "direct"])
@pytest.mark.parametrize("sc", ["paper", "seed"])
def test_weighted_optimum_equals_repeated_rows(loss, penalty, form, sc):
    data = with_integer_weights(DATA["dense"], seed=2)
    big = expanded(data)
    weighted, plain = build(data, loss, penalty, 0.1, sc, form), build(big, loss, penalty, 0.1,
                                                                        sc, form)
    value = solve(weighted)
    assert value == pytest.approx(solve(plain), rel=1e-6)
    w = weighted.var_dict["w"].value
    lam = weighted.param_dict["lam"].value
    assert bipartite_objective(data, w, lam, loss=loss, penalty=penalty, scaling=sc) == \
        pytest.approx(value, rel=1e-6)
    if penalty == "l2":  # strongly convex: the minimiser is unique
        np.testing.assert_allclose(w, plain.var_dict["w"].value, atol=1e-6)


def test_weighted_sparse_optimum_equals_repeated_rows():
    data = with_integer_weights(DATA["sparse"], seed=3)
    values = [solve(infinite_push_problem(d, 0.1, penalty="l1")) for d in (data, expanded(data))]
    assert values[0] == pytest.approx(values[1], rel=1e-6)


@pytest.mark.parametrize("loss", ["infinite_push", "ranksvm"])
@pytest.mark.parametrize("sc", ["paper", "seed"])
def test_weighted_duals_agree_with_weighted_primals(loss, sc):
    # Real (non-integer) weights: the dual needs no repeated-rows argument.
    base = DATA["dense"]
    r = np.random.default_rng(7)
    data = BipartiteData(base.Xp, base.Xn, r.random(base.m) * 2 + 0.2, r.random(base.n) * 2 + 0.2)
    lam = scaling.from_paper_lambda(0.2, sc, loss=loss, penalty="l2", m=data.wp_sum,
                                    n=data.wn_sum)
    primal = infinite_push_problem(data, lam, scaling=sc) if loss == "infinite_push" \
        else ranksvm_problem(data, lam, scaling=sc)
    dual = infinite_push_dual_problem(data, lam, scaling=sc) if loss == "infinite_push" \
        else ranksvm_dual_problem(data, lam, scaling=sc)
    p, q = solve(primal), solve(dual)
    assert primal_value_from_dual(q, lam, loss=loss, scaling=sc, m=data.wp_sum, n=data.wn_sum) \
        == pytest.approx(p, rel=1e-6)
    alpha = dual.var_dict["alpha"].value
    w_alpha = data.Xp.T @ alpha.sum(axis=1) - data.Xn.T @ alpha.sum(axis=0)
    np.testing.assert_allclose(w_alpha, primal.var_dict["w"].value, atol=1e-5)
    # alpha lies in the weighted feasible set (up to the solver's tolerance).
    C = 1.0 / scaling.to_paper_lambda(lam, sc, loss=loss, penalty="l2", m=data.wp_sum,
                                      n=data.wn_sum)
    if loss == "infinite_push":
        assert (alpha / data.wp[:, None]).max(axis=0).sum() <= C / data.wp_sum * (1 + 1e-6)
    else:
        bound = C * np.outer(data.wp, data.wn) / (data.wp_sum * data.wn_sum)
        assert np.all(alpha <= bound * (1 + 1e-6) + 1e-12)


@pytest.mark.parametrize("loss", ["infinite_push", "ranksvm"])
def test_weighted_dual_equals_dual_on_repeated_rows(loss):
    data = with_integer_weights(DATA["dense"], seed=4)
    make = infinite_push_dual_problem if loss == "infinite_push" else ranksvm_dual_problem
    assert solve(make(data, 0.2)) == pytest.approx(solve(make(expanded(data), 0.2)), rel=1e-6)
