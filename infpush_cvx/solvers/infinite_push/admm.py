"""ADMM for the (sparse) Infinite Push (Rakotomamonjy, ICML 2012; docs/mathematics.md,
section 2.4).

Split ``a = 1 - Z w`` (``(Z w)_ij = s_i - t_j``) and minimise ``lam pen(w) + l(a)`` with
``l(a) = max_j (1/m) sum_i max(a_ij, 0)``. Scaled ADMM with penalty rho::

    w-step  argmin_w lam pen(w) + rho/2 ||Z w - (1 - a - U)||^2
            l2: (lam I + rho Z^T Z) w = rho Z^T R;  l1: a lasso on the d x d Gram Z^T Z
            (coordinate descent, warm-started, run to a tolerance that shrinks with the iterations)
    a-step  a = prox_{l/rho}(1 - Z w - U) = V - P_{K/rho}(V)   (one l1,inf projection)
    U      += a + Z w - 1

After each a-step ``-rho U`` lies in the subdifferential of l, i.e. in
``K = {u >= 0 : sum_j max_i u_ij <= 1/m}``, so ``alpha = -rho U / lam`` is a feasible point of the
paper's dual (after shrinking to ``||w(alpha)||_inf <= 1`` for l1): every iterate carries a duality
gap, which is the stopping test. rho is adapted by residual balancing (Boyd et al. 2011, 3.4.1).
"""

from __future__ import annotations

import numba
import numpy as np

from infpush_cvx._logging import log_every, log_iteration
from infpush_cvx.formulations.objectives import bipartite_objective
from infpush_cvx.prox import prox_infinite_push_loss
from infpush_cvx.solvers.base import record
from infpush_cvx.solvers.engines import duality


@numba.njit(cache=True)
def _lasso_cd(G, b, t, w, max_sweeps, tol):
    """min_w 1/2 w^T G w - b^T w + t ||w||_1 by cyclic coordinate descent (in place)."""
    d = w.shape[0]
    g = G @ w
    for _ in range(max_sweeps):
        change = 0.0
        for k in range(d):
            gkk = G[k, k]
            if gkk <= 0.0:
                continue
            r = b[k] - g[k] + gkk * w[k]
            new = np.sign(r) * max(abs(r) - t, 0.0) / gkk  # soft thresholding
            delta = new - w[k]
            if delta != 0.0:
                w[k] = new
                for q in range(d):
                    g[q] += G[q, k] * delta
                change = max(change, abs(delta) * np.sqrt(gkk))
        if change <= tol:
            break
    return w


def admm(data, lam, *, penalty, tol, max_iter, deadline, rho=None, alpha0=None,
         check_every=10):
    """Rakotomamonjy's ADMM in paper scaling; returns a dict (w, alpha, status, ...).

    Stops with status "time_limit" once ``deadline`` (a :class:`~._deadline.Deadline`) has
    passed, and "failed" when the Gram matrix or an iterate is not finite (data too large for
    float64), returning the best certified point so far.
    """
    Xp, Xn, m, n, d = data.Xp, data.Xn, data.m, data.n, data.d
    rho = 1.0 if rho is None else float(rho)  # (checked by the ADMM method)
    G = duality.pair_gram(Xp, Xn)
    w, a = np.zeros(d), np.ones((m, n))
    U = np.zeros((m, n)) if alpha0 is None else -lam * alpha0 / rho
    # The first iteration's seconds, estimated from one pass over the m x n arrays (timed on
    # up to 16 million entries, more than a cache holds, and scaled): an iteration makes many
    # (R, the scores' differences, the prox, the residual, U, their fresh temporaries), 20
    # times its time or more at 3,000 x 4,000 (0.06 s and 1.5 s)
    rows = max(1, min(m, (1 << 24) // max(n, 1)))
    begun = deadline.elapsed()
    np.subtract(a[:rows], U[:rows])
    last = 20.0 * (m / rows) * (deadline.elapsed() - begun)  # then the last iteration's seconds
    hist = {"objective": [], "gap": [], "time": [], "rho": []}
    status, message = "max_iter", ""
    best_p, best_w, best_d, best_alpha = np.inf, w.copy(), -np.inf, None
    every = log_every(max_iter, check_every)
    chol, it = None, 0
    if not np.all(np.isfinite(G)):
        status, message = "failed", "the Gram matrix Z^T Z overflows float64 (data too large)"
        max_iter = 0
    for it in range(1, max_iter + 1):
        # not begun when the iteration and the certificate after it (about as long: the feasible
        # dual and its value) would end past the limit
        if not deadline.allows(2.0 * last):
            status, it = "time_limit", it - 1
            message = (deadline.message() if deadline.expired()
                       else deadline.message_before(2.0 * last))
            break
        begun = deadline.elapsed()
        R = 1.0 - a - U
        rhs = rho * duality.w_of_alpha(Xp, Xn, R)
        if penalty == "l2":
            if chol is None:
                chol = np.linalg.cholesky(lam * np.eye(d) + rho * G)
            w = np.linalg.solve(chol.T, np.linalg.solve(chol, rhs))
        else:
            inner_tol = max(1e-12, 1e-2 / it ** 2)
            w = _lasso_cd(rho * G, rhs, lam, w.copy(), 1000, inner_tol)
        if not np.all(np.isfinite(w)):
            status, message = "failed", f"the w-step gave a non-finite w at iteration {it}"
            break
        s, t = np.asarray(Xp @ w).ravel(), np.asarray(Xn @ w).ravel()
        Zw = s[:, None] - t[None, :]
        a_old = a
        a = prox_infinite_push_loss(1.0 - Zw - U, 1.0 / rho)
        resid = a + Zw - 1.0
        U += resid
        if it % check_every == 0 or it == max_iter:
            alpha = duality.make_feasible(data, -rho * U / lam, lam, loss="infinite_push",
                                          penalty=penalty)
            p = bipartite_objective(data, w, lam, loss="infinite_push", penalty=penalty)
            dval = duality.dual_value(data, alpha, lam, penalty=penalty)
            if p < best_p:
                best_p, best_w = p, w.copy()
            if best_alpha is None or dval > best_d:
                best_d, best_alpha = dval, alpha
            gap = duality.relative_gap(best_p, best_d)
            record(hist, objective=p, gap=gap, time=deadline.elapsed(), rho=rho)
            if it % every == 0 or it == max_iter or gap <= tol:
                log_iteration("admm", it, best_p, gap, hist["time"][-1], rho=rho)
            if gap <= tol:
                status = "optimal"
                break
        if it % 100 == 0 and it <= 2000:
            # Residual balancing: keep primal and dual residuals within a factor 10; rarely, and
            # only early on, since changing rho too often stalls ADMM.
            r_norm = np.linalg.norm(resid)
            s_norm = rho * np.linalg.norm(duality.w_of_alpha(Xp, Xn, a - a_old))
            if r_norm > 10 * s_norm:
                rho, U, chol = 2 * rho, U / 2, None
            elif s_norm > 10 * r_norm:
                rho, U, chol = rho / 2, U * 2, None
        last = deadline.elapsed() - begun
    if best_alpha is None:  # no check ran (failed or stopped early): the last iterate's dual
        best_alpha = duality.make_feasible(data, -rho * U / lam, lam, loss="infinite_push",
                                           penalty=penalty)
        best_w = w if np.all(np.isfinite(w)) else best_w
    return {"w": best_w, "alpha": best_alpha, "status": status, "iterations": it,
            "history": hist, "rho": rho, "message": message}
