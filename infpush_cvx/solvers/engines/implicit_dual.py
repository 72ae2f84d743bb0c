"""The dual point of the working-set method, held implicitly in memory linear in the data.

The dual variable of the Infinite Push and of RankSVM is the m x n array ``alpha`` (Agarwal, SDM
2011, eqs. 3.9 and 4.18; :mod:`infpush_cvx.solvers.engines.duality`). The multipliers of a
restricted problem extend to a feasible ``alpha`` of the full problem that never needs to be
stored: it is constant on the pairs below the margin at a reference point (a threshold on the
sorted positive scores for every working negative), explicit on a list of band pairs, and zero
elsewhere:

- Infinite Push (group multipliers ``mu_j`` of the working negatives W)::

      alpha_ij = mu_j p_i        if j in W, s_i < 1 + t_j at the reference, (i, j) not in the band
               = nu_b pi_b       on band pair b = (i, j)   (0 <= nu_b <= mu_j, pi_b = p_i)
               = 0               otherwise

- RankSVM (``coef = C / (M N)``)::

      alpha_ij = coef p_i q_j    if s_i < 1 + t_j at the reference, (i, j) not in the band
               = nu_b pi_b       on band pair b            (0 <= nu_b <= coef, pi_b = p_i q_j)

``p``, ``q`` are the sample weights (ones without them), ``M = sum p``, ``N = sum q``. The
quantities the certificate needs are then aggregates computed by sorting (:mod:`._pair_sums`)::

    w(alpha) = sum_ij alpha_ij (x_i - x_j) = sum_j mu_j g_j + sum_b nu_b pi_b z_b
    sum(alpha) = sum_j mu_j a_j + sum_b nu_b pi_b

with ``a_j``, ``g_j`` the weight and the weighted pair-vector sum of the pairs below the margin.
The dual value is ``-lam (1/2 ||w(alpha)||^2 - sum alpha)`` (l2) or ``lam sum alpha`` under
``||w(alpha)||_inf <= 1`` (l1, the LP dual; Rakotomamonjy, ICML 2012), in paper scaling; any
feasible alpha bounds the optimum from below.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infpush_cvx.formulations.objectives import penalty_term


def dual_value(w_alpha, total: float, lam: float, penalty: str) -> float:
    """The paper-scaling dual value of a feasible alpha from ``w(alpha)`` and ``sum(alpha)``:
    ``-lam (1/2 ||w(alpha)||^2 - sum alpha)`` (l2) or ``lam sum alpha`` (l1).

    The l2 value is formed as ``lam sum alpha - lam ||w(alpha)||^2 / 2``
    (:func:`~infpush_cvx.formulations.objectives.penalty_term`), finite at a tiny lambda where
    ``||w(alpha)||^2`` alone overflows."""
    if penalty == "l1":
        return float(lam * total)
    return float(lam * total - penalty_term(w_alpha, lam, "l2", "paper"))


def best_multiple(w_alpha, total: float) -> float:
    """The t in [0, 1] whose ``t alpha`` has the largest l2 dual value,
    ``-(t^2/2 ||w(alpha)||^2 - t sum alpha)``: ``min(1, sum alpha / ||w(alpha)||^2)``."""
    ww = float(w_alpha @ w_alpha)
    return min(1.0, total / ww) if ww > 0 else 1.0


def pair_vector_sum(Xp, Xn, bi, bj, v) -> np.ndarray:
    """``sum_b v_b (x_{bi_b} - x_{bj_b})`` without forming a pair vector."""
    m, n = Xp.shape[0], Xn.shape[0]
    return (np.asarray(Xp.T @ np.bincount(bi, v, m)).ravel()
            - np.asarray(Xn.T @ np.bincount(bj, v, n)).ravel())


@dataclass
class ImplicitDual:
    """A feasible dual point of the (internally rescaled) problem, in O(m + n + |band|) memory.

    Built by the working-set method; :meth:`to_dense` materialises ``alpha`` for the caller's
    data (for tests and warm starts of the m x n first-order methods on small problems).

    Attributes
    ----------
    loss : "infinite_push" or "ranksvm".
    cols : working negatives W (Infinite Push; all negatives for RankSVM, unused).
    mu : group multipliers (Infinite Push; length |W|).
    coef : RankSVM's constant multiplier ``C / (M N)`` (unused for the Infinite Push).
    bi, bj, pi, nu : band pairs (positive, negative), their weights and multipliers.
    s_ref, t_ref : the reference scores that define the pairs below the margin.
    w_alpha : ``w(alpha)``; total : ``sum(alpha)`` (both for the rescaled data).
    factor : the multiplier applied to every entry to make alpha feasible (<= 1).
    alpha_scale : ``alpha`` of the caller's data = ``alpha_scale * alpha`` of the rescaled data.
    collapsed : when identical rows were collapsed into weights, the index maps and the original
        weights, so :meth:`to_dense` returns alpha for the original rows.
    """

    loss: str
    cols: np.ndarray
    mu: np.ndarray
    coef: float
    bi: np.ndarray
    bj: np.ndarray
    pi: np.ndarray
    nu: np.ndarray
    s_ref: np.ndarray
    t_ref: np.ndarray
    p: np.ndarray
    q: np.ndarray
    w_alpha: np.ndarray
    total: float
    factor: float = 1.0
    alpha_scale: float = 1.0
    collapsed: object = None  # (CollapseInfo, original wp, original wn) when rows were collapsed

    def value(self, lam: float, penalty: str) -> float:
        """Dual objective in paper scaling of the rescaled problem (a lower bound on P*)."""
        return dual_value(self.w_alpha, self.total, lam, penalty)

    def _reduced_column(self, J: int) -> np.ndarray:
        """Column J of alpha for the (collapsed, rescaled) data the solver worked on."""
        below = self.s_ref < 1.0 + self.t_ref[J]
        if self.loss == "infinite_push":
            k = int(np.searchsorted(self.cols, J))
            on = k < len(self.cols) and self.cols[k] == J
            col = below * self.p * (self.mu[k] if on else 0.0)
        else:
            col = below * (self.coef * self.p * self.q[J])
        lo, hi = np.searchsorted(self.bj, [J, J + 1])  # the band is sorted by negative
        col[self.bi[lo:hi]] = self.nu[lo:hi] * self.pi[lo:hi]
        return col * (self.factor * self.alpha_scale)

    def column(self, j: int) -> np.ndarray:
        """Column j of ``alpha`` (length m) for the caller's data, in O(m) memory."""
        return expand_column(self, j, self._reduced_column, self.p, self.q)

    def to_dense(self) -> np.ndarray:
        """``alpha`` (m x n) for the caller's data: O(m n) memory, for small problems only."""
        return dense_from_columns(self)


def expand_column(dual, j, reduced_column, p, q):
    """Column j of the caller's alpha from the solver's (collapsed) columns.

    A collapsed row's alpha splits over its copies in proportion to their weights, and so does
    a collapsed negative's (RankSVM's box bound scales with them; the Infinite Push's
    ``sum_j max_i alpha_ij / p_i`` is unchanged by any split). The pair sums are unchanged.
    """
    if dual.collapsed is None:
        return reduced_column(j)
    info, wp, wn = dual.collapsed
    J = int(info.neg_index[j])
    return reduced_column(J)[info.pos_index] * (wp / p[info.pos_index]) * (wn[j] / q[J])


def dense_from_columns(dual) -> np.ndarray:
    """The m x n alpha from its columns (small problems only)."""
    n = dual.t_ref.size if dual.collapsed is None else dual.collapsed[0].neg_index.size
    return np.column_stack([dual.column(j) for j in range(n)])
