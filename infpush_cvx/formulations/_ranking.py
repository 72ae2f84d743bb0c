"""Average precision, the measure behind SVMMAP's loss ``Delta(y) = 1 - AP(y)`` ([Yue2007]).

Written here, below the evaluation layer, so that the SVMMAP formulation and
:func:`infpush_cvx.evaluation.metrics.average_precision` (which validates its input and calls
this) share one formula.
"""

from __future__ import annotations

import numpy as np


def average_precision(positive: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray) -> float:
    """``AP = sum_i w_i W+(s_i) / (W+(s_i) + W-(s_i)) / sum_i w_i`` over positives i, with
    ``W+(s)``, ``W-(s)`` the weights of the positives and negatives scored ``>= s`` (a tied group
    is entered together, as in ``sklearn.metrics.average_precision_score``).

    ``positive``: a boolean mask; ``scores`` and ``sample_weight`` (finite, nonnegative): one
    per item, trusted. With unit weights and no ties this is Agarwal (2011, section 6)'s
    ``(1/m) sum_i #{positives k : r(k) <= r(i)} / r(i)``. ValueError naming sample_weight when
    every positive has weight 0.
    """
    wp, sp = _sorted_with_weights(scores[positive], sample_weight[positive])
    wn, sn = _sorted_with_weights(scores[~positive], sample_weight[~positive])
    total = wp.sum()
    if not total > 0:
        raise ValueError("sample_weight: every positive has weight 0, so AP is undefined")
    # weight scored >= sp[k]: suffix sums from the first item with that score
    pos_at_or_above = _suffix_sums(wp)[np.searchsorted(sp, sp, side="left")]
    neg_at_or_above = _suffix_sums(wn)[np.searchsorted(sn, sp, side="left")]
    counted = wp > 0  # (a positive of weight 0 may have nothing of weight above it)
    precision = pos_at_or_above[counted] / (pos_at_or_above[counted] + neg_at_or_above[counted])
    return float(wp[counted] @ precision / total)


def _sorted_with_weights(s, w):
    """``(w, s)`` in increasing order of ``s``."""
    order = np.argsort(s, kind="stable")
    return w[order], s[order]


def _suffix_sums(w):
    """``out[k] = sum(w[k:])``, length ``len(w) + 1`` (the last entry 0)."""
    return np.concatenate([np.cumsum(w[::-1])[::-1], [0.0]])
