"""The squared hinge's sums over all positive-negative pairs from the sorted scores.

With ``x_ij = 1 - s_i + t_j = v_j - s_i`` (``v_j = 1 + t_j``) the pair (i, j) is active (its
hinge is positive) exactly when ``s_i < v_j``: one comparison, the one of
:mod:`infpush_cvx.solvers.engines.pair_sums`, classifies every pair in every sum below. With the
positive scores sorted, the positives active with a negative j are a prefix of their order; with
the thresholds ``v`` sorted, the negatives active with a positive i are a suffix of theirs. So
each sum over the m n pairs is a prefix sum: O((m + n) log(m + n)) for a sort, O(m + n) per sum
afterwards, no m x n array (Lee & Lin, "Large-scale linear RankSVM", Neural Computation 2014,
section 3, by order statistics).
"""

from __future__ import annotations

import numpy as np

from infpush_cvx.solvers.engines.pair_sums import SortedScores


class ActivePairs:
    """The active pairs ``s_i < 1 + t_j`` of scores (s, t) with weights p, q, and their sums::

        col0_j = sum_{i active} p_i          col1_j = sum_{i active} p_i x_ij
        row0_i = sum_{j active} q_j          row1_i = sum_{j active} q_j x_ij
        squares = sum_j q_j sum_{i active} p_i x_ij^2
    """

    def __init__(self, s: np.ndarray, t: np.ndarray, p: np.ndarray, q: np.ndarray):
        self.s, self.v, self.p, self.q = s, 1.0 + t, p, q
        self.positives = SortedScores(s, p)
        self.k = self.positives.below(self.v)  # col j: the first k_j positives in sorted order
        self.v_order = np.argsort(self.v, kind="stable")
        # row i: the negatives after position r_i in the order of v (v_j > s_i)
        self.r = np.searchsorted(self.v[self.v_order], s, side="right")
        self.col0, self.row0 = self.over_positives(None), self.over_negatives(None)
        ps = self.over_positives(s)
        self.col1 = self.v * self.col0 - ps
        self.row1 = self.over_negatives(self.v) - s * self.row0
        # sum_{i active} p_i (v_j - s_i)^2, expanded; clipped: the terms can cancel to below 0
        per_negative = self.v * (self.v * self.col0 - 2.0 * ps) + self.over_positives(s * s)
        self.squares = float(q @ np.maximum(per_negative, 0.0))

    def over_positives(self, y: np.ndarray | None) -> np.ndarray:
        """``sum_{i: s_i < v_j} p_i y_i`` for every negative j (y None: ones)."""
        if y is None:
            return self.positives.cum_p[self.k]
        weighted = self.positives.p_sorted * y[self.positives.order]
        return np.concatenate([[0.0], np.cumsum(weighted)])[self.k]

    def over_negatives(self, y: np.ndarray | None) -> np.ndarray:
        """``sum_{j: v_j > s_i} q_j y_j`` for every positive i (y None: ones)."""
        weighted = self.q[self.v_order] if y is None else (self.q * y)[self.v_order]
        suffix = np.concatenate([np.cumsum(weighted[::-1])[::-1], [0.0]])
        return suffix[self.r]

    def curvature(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(row, col)`` with ``sum_{active} p_i q_j (a_i - b_j) (e_i - e_j)`` split by class:
        ``row_i = sum_{j active} q_j (a_i - b_j)``, ``col_j = sum_{i active} p_i (a_i - b_j)``.
        With ``a = Xp u``, ``b = Xn u`` this is the pair sum of the Hessian-vector product
        ``sum_{active} p_i q_j z_ij z_ij^T u = Xp^T (p row) - Xn^T (q col)``."""
        return a * self.row0 - self.over_negatives(b), self.over_positives(a) - b * self.col0
