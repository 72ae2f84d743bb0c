"""Primal objectives evaluated in NumPy, without forming the m x n pair matrix.

All bipartite losses come from one quantity, the hinge sum of each negative::

    H_j(w) = sum_i max(0, 1 - (s_i - t_j)),   s = Xp w,  t = Xn w

computed in O((m + n) log m) by sorting s and using prefix sums. Then (formulations.md 1-3)

    Infinite Push   loss_mean = max_j H_j / m          (Agarwal 2011, eq. 3.6)
    RankSVM         loss_mean = sum_j H_j / (m n)      (Agarwal 2011, eq. 4.18)

and the Rank2Plan LP objective is ``sum_k s_k max(0, g_k - (X_j - X_i) beta) + lam ||beta||_1``.
"""

from __future__ import annotations

import numpy as np

from . import scaling as _scaling
from ._validation import check_choice
from .data import BipartiteData, PairData


def negative_hinge_sums(s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``H_j = sum_i max(0, 1 - s_i + t_j)`` for every negative j, in O((m + n) log m).

    Entry i contributes to H_j exactly when ``s_i < 1 + t_j``; with s sorted ascending those i
    form a prefix, so ``H_j = k_j (1 + t_j) - (s_1 + ... + s_{k_j})``.
    """
    s_sorted = np.sort(np.asarray(s, dtype=np.float64))
    prefix = np.concatenate([[0.0], np.cumsum(s_sorted)])
    shifted = 1.0 + np.asarray(t, dtype=np.float64)
    k = np.searchsorted(s_sorted, shifted, side="left")
    return np.maximum(k * shifted - prefix[k], 0.0)


def penalty_value(w: np.ndarray, penalty: str, scaling: str) -> float:
    """pen(w) in the given scaling: ||w||^2/2 or ||w||^2 (l2), ||w||_1 (l1)."""
    check_choice(penalty, "penalty", _scaling.PENALTIES)
    check_choice(scaling, "scaling", _scaling.SCALINGS)
    if penalty == "l1":
        return float(np.abs(w).sum())
    sq = float(w @ w)
    return 0.5 * sq if scaling == "paper" else sq


def bipartite_objective(data: BipartiteData, w, lam: float, *, loss: str = "infinite_push",
                        penalty: str = "l2", scaling: str = "paper") -> float:
    """The primal objective of the Infinite Push or RankSVM at ``w``, in the requested scaling."""
    check_choice(loss, "loss", _scaling.LOSSES)
    w = np.asarray(w, dtype=np.float64).ravel()
    if w.shape[0] != data.d:
        raise ValueError(f"w must have length d={data.d}, got {w.shape[0]}")
    H = negative_hinge_sums(data.Xp @ w, data.Xn @ w)
    loss_sum = H.max() if loss == "infinite_push" else H.sum()
    N = _scaling.loss_normaliser(loss, data.m, data.n)
    loss_value = loss_sum / N if scaling == "paper" else loss_sum
    return float(lam * penalty_value(w, penalty, scaling) + loss_value)


def rank2plan_objective(data: PairData, beta, lam: float) -> float:
    """``sum_k weight_k max(0, gap_k - (X_j - X_i) beta) + lam ||beta||_1`` (seed 002)."""
    beta = np.asarray(beta, dtype=np.float64).ravel()
    if beta.shape[0] != data.n_features:
        raise ValueError(f"beta must have length {data.n_features}, got {beta.shape[0]}")
    r = np.asarray(data.X @ beta).ravel()
    slack = np.maximum(data.gap - (r[data.j] - r[data.i]), 0.0)
    return float(data.weight @ slack + lam * np.abs(beta).sum())
