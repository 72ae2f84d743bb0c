"""Duals of the bipartite ranking problems, written once: w(alpha), dual values, gaps, Lipschitz.

The dual variable is the paper's ``alpha`` in R^{m x n} (Agarwal, SDM 2011, eqs. 3.9 and 4.20), in
the ``C = 1/lambda`` scaling of the paper's primal ``1/2 ||w||^2 + C R(w)``::

    w(alpha) = sum_ij alpha_ij (x_i^+ - x_j^-) = Xp^T (alpha 1_n) - Xn^T (alpha^T 1_m)
    Q(alpha) = 1/2 ||w(alpha)||^2 - sum_ij alpha_ij                      (minimised)

Feasible sets (docs/mathematics.md, sections 1.6, 2.3 and 3.2; table in section 9):

- Infinite Push, l2:  alpha >= 0,  sum_j max_i alpha_ij <= C/m;
- RankSVM, l2:        0 <= alpha_ij <= C/(m n);
- Infinite Push, l1 (Rakotomamonjy, ICML 2012; the LP dual): alpha >= 0,
  sum_j max_i alpha_ij <= C/m and ||w(alpha)||_inf <= 1, with dual value sum_ij alpha_ij.

Strong duality gives ``P(w*) = -lambda Q(alpha*)`` (l2) and ``P(w*) = lambda sum alpha*`` (l1) in
paper scaling, so for any feasible alpha and any w the difference ``P(w) - D(alpha)`` bounds
``P(w) - P*`` from above: a certificate needing no reference solver. Everything here costs
O((m + n) d + m n); the (m n) x d pair matrix is never formed.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from infpush_cvx.formulations import scaling as _scaling
from infpush_cvx._validation import check_choice, check_scalar
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.formulations.objectives import bipartite_objective, penalty_value
from infpush_cvx.solvers.engines import implicit_dual
from infpush_cvx.solvers.result import relative_gap, roundoff_bound


def w_of_alpha(Xp, Xn, alpha: np.ndarray) -> np.ndarray:
    """``w(alpha) = Xp^T (alpha 1_n) - Xn^T (alpha^T 1_m)`` (Agarwal 2011, eq. 3.11)."""
    return np.asarray(Xp.T @ alpha.sum(axis=1) - Xn.T @ alpha.sum(axis=0)).ravel()


def dual_gradient(Xp, Xn, alpha: np.ndarray) -> np.ndarray:
    """``dQ/dalpha_ij = s_i - t_j - 1`` with ``s = Xp w(alpha)``, ``t = Xn w(alpha)``."""
    w = w_of_alpha(Xp, Xn, alpha)
    s = np.asarray(Xp @ w).ravel()
    t = np.asarray(Xn @ w).ravel()
    return (s - 1.0)[:, None] - t[None, :]


def dual_Q(Xp, Xn, alpha: np.ndarray) -> float:
    """The paper's minimised dual ``Q(alpha) = 1/2 ||w(alpha)||^2 - sum alpha`` (eq. 3.9)."""
    w = w_of_alpha(Xp, Xn, alpha)
    return float(0.5 * (w @ w) - alpha.sum())


def pair_gram(Xp, Xn) -> np.ndarray:
    """``Z^T Z = sum_ij (x_i^+ - x_j^-)(x_i^+ - x_j^-)^T`` (d x d) without the pairs:
    ``n Xp^T Xp + m Xn^T Xn - a b^T - b a^T`` with ``a = Xp^T 1_m``, ``b = Xn^T 1_n``."""
    m, n = Xp.shape[0], Xn.shape[0]
    a = np.asarray(Xp.sum(axis=0)).ravel()
    b = np.asarray(Xn.sum(axis=0)).ravel()
    XpX, XnX = (A.toarray() if sp.issparse(A) else np.asarray(A) for A in (Xp.T @ Xp, Xn.T @ Xn))
    G = n * XpX + m * XnX - np.outer(a, b) - np.outer(b, a)
    return 0.5 * (G + G.T)


