"""Ranking metrics for bipartite data, scikit-learn style ``metric(y_true, y_score)``.

Definitions (Agarwal, "The Infinite Push", SDM 2011, section 6), for m positives and n negatives:

- AUC: fraction of (positive, negative) pairs ordered correctly, ties counting 1/2.
- positives at the top: #positives scored strictly above the highest-scoring negative.
- ``R_inf = max_j (1/m) #{i : s_i < t_j}``: the largest fraction of positives ranked strictly below
  one negative (Agarwal eq. 3.1).
- overall rank of item i: ``r(i) = 1 + #{items scored strictly higher}``.
- average precision: ``AP = (1/m) sum_i #{positives k : r(k) <= r(i)} / r(i)``, over positives i
  (without ties; see the tie rule).
- DCG: ``sum_i 1 / log2(r(i) + 1)`` over positives i (without ties; see the tie rule).
- prec@k: fraction of positives among the k top-scored items.

Tie rule. ``r(i)`` above is the *optimistic* (competition, "min") rank: tied items share the best
rank of their group (:func:`ranks`). Plugging it into AP and DCG would reward ties (a constant
scorer would get DCG = m and AP = m), so with ties those two follow scikit-learn instead:

- AUC counts a tied (positive, negative) pair as 1/2;
- positives at the top and ``R_inf`` use strict inequalities (a positive tied with the top
  negative is not "at the top", nor "below" it);
- AP enters a tied group together, like ``sklearn.metrics.average_precision_score``: precision of
  positive i is ``#{positives scored >= s_i} / #{items scored >= s_i}`` (a constant scorer gets
  the base rate m/N);
- DCG and prec@k take the expected value when ties are broken uniformly at random (DCG: like
  ``sklearn.metrics.dcg_score``, each tied group spreads its positives evenly over the positions
  it occupies; prec@k: a tie straddling position k counts fractionally).

Without ties every rule reduces to the formulas above (and AP to scikit-learn's).

Labels: ``y_true`` follows the binary-label contract of :mod:`infpush_cvx.data.labels`: two classes,
the positive one the greater label ({0, 1}, {-1, +1}, {1, 2}, booleans) or ``pos_label``
(required for string labels).

Scores are compared exactly in their own dtype: integer scores are never rounded through float64
(``2**60 + 1`` ranks above ``2**60``). Only inputs that are not already a numeric array (objects)
are converted to float64. Scores must be finite.

Everything is vectorised and costs O(N log N) for N = m + n items (one sort).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_int, check_vector
from ..data.labels import binary_labels
from ..formulations import _ranking

__all__ = ["auc", "positives_at_top", "r_inf", "average_precision", "dcg", "precision_at_k",
           "roc_curve_points", "ranks", "ranking_report"]


def _check_scores(y_score, length: int | None = None) -> np.ndarray:
    """``y_score`` as a finite 1-D array, kept in its own dtype when it is numeric.

    Sorting and comparing in the scores' own dtype ranks them exactly; a cast of int64 to
    float64 would merge distinct integers above 2**53 into ties.
    """
    s = np.asarray(y_score)
    dtype = s.dtype if s.dtype.kind in "biuf" else np.float64
    return check_vector(s, "y_score", length=length, dtype=dtype)


def _check_labels_scores(y_true, y_score, pos_label=None, *, require_both: bool = True):
    """Validate ``(y_true, y_score)`` and return (boolean positives mask, scores)."""
    pos = binary_labels(y_true, "y_true", pos_label=pos_label,
                        require_both=require_both).positive
    return pos, _check_scores(y_score, length=pos.shape[0])


def ranks(y_score) -> np.ndarray:
    """Competition ranks ``r(i) = 1 + #{items scored strictly higher}`` (ties share the best)."""
    s = _check_scores(y_score)
    # #{strictly higher than s_i} = N - #{<= s_i}: one sort, one binary search.
    srt = np.sort(s)
    return s.shape[0] - np.searchsorted(srt, s, side="right") + 1


def auc(y_true, y_score, *, pos_label=None) -> float:
    """Area under the ROC curve: ``(1/(mn)) sum_ij [1(s_i > t_j) + 1/2 1(s_i = t_j)]``.

    Counted by binary search of the sorted positives in the sorted negatives, O(N log N).
    """
    pos, s = _check_labels_scores(y_true, y_score, pos_label)
    sp, sn = np.sort(s[pos]), np.sort(s[~pos])
    # sorted queries into sorted negatives: cache-friendly binary searches
    below = np.searchsorted(sn, sp, side="left")
    at_or_below = np.searchsorted(sn, sp, side="right")
    correct = below.sum() + 0.5 * (at_or_below - below).sum()
    return float(correct / (sp.size * sn.size))


def positives_at_top(y_true, y_score, *, pos_label=None) -> int:
    """Number of positives scored strictly above the highest-scoring negative (Agarwal 2011)."""
    pos, s = _check_labels_scores(y_true, y_score, pos_label)
    return int(np.count_nonzero(s[pos] > s[~pos].max()))


