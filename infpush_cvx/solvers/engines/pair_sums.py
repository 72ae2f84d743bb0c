"""Sums over positive-negative pairs by sorting the scores: no m x n array, at any size.

Every quantity the working-set method needs about the m n pairs depends on a pair ``(i, j)``
only through a comparison of its margin ``s_i - t_j`` with 1, i.e. of ``s_i`` with the
threshold ``v_j = 1 + t_j``. With the positive scores sorted once, the positives on one side of a
threshold form a prefix of that order, so each pair sum becomes a prefix sum: O((m + n) log m)
for all negatives together. This is how SVMperf's separation oracle (Joachims, ICML 2005) and
Lee & Lin's order statistics ("Large-scale linear RankSVM", Neural Computation 2014) evaluate
the pairwise hinge loss.

One comparison is used everywhere, ``s_i < v_j`` ("pair (i, j) is below the margin"), so the
sets it defines are the same in every sum (a second, rearranged comparison such as
``t_j > s_i - 1`` could round differently on a pair at the margin and break the certificate).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class SortedScores:
    """Positive scores ``s`` sorted ascending, with the prefix sums of their weights ``p``."""

    def __init__(self, s: np.ndarray, p: np.ndarray):
        self.raw, self.m = s, s.size
        self.order = np.argsort(s, kind="stable")
        self.s = s[self.order]
        self.cum_p = np.concatenate([[0.0], np.cumsum(p[self.order])])
        self.p_sorted = p[self.order]

    def below(self, v: np.ndarray) -> np.ndarray:
        """Number of positives with ``s_i < v`` for every threshold in ``v`` (a prefix length)."""
        return np.searchsorted(self.s, v, side="left")


def near_margin_pairs(ss: SortedScores, v: np.ndarray, cols: np.ndarray, *, width: float,
                      cap: int, tie_cap: int | None = None):
    """Pairs ``(i, j)``, ``j`` in ``cols``, with ``|s_i - v_j| <= delta``, the closest first.

    ``delta <= width`` is the largest with at most ``cap`` pairs (bisection on the count, which
    costs two searches per negative). Pairs exactly at the margin (ties, the rule on binary
    data with repeated score values) are kept even when they alone exceed ``cap``, up to
    ``tie_cap`` of them (default ``cap``). Returns ``(i, j)`` as index arrays, sorted by j.
    """
    tie_cap = cap if tie_cap is None else max(tie_cap, cap)
    vc = v[cols]

    def ranges(delta):
        return (np.searchsorted(ss.s, vc - delta, side="left"),
                np.searchsorted(ss.s, vc + delta, side="right"))

    lo, hi = ranges(width)
    if int((hi - lo).sum()) > cap:
        a, b = 0.0, width
        for _ in range(50):
            mid = 0.5 * (a + b)
            lo_m, hi_m = ranges(mid)
            a, b = (a, mid) if int((hi_m - lo_m).sum()) > cap else (mid, b)
            if b - a <= 1e-3 * b:
                break
        lo, hi = ranges(a)
    cnt = hi - lo
    total = int(cnt.sum())
    if total == 0:
        return np.zeros(0, np.intp), np.zeros(0, np.intp)
    j = np.repeat(cols, cnt)
    pos = np.arange(total) + np.repeat(lo - (np.cumsum(cnt) - cnt), cnt)
    # (ties at the margin beyond the cap: the first tie_cap are kept)
    return ss.order[pos[:tie_cap]], j[:tie_cap]


def prefix_row_sums(ss: SortedScores, X, k: np.ndarray) -> np.ndarray:
    """``sum over the first k[r] positives in sorted order of p_i x_i`` for every r (len(k) x d).

    One pass over X: the sorted positions are cut into segments at the distinct prefix lengths,
    each segment is summed once (a sparse selection matrix times X), and the segment sums are
    accumulated.
    """
    uk, inv = np.unique(k, return_inverse=True)
    seg = np.searchsorted(uk, np.arange(ss.m), side="right")  # segment of each sorted position
    S = sp.csr_matrix((ss.p_sorted, (seg, ss.order)), shape=(uk.size + 1, ss.m))
    seg_sums = S @ X
    seg_sums = seg_sums.toarray() if sp.issparse(seg_sums) else np.asarray(seg_sums)
    return np.cumsum(seg_sums[:uk.size], axis=0)[inv]


def weight_above(t: np.ndarray, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``sum of q_j over negatives with s_i < 1 + t_j``, for every positive i.

    Negatives sorted by ``v_j = 1 + t_j``; for each ``s_i`` the qualifying ``v_j`` form a suffix.
    """
    v = 1.0 + t
    order = np.argsort(v, kind="stable")
    suffix = np.concatenate([np.cumsum(q[order][::-1])[::-1], [0.0]])
    return suffix[np.searchsorted(v[order], s, side="right")]