def lipschitz_constant(Xp, Xn) -> float:
    """``L = lambda_max(Z^T Z)``, the Lipschitz constant of grad Q, from a d x d matrix.

    :func:`pair_gram` computed on the data divided by its largest absolute entry u and multiplied
    back by u^2: ``inf`` when L overflows float64, 0 when it underflows (or every pair difference
    is 0).
    """
    u = max(float(abs(Xp).max()), float(abs(Xn).max()))
    if u == 0:
        return 0.0
    G = pair_gram(Xp / u, Xn / u)
    top = float(scipy.linalg.eigvalsh(G, subset_by_index=[G.shape[0] - 1, G.shape[0] - 1])[0])
    with np.errstate(over="ignore", under="ignore"):
        return float(max(top, 0.0) * np.float64(u) * np.float64(u))


def largest_row_norm(data: BipartiteData) -> float:
    """The largest Euclidean norm of a row of Xp or Xn, without overflow or underflow.

    The squared norms are summed directly (no copy of a dense X); only when they leave the
    float range are they recomputed on the data divided by its largest absolute entry.
    """
    return max(_largest_norm(data.Xp), _largest_norm(data.Xn))


def _largest_norm(X) -> float:
    with np.errstate(over="ignore", under="ignore"):
        sq = float(_row_squares(X).max()) if X.shape[0] else 0.0
    if np.isfinite(sq) and (sq == 0.0 or sq > 1e-280):
        return float(np.sqrt(sq))
    top = float(abs(X).max())
    return top * float(np.sqrt(_row_squares(X / top).max()))


def _row_squares(X) -> np.ndarray:
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def dual_bound(lam: float, m: int, n: int, loss: str) -> float:
    """The paper's ``C/m`` (Infinite Push: bound on sum_j max_i alpha_ij) or ``C/(m n)``
    (RankSVM)."""
    lam = check_scalar(lam, "lam", positive=True)
    return 1.0 / (lam * _scaling.loss_normaliser(loss, m, n))


def dual_infeasibility(data: BipartiteData, alpha: np.ndarray, lam: float, *,
                       loss: str = "infinite_push", penalty: str = "l2") -> float:
    """Largest violation of the dual constraints (0 when ``alpha`` is feasible), relative to C/N."""
    check_choice(loss, "loss", _scaling.LOSSES)
    check_choice(penalty, "penalty", _scaling.PENALTIES)
    bound = dual_bound(lam, data.m, data.n, loss)
    # the constrained quantity: sum_j max_i alpha_ij (Infinite Push) or max alpha_ij (RankSVM)
    top = alpha.max(axis=0).sum() if loss == "infinite_push" else alpha.max()
    viol = max(0.0, -float(alpha.min()), float(top) - bound) / bound
    if penalty == "l1":
        viol = max(viol, float(np.abs(w_of_alpha(data.Xp, data.Xn, alpha)).max()) - 1.0)
    return viol


def make_feasible(data: BipartiteData, alpha: np.ndarray, lam: float, *,
                  loss: str = "infinite_push", penalty: str = "l2") -> np.ndarray:
    """A feasible dual point near ``alpha`` (clip at 0, then shrink): repairs solver round-off.

    Shrinking by a factor <= 1 keeps every other constraint of the (star-shaped) feasible set.
    ``alpha`` is never changed; it is returned itself when it is feasible already (each repair
    makes a new array: writing a fresh m x n array is the slowest pass over it, 0.5 s or more on
    a8a's 95 million pairs, where reading it takes 0.05 s). The clip at 0 also turns -0.0 into
    0.0, so it runs whenever a sign bit is set.
    """
    if np.signbit(alpha).any():
        alpha = np.maximum(alpha, 0.0)
    bound = dual_bound(lam, data.m, data.n, loss)
    if loss == "infinite_push":
        r = float(alpha.max(axis=0).sum())
        if r > bound:
            alpha = alpha * (bound / r)
    elif alpha.size and float(alpha.max()) > bound:
        alpha = np.minimum(alpha, bound)
    if penalty == "l1":
        r = float(np.abs(w_of_alpha(data.Xp, data.Xn, alpha)).max(initial=0.0))
        if r > 1.0:
            alpha = alpha * (1.0 / r)
    return alpha


