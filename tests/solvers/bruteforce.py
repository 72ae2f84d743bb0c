"""Brute-force primal and dual values over the explicit (m, n, d) pair tensor.

The package never forms the pair differences ``z_ij = x_i^+ - x_j^-``; these helpers do, so the
solver tests can check certificates independently of ``infpush_cvx.solvers.engines.duality``
(docs/mathematics.md, sections 1.2, 2.1 and 3.1 for the primals in paper scaling, section 9 for
the duals).
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
    """Paper-scaling dual value; asserts that alpha is dual feasible ([Agarwal2011], eqs. 3.9 and
    4.20; the l1 LP dual of docs/mathematics.md, section 2.3). An implicit dual point (the
    certified methods') is materialised."""
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


def columnwise_gap(data, w, dual, lam, loss="infinite_push", penalty="l2", rtol=1e-9):
    """Relative duality gap of ``(w, dual)`` recomputed one negative at a time, in O(m d) memory.

    ``dual.column(j)`` gives column j of alpha for the caller's rows; feasibility (with sample
    weights: ``sum_j max_i alpha_ij / p_i <= C/M``, or ``alpha_ij <= C p_i q_j / (M N)``),
    ``w(alpha) = sum_j [Xp^T alpha_j - (sum alpha_j) x_j]`` and the primal hinge sums are all
    summed here column by column, independently of the solvers' sorted prefix sums.
    """
    Xp, Xn = dense(data.Xp), dense(data.Xn)
    p, q = data.pos_weights, data.neg_weights
    M, N = data.wp_sum, data.wn_sum
    C = 1.0 / lam
    s, t = Xp @ w, Xn @ w
    wa, total, group_max, hinge_sums = np.zeros(data.d), 0.0, 0.0, np.zeros(data.n)
    for j in range(data.n):
        a = dual.column(j)
        assert a.min() >= -1e-15 * C
        if loss == "infinite_push":
            group_max += float((a / p).max())
        else:
            assert np.all(a <= C * p * q[j] / (M * N) * (1 + rtol) + 1e-300)
        wa += Xp.T @ a - a.sum() * Xn[j]
        total += a.sum()
        hinge_sums[j] = p @ np.maximum(0.0, 1.0 - s + t[j])
    if loss == "infinite_push":
        assert group_max <= C / M * (1 + rtol)
        loss_value = hinge_sums.max() / M
    else:
        loss_value = q @ hinge_sums / (M * N)
    pen = 0.5 * w @ w if penalty == "l2" else np.abs(w).sum()
    primal = lam * pen + loss_value
    if penalty == "l1":
        assert np.abs(wa).max() <= 1 + rtol
        dual_value = lam * total
    else:
        dual_value = lam * (total - 0.5 * wa @ wa)
    return (primal - dual_value) / abs(primal)
