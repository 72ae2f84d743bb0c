"""RankSVM by Newton's method on a smoothed hinge, certified by an implicit dual point.

The bipartite RankSVM (Agarwal, SDM 2011, eq. 4.18; weighted rows, ``W = M N``)::

    P(w) = lam/2 ||w||^2 + (1/W) sum_ij p_i q_j h(x_ij),   x_ij = 1 - s_i + t_j,  h(x) = max(0, x)

With ``c = mu/2`` the smoothed hinge
``h_mu(x) = max_{0<=a<=1} a (x + c) - mu a^2 / 2`` equals the hinge outside ``|x| < c`` and
exceeds it by at most ``mu/8`` inside; its derivative is the ramp ``a(x) = clip((x + c)/mu, 0, 1)``.
``F_mu = lam/2 ||w||^2 + (1/W) sum p q h_mu`` is differentiable with a piecewise constant Hessian

    lam I + (1/(W mu)) sum_{|x_ij| < c} p_i q_j z_ij z_ij^T,     z_ij = x_i - x_j,

so Newton's method with a backtracking line search minimises it in a few steps (Chapelle,
"Training a support vector machine in the primal", Neural Computation 2007, for the same
piecewise quadratic structure). Every sum over the m n pairs is over the pairs on one side of, or
within ``c`` of, a threshold, so sorting the scores makes it a prefix sum (:mod:`._pair_sums`):
the ramp sums, the objective and the gradient cost O(nnz(X) + (m + n) log(m + n)), the Hessian
O(nnz(X) d + (m + n) d) through prefix sums of the negatives' rows (Lee & Lin, "Large-scale
linear RankSVM", Neural Computation 2014, use order statistics the same way). No m x n array.

Certificate: ``alpha_ij = (C/W) p_i q_j a(x_ij)`` lies in RankSVM's dual box for every w and mu,
and is held implicitly by the scores and mu; ``w(alpha)`` and ``sum(alpha)`` are ramp sums too.
At the minimiser of ``F_mu``, ``w = w(alpha)`` and the duality gap of the original problem is at
most ``mu/8`` times the (weighted) fraction of pairs within ``c`` of the margin, so mu is
divided by 10 until the certified relative gap is below ``tol``.
"""

from __future__ import annotations


import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .._logging import log_iteration
from ._deadline import Deadline, round_end
from ._ramp_sums import RampSums
from .implicit_dual import best_multiple, dense_from_columns, dual_value, expand_column
from .duality import dual_bound, relative_gap


class RampDual:
    """``alpha_ij = coef p_i q_j a(x_ij)`` at reference scores and mu: RankSVM's implicit dual."""

    loss = "ranksvm"

    def __init__(self, s_ref, t_ref, p, q, mu, coef, w_alpha, total, factor, alpha_scale,
                 collapsed=None):
        self.s_ref, self.t_ref, self.p, self.q, self.mu = s_ref, t_ref, p, q, mu
        self.coef, self.w_alpha, self.total = coef, w_alpha, total
        self.factor, self.alpha_scale, self.collapsed = factor, alpha_scale, collapsed

    def value(self, lam: float, penalty: str = "l2") -> float:
        return dual_value(self.w_alpha, self.total, lam, penalty)

    def _reduced_column(self, J: int) -> np.ndarray:
        x = 1.0 - self.s_ref + self.t_ref[J]
        ramp = np.clip((x + 0.5 * self.mu) / self.mu, 0.0, 1.0)
        return (self.coef * self.factor * self.alpha_scale * self.q[J]) * ramp * self.p

    def column(self, j: int) -> np.ndarray:
        """Column j of ``alpha`` (length m) for the caller's data, in O(m) memory."""
        return expand_column(self, j, self._reduced_column, self.p, self.q)

    def to_dense(self) -> np.ndarray:
        """``alpha`` (m x n) for the caller's data: O(m n) memory, for small problems only."""
        return dense_from_columns(self)


def _sorted_prefix_rows(X, order, weights):
    """Dense prefix sums of ``weights_j x_j`` in the given row order ((n + 1) x d)."""
    rows = X[order]
    rows = rows.toarray() if sp.issparse(rows) else np.asarray(rows, dtype=float)
    out = np.zeros((rows.shape[0] + 1, rows.shape[1]))
    np.cumsum(rows * weights[order][:, None], axis=0, out=out[1:])
    return out


def _quad_form(X, weights):
    """``X^T diag(weights) X`` as a dense d x d array."""
    if sp.issparse(X):
        return np.asarray((X.T @ X.multiply(weights[:, None]).tocsr()).toarray())
    return X.T @ (X * weights[:, None])