def dual_value(data: BipartiteData, alpha: np.ndarray, lam: float, *,
               penalty: str = "l2") -> float:
    """Dual objective in paper scaling: ``-lam Q(alpha)`` (l2) or ``lam sum alpha`` (l1).

    A lower bound on the paper-scaling optimum whenever ``alpha`` is dual feasible.
    """
    check_choice(penalty, "penalty", _scaling.PENALTIES)
    lam = check_scalar(lam, "lam", positive=True)
    w = w_of_alpha(data.Xp, data.Xn, alpha) if penalty == "l2" else None
    return implicit_dual.dual_value(w, alpha.sum(), lam, penalty)


def duality_gap(data: BipartiteData, w, alpha: np.ndarray, lam: float, *,
                loss: str = "infinite_push", penalty: str = "l2"):
    """``(primal, dual, relative gap)`` in paper scaling for a primal ``w`` and feasible ``alpha``.

    ``relative gap = (P(w) - D(alpha)) / |P(w)|`` (:func:`~.result.relative_gap`); the caller
    must make ``alpha`` feasible first (see :func:`make_feasible`, :func:`dual_infeasibility`).
    """
    primal = bipartite_objective(data, w, lam, loss=loss, penalty=penalty, scaling="paper")
    dual = dual_value(data, alpha, lam, penalty=penalty)
    return primal, dual, relative_gap(primal, dual)


def gap_roundoff(data: BipartiteData, w, lam: float, primal: float, *, penalty: str = "l2",
                 amplification: float = 1.0) -> float:
    """The round-off bound of the relative duality gap at ``w`` whose primal value is ``primal``
    (paper scaling, lambda ``lam``).

    :func:`~.result.roundoff_bound` with ``n_terms = m + n + d + 2`` (the longest sum: a score
    of d products, a hinge sum over m positives, the loss over n negatives) and the magnitude
    of the terms of both values, with ``R = max_x ||x|| ||w||`` bounding every ``|s_i|, |t_j|``
    (Cauchy-Schwarz over the rows of Xp and Xn)::

        primal   lam pen(w) + mean_ij (1 + |s_i| + |t_j|)         <= lam pen(w) + 1 + 2 R
        dual     lam ||w(alpha)||^2 / 2 + lam sum(alpha) (<= 1), and the round-off of
                 w(alpha) = sum_ij alpha_ij (x_i - x_j) against w(alpha): <= 2 R

    near a certified optimum ``w(alpha)`` is ``w`` up to ``sqrt(2 gap / lam)`` (the l2 gap is
    at least ``lam/2 ||w - w(alpha)||^2``), so ``w`` stands for both: magnitude
    ``2 + 2 lam pen(w) + 4 R``, times ``amplification`` when the dual's sums magnified their
    round-off (the ramp dual of :mod:`._ranksvm_newton` through prefix sums: ``1 + 1/mu``,
    :class:`._ramp_sums.RampSums`). The scale is ``|P(w)|`` (1 when ``P = 0``), as in
    :func:`~.result.relative_gap`.
    """
    w = np.asarray(w, dtype=np.float64).ravel()
    with np.errstate(over="ignore"):
        reach = largest_row_norm(data) * float(np.linalg.norm(w))
        magnitude = (2.0 + 2.0 * lam * penalty_value(w, penalty, "paper") + 4.0 * reach) \
            * amplification
    return roundoff_bound(data.m + data.n + data.d + 2, magnitude, abs(float(primal)))