def r_inf(y_true, y_score, *, pos_label=None) -> float:
    """``R_inf = max_j (1/m) #{i : s_i < t_j}`` (Agarwal 2011, eq. 3.1); ties are not errors.

    The maximum is attained at the highest-scoring negative.
    """
    pos, s = _check_labels_scores(y_true, y_score, pos_label)
    sp = s[pos]
    return float(np.count_nonzero(sp < s[~pos].max()) / sp.shape[0])


def average_precision(y_true, y_score, *, pos_label=None, sample_weight=None) -> float:
    """``AP = (1/m) sum_i #{positives scored >= s_i} / #{items scored >= s_i}`` over positives i.

    Equal to ``(1/m) sum_i #{positives k : r(k) <= r(i)} / r(i)`` (Agarwal 2011, section 6)
    without ties; a tied group is entered together (see the module's tie rule).

    ``sample_weight`` (one finite nonnegative weight per item): every count becomes the sum of
    the items' weights, ``AP = sum_i w_i W+(s_i) / (W+(s_i) + W-(s_i)) / sum_i w_i`` over
    positives i, with ``W+(s)``, ``W-(s)`` the weights of the positives and negatives scored
    ``>= s``: integer weights give the AP of the items repeated that many times (as
    ``sklearn.metrics.average_precision_score`` does). ValueError naming sample_weight when
    every positive has weight 0.
    """
    pos, s = _check_labels_scores(y_true, y_score, pos_label)
    w = np.ones(s.shape[0]) if sample_weight is None else check_vector(
        sample_weight, "sample_weight", length=s.shape[0], nonnegative=True)
    return _ranking.average_precision(pos, s, w)


def dcg(y_true, y_score, *, pos_label=None) -> float:
    """Discounted cumulative gain ``sum_i 1 / log2(r(i) + 1)`` over positives (Agarwal 2011).

    With ties, the expected value under uniformly random tie-breaking: a group of g tied items
    with p positives at positions a+1..a+g adds ``(p/g) sum_{r=a+1}^{a+g} 1/log2(r + 1)``.
    """
    pos, s = _check_labels_scores(y_true, y_score, pos_label)
    every, sp = np.sort(s), np.sort(s[pos])
    # per positive: a = #items scored strictly higher, g = #items tied with it (itself included);
    # its share of the tied group's positions a+1..a+g is (D(a+g) - D(a)) / g
    lo, hi = np.searchsorted(every, sp, side="left"), np.searchsorted(every, sp, side="right")
    above, tied = s.shape[0] - hi, hi - lo
    disc = np.r_[0.0, np.cumsum(1.0 / np.log2(np.arange(2, s.shape[0] + 2)))]
    return float(np.sum((disc[above + tied] - disc[above]) / tied))


def precision_at_k(y_true, y_score, k, *, pos_label=None) -> float:
    """Fraction of positives among the k top-scored items.

    A tie straddling position k counts fractionally (expected value under random tie-breaking):
    with ``a`` items strictly above the k-th score (``p_a`` of them positive) and a tied group of
    ``g`` items (``p_g`` positive), ``prec@k = (p_a + (k - a) p_g / g) / k``.
    Only requires ``y_true`` to be binary (a single class is allowed).
    """
    pos, s = _check_labels_scores(y_true, y_score, pos_label, require_both=False)
    k, N = check_int(k, "k"), s.shape[0]
    if not 1 <= k <= N:
        raise ValueError(f"k must be in [1, {N}] (the number of items), got {k}")
    kth = np.partition(s, N - k)[N - k]  # the k-th largest score, O(N)
    above, tied = s > kth, s == kth
    p_above, p_tied = np.count_nonzero(pos & above), np.count_nonzero(pos & tied)
    return float((p_above + (k - np.count_nonzero(above)) * p_tied / np.count_nonzero(tied)) / k)


def roc_curve_points(y_true, y_score, *, pos_label=None):
    """ROC curve ``(fpr, tpr, thresholds)`` for thresholds from +inf down to the lowest score.

    One point per distinct score (tied items enter together, giving the diagonal segments whose
    area is the 1/2 tie credit of :func:`auc`); starts at (0, 0) with threshold ``+inf``.
    ``np.trapezoid(tpr, fpr)`` equals :func:`auc`. The thresholds are float64 (to hold
    ``+inf``), so integer scores beyond 2**53 may print rounded there; the curve itself is exact.
    """
    pos, s = _check_labels_scores(y_true, y_score, pos_label)
    # from the highest score down (``-s`` would overflow for the smallest signed integer and
    # wrap around for unsigned ones)
    order = np.argsort(s, kind="stable")[::-1]
    s_sorted, p_sorted = s[order], pos[order]
    # last index of each group of equal scores
    ends = np.flatnonzero(np.r_[s_sorted[1:] != s_sorted[:-1], True])
    tp = np.cumsum(p_sorted)[ends]
    fp = (ends + 1) - tp
    return np.r_[0.0, fp / fp[-1]], np.r_[0.0, tp / tp[-1]], np.r_[np.inf, s_sorted[ends]]


def ranking_report(y_true, y_score, *, pos_label=None) -> dict:
    """The four measures of Agarwal (2011, section 6) as a dict: auc, pos_at_top, ap, dcg."""
    return {name: metric(y_true, y_score, pos_label=pos_label) for name, metric in
            (("auc", auc), ("pos_at_top", positives_at_top), ("ap", average_precision),
             ("dcg", dcg))}
