"""Proxes built on the projections: Infinite Push loss, l_inf,1 and l1,inf norms (vs CVXPY)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from infpush_cvx.prox import (infinite_push_loss, l1inf_norm, linf1_norm, project_linf1,
                              prox_infinite_push_loss, prox_l1inf, prox_linf1)

TIGHT = dict(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)


def _cvx_prox(V, tau, fn):
    X = cp.Variable(V.shape)
    prob = cp.Problem(cp.Minimize(tau * fn(X) + 0.5 * cp.sum_squares(X - V)))
    prob.solve(**TIGHT)
    assert prob.status == cp.OPTIMAL
    return X.value


@pytest.mark.parametrize("tau", [0.05, 0.5, 3.0])
def test_prox_infinite_push_loss_vs_cvxpy(tau):
    rng = np.random.default_rng(1)
    A = rng.standard_normal((5, 7))
    m = A.shape[0]
    ref = _cvx_prox(A, tau, lambda X: cp.max(cp.sum(cp.pos(X), axis=0)) / m)
    np.testing.assert_allclose(prox_infinite_push_loss(A, tau), ref, atol=1e-7)
    # Moreau: prox_{tau l}(v) + P_{tau K}(v) = v, and tau l(prox) + ||prox - v||^2/2 is minimal.
    P = prox_infinite_push_loss(A, tau)
    obj = tau * infinite_push_loss(P) + 0.5 * np.sum((P - A) ** 2)
    obj_ref = tau * infinite_push_loss(ref) + 0.5 * np.sum((ref - A) ** 2)
    assert obj <= obj_ref + 1e-9


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_prox_linf1_and_l1inf_vs_cvxpy(axis, dtype):
    rng = np.random.default_rng(2)
    V = rng.standard_normal((4, 6)).astype(dtype)
    tau = 0.7
    V64 = V.astype(np.float64)
    ref_linf1 = _cvx_prox(V64, tau, lambda X: cp.max(cp.sum(cp.abs(X), axis=axis)))
    ref_l1inf = _cvx_prox(V64, tau, lambda X: cp.sum(cp.max(cp.abs(X), axis=axis)))
    atol = 1e-7 if dtype == np.float64 else 1e-5
    out = prox_linf1(V, tau, axis=axis)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, ref_linf1, atol=atol)
    np.testing.assert_allclose(prox_l1inf(V, tau, axis=axis), ref_l1inf, atol=atol)


def test_norms_and_linf1_projection():
    V = np.array([[1.0, -4.0], [-3.0, 2.0]])
    assert l1inf_norm(V, 0) == 3.0 + 4.0 and l1inf_norm(V, 1) == 4.0 + 3.0
    assert linf1_norm(V, 0) == 6.0 and linf1_norm(V, 1) == 5.0
    P = project_linf1(V, 2.0, axis=0)
    assert linf1_norm(P, 0) <= 2.0 + 1e-15


def test_prox_validation():
    with pytest.raises(ValueError, match="tau"):
        prox_infinite_push_loss(np.ones((2, 2)), -1.0)
    with pytest.raises(ValueError, match="V"):
        prox_linf1(np.array([[np.nan]]), 1.0)