def solve(prob, *, tol: float, max_iter: int, w0=None, time_limit=None, mu0: float = 1.0):
    """Smoothing continuation with Newton steps on the rescaled problem ``prob``
    (a :class:`._working_set._Problem` of the RankSVM); returns the working set's result dict."""
    deadline = Deadline(time_limit)
    Xp, Xn, p, q = prob.Xp, prob.Xn, prob.p, prob.q
    lam, W = prob.lam, prob.M * prob.N
    d = prob.d
    w = np.zeros(d) if w0 is None else np.asarray(w0, float).copy()
    mu = mu0
    history = {"objective": [], "gap": [], "time": [], "mu": [], "step_size": []}
    best_p, best_d = (np.inf, w), (-np.inf, None)
    status, message, gap, it = "max_iter", "", np.inf, 0

    def smoothed(w):
        s, t = prob.scores(w)
        ramp = RampSums(s, t, p, q, mu)
        F = 0.5 * lam * (w @ w) + float(q @ ramp.col_h) / W
        return s, t, ramp, F

    s, t, ramp, F = smoothed(w)
    for it in range(1, max_iter + 1):
        # certificate at the current point: primal P(w) and the ramp dual
        Pw = prob.objective(w, s, t)
        if Pw < best_p[0]:
            best_p = (Pw, w.copy())
        g_pairs = (np.asarray(Xp.T @ (p * ramp.row)).ravel()
                   - np.asarray(Xn.T @ (q * ramp.col)).ravel())  # sum p q a z
        coef = dual_bound(lam, prob.M, prob.N, "ranksvm")  # C/(M N)
        w_alpha, total = coef * g_pairs, coef * float(q @ ramp.col)
        factor = best_multiple(w_alpha, total)
        D = dual_value(factor * w_alpha, factor * total, lam, "l2")
        if D > best_d[0]:
            best_d = (D, RampDual(s, t, p, q, mu, coef, factor * w_alpha, factor * total, factor,
                                  prob.alpha_scale))
        if np.any(w_alpha):  # w(alpha) as a primal candidate
            P_a = prob.objective(factor * w_alpha)
            if P_a < best_p[0]:
                best_p = (P_a, factor * w_alpha)
        gap = relative_gap(best_p[0], best_d[0])
        history["objective"].append(best_p[0])
        history["gap"].append(gap)
        history["time"].append(deadline.elapsed())
        history["mu"].append(mu)
        log_iteration("smoothing_newton", it, best_p[0], gap, history["time"][-1], mu=mu)
        end = round_end(gap, tol, deadline)
        if end is not None:
            status, message = end
            break
        grad = lam * w - g_pairs / W
        # Hessian: lam I + (1/(W mu)) sum_zone p q z z^T, the cross term by prefix sums of rows
        cum = _sorted_prefix_rows(Xn, ramp.v_order, q)
        R = cum[ramp.zone_hi] - cum[ramp.zone_lo]  # sum_{j in zone(i)} q_j x_j
        cross = np.asarray(Xp.T @ (p[:, None] * R))
        H = (_quad_form(Xp, p * ramp.row_zone) + _quad_form(Xn, q * ramp.col_zone)
             - cross - cross.T) / (W * mu)
        H[np.diag_indices(d)] += lam
        try:
            step = -scipy.linalg.solve(H, grad, assume_a="pos", check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            step = -grad / lam
        decrement = -float(grad @ step)
        if decrement <= 1e-14 * max(abs(F), 1e-300):
            # converged for this mu: smooth less
            mu /= 10.0
            s, t, ramp, F = smoothed(w)
            history["step_size"].append(0.0)
            continue
        size = 1.0
        while True:  # backtracking (Armijo) on F_mu
            w_new = w + size * step
            s_n, t_n, ramp_n, F_n = smoothed(w_new)
            if F_n <= F - 1e-4 * size * decrement or size < 1e-10:
                break
            size *= 0.5
        history["step_size"].append(size)
        if size < 1e-6:
            # (almost) no descent: the Newton direction is spoilt by round-off in a Hessian
            # whose curvature 1/mu is concentrated on few pairs (nearly separable data, d >= m,
            # stalled here for 400 steps at steps of 1e-9): smooth less
            if F_n < F:
                w = w_new
            mu /= 10.0
            s, t, ramp, F = smoothed(w)
            continue
        w, s, t, ramp, F = w_new, s_n, t_n, ramp_n, F_n
    if status == "max_iter":
        message = f"max_iter={max_iter} Newton steps reached"
    return {"w": best_p[1] * prob.scale, "dual": best_d[1], "gap": gap, "status": status,
            "message": message, "iterations": it, "history": history,
            "objective_paper": best_p[0]}


def run(data, lam: float, *, tol: float, max_iter: int, w0=None, time_limit=None):
    """Collapse repeated rows, rescale, solve; ``lam`` in paper scaling, ``w0`` in the caller's
    units. Returns the result dict of :func:`solve` (``dual`` maps back to the original rows)."""
    from ._working_set import _Problem, collapse

    reduced, collapsed = collapse(data)
    prob = _Problem(reduced, lam, "ranksvm", "l2")
    # from a warm start (a nearby lambda, the same problem) begin with little smoothing
    out = solve(prob, tol=tol, max_iter=max_iter, time_limit=time_limit,
                w0=None if w0 is None else np.asarray(w0, float) / prob.scale,
                mu0=1.0 if w0 is None else 1e-2)
    if out["dual"] is not None:
        out["dual"].collapsed = collapsed
    return out
