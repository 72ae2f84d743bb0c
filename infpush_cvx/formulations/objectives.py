"""Primal objectives evaluated in NumPy, without forming the m x n pair matrix.

All bipartite losses come from one quantity, the (weighted) hinge sum of each negative::

    H_j(w) = sum_i p_i max(0, 1 - (s_i - t_j)),   s = Xp w,  t = Xn w

computed in O((m + n) log m) by sorting s and using prefix sums. With the sample weights p (of the
positives, sum M) and q (of the negatives, sum N), all ones and M = m, N = n for unweighted data:

    Infinite Push   loss_mean = max_j H_j / M            (Agarwal 2011, eq. 3.6)
    RankSVM         loss_mean = sum_j q_j H_j / (M N)    (Agarwal 2011, eq. 4.18)

The Infinite Push loss is a maximum over negatives, so q does not enter it: a repeated negative
counts once. With integer weights both equal the unweighted losses on the data with repeated rows.

and the Rank2Plan LP objective is ``sum_k s_k max(0, g_k - (X_j - X_i) beta) + lam ||beta||_1``.
"""

from __future__ import annotations

import numpy as np

from . import scaling as _scaling
from .._validation import check_choice
from ..data.containers import BipartiteData, PairData


def negative_hinge_sums(s: np.ndarray, t: np.ndarray, wp=None) -> np.ndarray:
    """``H_j = sum_i wp_i max(0, 1 - s_i + t_j)`` for every negative j, in O((m + n) log m).

    Entry i contributes to H_j exactly when ``s_i < 1 + t_j``; with s sorted ascending those i
    form a prefix of length k_j, so ``H_j = (wp_1 + ... + wp_k) (1 + t_j) - (wp_1 s_1 + ... +
    wp_k s_k)`` (sorted order, k = k_j). ``wp`` defaults to ones; it is trusted (validated by
    :class:`BipartiteData`).
    """
    s = np.asarray(s, dtype=np.float64)
    shifted = 1.0 + np.asarray(t, dtype=np.float64)
    if wp is None:  # unit weights: their prefix sums are the counts 0, 1, ..., m (exact)
        s_sorted = np.sort(s)
        weight_prefix, score_prefix = np.arange(s.size + 1.0), np.cumsum(s_sorted)
    else:
        order = np.argsort(s)
        s_sorted, w_sorted = s[order], np.asarray(wp, dtype=np.float64)[order]
        weight_prefix = np.concatenate([[0.0], np.cumsum(w_sorted)])
        score_prefix = np.cumsum(w_sorted * s_sorted)
    score_prefix = np.concatenate([[0.0], score_prefix])
    k = np.searchsorted(s_sorted, shifted, side="left")
    # Clipped at 0: the two prefix sums can cancel to a tiny negative by rounding.
    return np.maximum(weight_prefix[k] * shifted - score_prefix[k], 0.0)


def mean_loss(H: np.ndarray, loss: str, M: float, q: np.ndarray, N: float) -> float:
    """The paper-scaling loss from the hinge sums ``H`` (:func:`negative_hinge_sums` with the
    positives' weights, sum ``M``): ``max_j H_j / M`` (Infinite Push) or ``sum_j q_j H_j / (M N)``
    (RankSVM; ``q`` the negatives' weights, sum ``N``)."""
    if loss == "infinite_push":
        return float(H.max()) / M
    return float(q @ H) / (M * N)


def penalty_value(w: np.ndarray, penalty: str, scaling: str) -> float:
    """pen(w) in the given scaling: ||w||^2/2 or ||w||^2 (l2), ||w||_1 (l1), i.e. the seed
    scaling's ``||w||^2`` or ``||w||_1`` times
    :func:`~infpush_cvx.formulations.scaling.penalty_coefficient`."""
    c = _scaling.penalty_coefficient(penalty, scaling)
    return c * float(np.abs(w).sum() if penalty == "l1" else w @ w)


def penalty_term(w: np.ndarray, lam: float, penalty: str, scaling: str) -> float:
    """``lam pen(w)`` (:func:`penalty_value` times lambda), finite whenever it is in float range.

    ``w @ w`` overflows for ``|w|`` near 1e155, long before ``lam ||w||^2`` does at a small
    lambda (``lam = 1e-300`` and ``|w| = 2e296``: ``lam ||w||^2 / 2 = 2e292``); then the l2 term
    is computed as ``c (sqrt(lam) a)^2 ||w / a||^2`` with ``a = max |w_k|``.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        term = lam * penalty_value(w, penalty, scaling)
    if np.isfinite(term) or penalty == "l1" or not np.all(np.isfinite(w)):
        return float(term)
    a = float(np.abs(w).max())
    u = w / a
    with np.errstate(over="ignore"):
        return float(_scaling.penalty_coefficient(penalty, scaling) * (np.sqrt(lam) * a) ** 2
                     * float(u @ u))


def bipartite_objective(data: BipartiteData, w, lam: float, *, loss: str = "infinite_push",
                        penalty: str = "l2", scaling: str = "paper") -> float:
    """The primal objective of the Infinite Push or RankSVM at ``w``, in the requested scaling.

    Uses the data's sample weights (module docstring): the loss sum is ``max_j H_j`` or
    ``sum_j q_j H_j``, divided in paper scaling by ``M`` or ``M N`` (m or m n when unweighted);
    weighted losses are computed with the weights divided by their sums.
    """
    check_choice(loss, "loss", _scaling.LOSSES)
    check_choice(scaling, "scaling", _scaling.SCALINGS)
    w = np.asarray(w, dtype=np.float64).ravel()
    if w.shape[0] != data.d:
        raise ValueError(f"w must have length d={data.d}, got {w.shape[0]}")
    s, t = data.Xp @ w, data.Xn @ w
    N = _scaling.loss_normaliser(loss, data.wp_sum, data.wn_sum)
    if data.weighted:
        # With weights normalised to sum 1 first, the mean loss never overflows, whatever the
        # weights' scale (only their ratios matter in paper scaling).
        p = None if data.wp is None else data.wp / data.wp_sum
        mean_H = negative_hinge_sums(s, t, p) / (data.m if data.wp is None else 1.0)
        if loss == "infinite_push":  # the negatives' weights do not enter a maximum over them
            mean_loss = mean_H.max()
        else:
            mean_loss = mean_H.mean() if data.wn is None else (data.wn / data.wn_sum) @ mean_H
        with np.errstate(over="ignore"):  # a seed-scaling loss past the float range is inf
            loss_value = mean_loss if scaling == "paper" else mean_loss * N
    else:
        H = negative_hinge_sums(s, t)
        loss_sum = H.max() if loss == "infinite_push" else H.sum()
        loss_value = loss_sum / N if scaling == "paper" else loss_sum
    return float(penalty_term(w, lam, penalty, scaling) + loss_value)


def rank2plan_objective(data: PairData, beta, lam: float) -> float:
    """``sum_k weight_k max(0, gap_k - (X_j - X_i) beta) + lam ||beta||_1``
    ([Rank2PlanNote], eq. 1; docs/mathematics.md, section 4.1)."""
    beta = np.asarray(beta, dtype=np.float64).ravel()
    if beta.shape[0] != data.n_features:
        raise ValueError(f"beta must have length {data.n_features}, got {beta.shape[0]}")
    r = np.asarray(data.X @ beta).ravel()
    slack = np.maximum(data.margin - (r[data.j] - r[data.i]), 0.0)
    return float(data.weight @ slack + lam * np.abs(beta).sum())
