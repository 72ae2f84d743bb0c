"""Brute-force primal and dual values over the explicit (m, n, d) pair tensor.

The package never forms the pair differences ``z_ij = x_i^+ - x_j^-``; these helpers do, so the
solver tests can check certificates independently of ``infpush_cvx.solvers.duality``
(formulations.md sections 1 to 3, paper scaling).
"""

import numpy as np
import scipy.sparse as sp


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def pairs(data):
    """z_ij = x_i^+ - x_j^-, shape (m, n, d)."""
    return dense(data.Xp)[:, None, :] - dense(data.Xn)[None, :, :]


def brute_primal(data, w, lam, loss="infinite_push", penalty="l2"):
    """Paper-scaling primal from the explicit pair hinges."""
    hinge = np.maximum(0.0, 1.0 - pairs(data) @ w)
    loss_value = hinge.sum(axis=0).max() / data.m if loss == "infinite_push" \
        else hinge.sum() / (data.m * data.n)
    pen = 0.5 * w @ w if penalty == "l2" else np.abs(w).sum()
    return lam * pen + loss_value


def brute_dual(data, alpha, lam, loss="infinite_push", penalty="l2", rtol=1e-9):
    """Paper-scaling dual value; asserts that alpha is dual feasible (Agarwal 2011, eqs. 3.9,
    4.18; the l1 LP dual). An implicit dual point (the certified methods') is materialised."""
    alpha = alpha.to_dense() if hasattr(alpha, "to_dense") else np.asarray(alpha)
    C = 1.0 / lam
    wa = np.einsum("ij,ijd->d", alpha, pairs(data))
    assert alpha.min() >= 0.0
    if loss == "infinite_push":
        assert alpha.max(axis=0).sum() <= (C / data.m) * (1 + rtol)
    else:
        assert alpha.max() <= (C / (data.m * data.n)) * (1 + rtol)
    if penalty == "l1":
        assert np.abs(wa).max() <= 1 + rtol
        return lam * alpha.sum()
    return lam * (alpha.sum() - 0.5 * wa @ wa)


def brute_gap(data, w, alpha, lam, loss="infinite_push", penalty="l2"):
    """Relative duality gap ``(P(w) - D(alpha)) / |P(w)|`` by brute force."""
    p = brute_primal(data, w, lam, loss, penalty)
    return (p - brute_dual(data, alpha, lam, loss, penalty)) / abs(p)
