"""Group caps of the l1,inf projection by sorting (Quattoni, Carreras, Collins & Darrell,
ICML 2009).

The reference method: clear, O(N log N), written with NumPy. Input: a float64 array ``A >= 0``
whose columns are the groups, with ``sum_g max_i A_ig > radius > 0``. Output: the caps ``mu``
and the shared threshold ``theta``. The semismooth Newton kernel (:mod:`._l1inf_ssn`) falls back
to this method when it gives up.

With each column sorted decreasingly, ``a_1 >= ... >= a_m``, and ``S_k = a_1 + ... + a_k``, the cap
of group g as a function of the shared threshold theta (the l1 mass removed from every group that
keeps a positive cap) is piecewise linear:

    mu_g(theta) = (S_k - theta) / k   for theta_k <= theta <= theta_{k+1},  theta_k = S_k - k a_k,
    mu_g(theta) = 0                   for theta >= S_m  (the whole group is removed).

``R(theta) = sum_g mu_g(theta)`` decreases from the l1,inf norm at theta = 0 to 0; the projection
uses the theta where ``R(theta) = radius``. Quattoni et al. find it by merging the breakpoints of
all groups in increasing order while keeping ``R = A - theta B`` up to date
(``A = sum S_k / k``, ``B = sum 1 / k`` over groups with a positive cap).
"""

from __future__ import annotations

import numpy as np


def caps_sort(A: np.ndarray, radius: float) -> tuple[np.ndarray, float]:
    """Caps ``mu_g`` (float64, one per column of ``A``) of the l1,inf projection of radius
    ``radius``, and the threshold theta they share."""
    m, n = A.shape
    desc = -np.sort(-A, axis=0)                 # each column sorted decreasingly
    S = np.cumsum(desc, axis=0)                  # S[k-1, g] = S_k of group g
    k = np.arange(1, m + 1, dtype=np.float64)[:, None]
    breaks = S - k * desc                        # theta_k; column-wise nondecreasing, theta_1 = 0

    # Events, in order of theta: group g goes from k-1 to k capped entries at theta_k (k >= 2),
    # and drops out at S_m. Each event changes the slope B and intercept A of R(theta).
    inv_k = 1.0 / k
    S_over_k = S * inv_k
    ev_theta = np.concatenate([breaks[1:].ravel(), S[-1]])
    ev_dB = np.concatenate([np.broadcast_to(inv_k[1:] - inv_k[:-1], (m - 1, n)).ravel(),
                            np.full(n, -1.0 / m)])
    ev_dA = np.concatenate([(S_over_k[1:] - S_over_k[:-1]).ravel(), -S_over_k[-1]])
    order = np.argsort(ev_theta, kind="stable")
    ev_theta, ev_dB, ev_dA = ev_theta[order], ev_dB[order], ev_dA[order]

    # Slope/intercept in force just before each event (at theta = 0: every group has k = 1).
    B_before = n + np.concatenate([[0.0], np.cumsum(ev_dB)[:-1]])
    A_before = S[0].sum() + np.concatenate([[0.0], np.cumsum(ev_dA)[:-1]])
    R_at = A_before - ev_theta * B_before
    e = int(np.argmax(R_at <= radius))          # first breakpoint where R has dropped to radius
    lo = ev_theta[e - 1] if e > 0 else 0.0
    theta = min(max((A_before[e] - radius) / B_before[e], lo), ev_theta[e])

    mu, theta = _refine(S, breaks, theta, radius)
    return match_radius(mu, desc[0], radius), theta


def match_radius(mu: np.ndarray, group_max: np.ndarray, radius: float) -> np.ndarray:
    """Rescale the caps so that they sum to the radius, within float rounding.

    A cap is ``(S_k - theta) / k``; when the radius is tiny next to the group sums, S_k and theta
    nearly cancel and the caps carry a relative error of about ``eps * S_k / radius``. The
    projection's caps sum exactly to the radius, so a rescale by ``radius / sum(mu)`` (a
    change no larger than that error) restores feasibility. Caps stay at most the group max.
    """
    total = mu.sum()
    if total > 0 and total != radius:
        mu = np.minimum(mu * (radius / total), group_max)
        total = mu.sum()
        if total > radius:                      # one more rounding step down if needed
            mu = mu * (radius / total)
            mu = np.where(mu.sum() > radius, np.nextafter(mu, 0), mu)
    return mu


def _refine(S: np.ndarray, breaks: np.ndarray, theta: float,
            radius: float) -> tuple[np.ndarray, float]:
    """Recompute theta exactly from the active pieces at ``theta``, then the caps: (caps, theta).

    The running sums of the sweep accumulate rounding error; the active piece of every group
    (its k, or "dropped") is all that theta determines, and it fixes theta by one linear solve:
    ``sum_active (S_k - theta) / k = radius``.
    """
    kk = np.sum(breaks <= theta, axis=0)         # pieces in force (>= 1 since theta_1 = 0)
    total = S[-1]
    active = total > theta
    Sk = S[kk - 1, np.arange(S.shape[1])]
    inv = np.where(active, 1.0 / kk, 0.0)
    denom = inv.sum()
    if denom > 0:
        theta = (np.sum(Sk * inv) - radius) / denom
    mu = np.where(active, (Sk - theta) / np.maximum(kk, 1), 0.0)
    return np.maximum(mu, 0.0), float(theta)
