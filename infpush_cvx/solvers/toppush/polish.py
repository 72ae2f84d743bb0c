"""The exact TopPush optimum from a certified solve: one linear system on its active sets.

Why. The TopPush solvers (:mod:`infpush_cvx.solvers.toppush`) stop at a certified relative
duality gap ``g <= tol``. The objective is ``lam``-strongly convex, so the weights are only
certified to ``||w - w*||^2 <= 2 g P(w) / lam``; for the truncated quadratic, a smooth loss, the
solvers' points sit near that bound (``||w - w*||`` of order ``sqrt(g)``: about 3e-4 relative at
``tol = 1e-6``), and a gap small enough for scores equal to 1e-7 is at the round-off floor of the
certificate. So two fits of one problem (a weighted fit and the fit on the repeated rows) agree
to ``sqrt(tol)``, not to round-off.

What. At the optimum, with ``tau = max_j t_j``, the KKT conditions (the dual of
:mod:`infpush_cvx.solvers.toppush`, ``alpha_i = c_i a_i``) are linear once three sets are known:
the negatives ``J`` tied at the top (``beta_j > 0``), the positives ``F`` whose ``alpha_i`` is
free (truncated quadratic: ``alpha_i > 0``; hinge: ``0 < alpha_i < c_i``) and, for the hinge, the
positives ``U`` at the bound ``alpha_i = c_i``. In ``(w, tau, alpha_F, beta_J)``::

    lam w - Xp_F^T alpha_F + Xn_J^T beta_J  = Xp_U^T c_U       (stationarity in w)
    sum(alpha_F) - sum(beta_J)             = -sum(c_U)          (in tau)
    1 + tau - Xp_F w - a_F * alpha_F       = 0                  (alpha_i = 2 c_i xi_i; hinge: on
                                                                 the margin, a_i = 0)
    Xn_J w - tau                           = 0                  (J at the top)

with ``a_i = 1 / (2 c_i)`` (truncated quadratic) or 0 (hinge). The sets are read from the
solver's primal-dual point by complementarity, then from each system's solution; each solution
is certified by the solver's own certificate (:func:`infpush_cvx.solvers.toppush.duality_gap`,
which makes the dual point feasible first), and the point with the smallest certified gap is
kept, the solver's own when no set gives a smaller gap. Wrong sets therefore cost a linear
solve, never a wrong answer. Measured (tol = 1e-6, C in {1e-4, 1, 1e4}, both losses): refined
to a gap near 1e-13 or below on Ionosphere and on random data with d > N, on most Spambase
fits; kept as solved on badly scaled features (columns from 1 to 1e6) and at C = 1e-4 on
Spambase, where the sets are not read correctly.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.toppush.problem import (duality_gap, feasible_dual, positive_weights,
                                                 scores)

#: Weights of the multipliers against the slacks when the sets are read (1 first; the others
#: for points where the two are of one order, degenerate or not yet converged).
KAPPAS = (1.0, 1e-2, 1e2)
#: Rounds of the active-set update (the sets read from the previous system's solution).
ROUNDS = 3
#: A certified relative gap at which the search stops (round-off of the certificate); a
#: point whose gap is below ``-DONE`` is not trusted.
DONE = 1e-13
#: Systems with more unknowns than this (a dense solve) are not attempted.
MAX_UNKNOWNS = 1000


def polish(data: BipartiteData, lam: float, loss: str, result):
    """``result`` (a certified TopPush :class:`~infpush_cvx.solvers.result.SolverResult` on
    ``data``) with the point of the active-set system (module docstring) when its certified
    relative gap is smaller; ``result`` itself otherwise. Its ``objective``, ``gap`` and
    ``dual`` are then the polished point's; ``info["polished"]`` says which was kept.

    The sets are read from the solver's point (:func:`_sets_from_point`, at each weight of
    :data:`KAPPAS`), then from each system's solution (:func:`_sets_from_solution`: a
    semismooth Newton step on the KKT conditions), for :data:`ROUNDS` rounds or until they
    repeat; it stops at a gap of :data:`DONE`.
    """
    if result.dual is None or result.gap is None or not np.isfinite(result.gap):
        return result
    alpha, beta = (np.asarray(v, dtype=np.float64) for v in result.dual)
    w0 = np.asarray(result.w, dtype=np.float64)
    c = positive_weights(data)  # the certificate's c_i, so the system and its check agree
    best, seen = None, set()
    for kappa in KAPPAS:
        sets = _sets_from_point(data, w0, alpha, beta, c, loss, kappa)
        for _ in range(ROUNDS):
            key = tuple(tuple(part) for part in sets)
            if key in seen:
                break
            seen.add(key)
            point = _solve_active(data, lam, loss, c, *sets)
            if point is None:
                break
            primal, _, gap = duality_gap(data, *point[:3], lam, loss)
            trusted = np.isfinite(gap) and gap >= -DONE  # (below: round-off broke it)
            if trusted and gap < (result.gap if best is None else best[2]):
                best = (point[:3], primal, gap)
            sets = _sets_from_solution(data, loss, c, *sets, *point)
        if best is not None and best[2] <= DONE:
            break
    if best is None:
        return dataclasses.replace(result, info={**result.info, "polished": False})
    (w, a, b), primal, gap = best
    return dataclasses.replace(result, w=w, objective=primal, gap=gap,
                               dual=feasible_dual(data, a, b, loss),
                               info={**result.info, "polished": True})


def _sets_from_point(data, w, alpha, beta, c, loss: str, kappa: float = 1.0):
    """``(F, U, J)`` read from a primal-dual point by complementarity: a constraint is active
    when its multiplier, in units of its size, exceeds its slack, in units of the scores
    (an interior point's inactive multipliers and active slacks are both of the order of its
    complementarity). The negatives: slack ``(tau - t_j) / max|score|``, multiplier
    ``beta_j / sum(beta)``.
    The positives, with margin ``r_i = 1 + tau - s_i``: in F when ``alpha_i / (2 c_i)`` (the
    truncated quadratic's ``xi_i``; hinge: ``alpha_i / c_i``) exceeds ``-r_i``; for the hinge,
    in U rather than F when ``1 - alpha_i / c_i`` is below ``r_i``. ``kappa`` weights every
    multiplier against its slack."""
    s, t = scores(data, w)
    tau = t.max()
    r = 1.0 + tau - s
    total = beta.sum()
    spread = max(float(np.abs(t).max()), float(np.abs(s).max()), 1e-300)
    J = (np.flatnonzero(kappa * beta / total > (tau - t) / spread) if total > 0
         else np.zeros(0, np.intp))
    if J.size == 0:
        J = np.array([int(np.argmax(t))])
    if loss == "hinge":
        active = kappa * alpha / c > -r
        upper = active & (kappa * (1.0 - alpha / c) < r)
        return np.flatnonzero(active & ~upper), np.flatnonzero(upper), J
    return np.flatnonzero(kappa * alpha / (2.0 * c) > -r), np.zeros(0, dtype=np.intp), J


def _sets_from_solution(data, loss, c, F, U, J, w, alpha, beta, tau):
    """The sets at the solution ``(w, alpha, beta, tau)`` of the system on ``(F, U, J)``: J
    keeps its ``beta_j > 0`` and takes the negatives scoring above ``tau``; the positives go by
    their margin ``r_i = 1 + tau - s_i`` (truncated quadratic: F where ``r_i > 0``; hinge: a
    free ``alpha_i`` outside ``[0, c_i]`` goes to its bound, a bound that ``r_i`` contradicts
    is freed)."""
    s, t = scores(data, w)
    r = 1.0 + tau - s
    in_J = np.zeros(data.n, dtype=bool)
    in_J[J[beta[J] > 0]] = True
    in_J |= t > tau
    if loss != "hinge":
        return np.flatnonzero(r > 0), U, np.flatnonzero(in_J)
    free = np.zeros(data.m, dtype=bool)
    upper = np.zeros(data.m, dtype=bool)
    free[F] = (alpha[F] >= 0) & (alpha[F] <= c[F])
    upper[F] = alpha[F] > c[F]
    upper[U] = r[U] >= 0
    free[U] = r[U] < 0
    lower = ~free & ~upper
    free |= lower & (r > 0)  # a positive inside the margin cannot keep alpha_i = 0
    upper &= ~free
    return np.flatnonzero(free), np.flatnonzero(upper), np.flatnonzero(in_J)


def _rows(X, idx) -> np.ndarray:
    part = X[idx]
    return part.toarray() if sp.issparse(part) else np.asarray(part, dtype=np.float64)


def _solve_active(data, lam, loss, c, F, U, J):
    """``(w, alpha, beta, tau)`` (full length) solving the module docstring's system on the sets
    ``F``, ``U``, ``J``; None when it is too large or its solution is not finite.

    For the truncated quadratic ``alpha_F = 2 c_F (1 + tau - Xp_F w)`` is substituted (the
    system in ``(w, tau, beta_J)`` is ``d + 1 + |J|`` square, whatever the number of positives);
    the hinge keeps ``alpha_F`` (generically at most ``d + 1`` positives on the margin).
    """
    d, k = data.d, J.size
    quadratic = loss == "truncated_quadratic"
    f = 0 if quadratic else F.size
    size = d + 1 + f + k
    if size > MAX_UNKNOWNS:
        return None
    XF, XJ, XU = _rows(data.Xp, F), _rows(data.Xn, J), _rows(data.Xp, U)
    # unknowns: w (columns :d), tau (d), alpha_F (d+1 : d+1+f), beta_J (d+1+f :)
    ia, ib = d + 1, d + 1 + f
    A = np.zeros((size, size))
    rhs = np.zeros(size)
    A[:d, :d] = lam * np.eye(d)                 # stationarity in w
    A[:d, ib:] = XJ.T
    rhs[:d] = XU.T @ c[U]
    A[d, ib:] = -1.0                            # stationarity in tau
    rhs[d] = -c[U].sum()
    if quadratic:  # alpha_F = p (1 + tau - XF w), p = 2 c_F
        p = 2.0 * c[F]
        A[:d, :d] += XF.T @ (p[:, None] * XF)
        A[:d, d] = -XF.T @ p
        rhs[:d] += XF.T @ p
        A[d, :d] = -(p @ XF)
        A[d, d] = p.sum()
        rhs[d] -= p.sum()
    else:  # hinge: the free positives lie on the margin, 1 + tau - XF w = 0
        A[:d, ia:ib] = -XF.T
        A[d, ia:ib] = 1.0
        A[ia:ib, :d] = -XF
        A[ia:ib, d] = 1.0
        rhs[ia:ib] = -1.0
    A[ib:, :d] = XJ                             # the top negatives: XJ w = tau
    A[ib:, d] = -1.0
    try:
        sol = np.linalg.solve(A, rhs)
        scale = np.linalg.norm(A, 1) * np.linalg.norm(sol) + np.linalg.norm(rhs)
        solved = np.linalg.norm(A @ sol - rhs) <= 1e-10 * scale
    except np.linalg.LinAlgError:
        solved = False
    if not solved:  # singular: tied negatives (duplicate rows), more than d + 1 of them, ...
        sol = np.linalg.lstsq(A, rhs, rcond=None)[0]
    if not np.all(np.isfinite(sol)):
        return None
    w, tau = sol[:d], sol[d]
    alpha = np.zeros(data.m)
    alpha[U] = c[U]
    alpha[F] = p * (1.0 + tau - XF @ w) if quadratic else sol[ia:ib]
    beta = np.zeros(data.n)
    beta[J] = sol[ib:]
    return w, alpha, beta, tau
