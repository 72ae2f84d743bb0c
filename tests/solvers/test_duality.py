"""Dual formulas (infpush_cvx.solvers.engines.duality) against brute force over the explicit
pair tensor.

The brute-force helpers live in ``bruteforce.py`` (importable through this folder's conftest.py).
"""

import numpy as np
import pytest

from infpush_cvx.data import BipartiteData
from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.solvers.engines import duality

from bruteforce import brute_dual, brute_primal, pairs


@pytest.fixture(params=["dense", "sparse"])
def data(request):
    if request.param == "dense":
        return planted_bipartite(7, 9, 4, seed=3)
    return planted_bipartite(7, 9, 12, seed=4, density=0.5)


def test_w_of_alpha_and_gradient_match_pair_sums(data):
    rng = np.random.default_rng(0)
    alpha = rng.random((data.m, data.n))
    Z = pairs(data)
    w = np.einsum("ij,ijd->d", alpha, Z)
    np.testing.assert_allclose(duality.w_of_alpha(data.Xp, data.Xn, alpha), w, rtol=1e-12)
    np.testing.assert_allclose(duality.dual_gradient(data.Xp, data.Xn, alpha), Z @ w - 1.0,
                               rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(duality.dual_Q(data.Xp, data.Xn, alpha),
                               0.5 * w @ w - alpha.sum(), rtol=1e-12)


def test_lipschitz_constant_is_top_eigenvalue_of_pair_gram(data):
    Z = pairs(data).reshape(-1, data.d)
    expected = np.linalg.eigvalsh(Z.T @ Z).max()
    assert duality.lipschitz_constant(data.Xp, data.Xn) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("loss,penalty", [("infinite_push", "l2"), ("infinite_push", "l1"),
                                          ("ranksvm", "l2")])
def test_make_feasible_and_weak_duality(data, loss, penalty):
    rng = np.random.default_rng(1)
    lam = 0.3
    for _ in range(5):
        alpha = duality.make_feasible(data, rng.standard_normal((data.m, data.n)), lam,
                                      loss=loss, penalty=penalty)
        assert duality.dual_infeasibility(data, alpha, lam, loss=loss, penalty=penalty) <= 1e-12
        w = rng.standard_normal(data.d)
        p, dval, gap = duality.duality_gap(data, w, alpha, lam, loss=loss, penalty=penalty)
        assert p == pytest.approx(brute_primal(data, w, lam, loss, penalty), rel=1e-12)
        assert dval == pytest.approx(brute_dual(data, alpha, lam, loss, penalty), rel=1e-10,
                                     abs=1e-12)
        assert dval <= p  # weak duality
        assert gap == pytest.approx((p - dval) / p, rel=1e-12)


def test_infeasibility_is_reported():
    data = BipartiteData(np.eye(2), -np.eye(2))
    lam = 1.0
    alpha = np.full((2, 2), 1.0)  # sum_j max_i alpha_ij = 2 > C/m = 0.5
    assert duality.dual_infeasibility(data, alpha, lam) == pytest.approx(3.0)
    assert duality.dual_infeasibility(data, -alpha, lam, loss="ranksvm") > 0


def test_solver_result_reads_as_a_scipy_optimize_result():
    from infpush_cvx.data.generators import planted_bipartite
    from infpush_cvx.solvers import infinite_push

    data = planted_bipartite(20, 20, 5, seed=0)
    res = infinite_push(data.Xp, data.Xn, 0.1)
    assert res.x is res.w and res.fun == res.objective and res.nit == res.iterations
    assert res.success is True and res.message == ""
