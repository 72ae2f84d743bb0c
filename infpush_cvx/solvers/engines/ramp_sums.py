"""Ramp sums over all positive-negative pairs by sorting: the smoothed hinge's sums, O(N log N).

Used by the Newton solver of RankSVM (:mod:`._ranksvm_newton`). The pairs on either side of the
smoothing zone around the margin are prefixes of the sorted scores, and inside the zone the ramp
is affine in the score, so every sum is a difference of prefix sums of the weights and of the
weighted scores.
"""

from __future__ import annotations

import numpy as np

from infpush_cvx.solvers.engines.pair_gram import search_in_order


class RampSums:
    """The ramp sums of all pairs at scores (s, t) for a smoothing mu, weights p and q.

    With ``x_ij = 1 - s_i + t_j``, ``c = mu/2`` and the ramp ``a(x) = clip((x + c)/mu, 0, 1)``
    (the derivative of the smoothed hinge, :mod:`._ranksvm_newton`)::

        col_j = sum_i p_i a(x_ij)     col_h_j = sum_i p_i h_mu(x_ij)
        col_zone_j = sum_{|x_ij|<c} p_i
        row_i = sum_j q_j a(x_ij)     row_zone_i = sum_{|x_ij|<c} q_j

    each by prefix sums over the sorted scores, O((m + n) log(m + n)) in all; when the zone
    holds at most ``_DIRECT_ZONE (m + n)`` pairs, its part of ``col``, ``col_h`` and ``row`` is
    summed pair by pair instead (:meth:`_zone_pair_by_pair`), without the 1/mu magnification
    of the prefix sums' round-off (``amplification``: 1, else ``1 + 1/mu``).
    """

    def __init__(self, s, t, p, q, mu):
        self.mu, c = mu, 0.5 * mu
        u, v = s, 1.0 + t
        # per negative j, sums over positives (u sorted)
        ou = np.argsort(u, kind="stable")
        us, pu = u[ou], p[ou]
        P0, P1, P2 = (np.concatenate([[0.0], np.cumsum(x)]) for x in (pu, pu * us, pu * us * us))
        ov = np.argsort(v, kind="stable")
        a = search_in_order(us, v - c, ov, "right")  # full: u_i <= v_j - c
        b = search_in_order(us, v + c, ov, "left")   # zone: v_j - c < u_i < v_j + c
        vc = v + c
        z0, z1, z2 = P0[b] - P0[a], P1[b] - P1[a], P2[b] - P2[a]
        self.col = P0[a] + (vc * z0 - z1) / mu  # sum_i p_i a(x_ij)
        # sum_i p_i h_mu(x_ij): full part x + c - mu/2 = x; zone (x + c)^2 / (2 mu)
        zone_sq = np.maximum(vc * vc * z0 - 2.0 * vc * z1 + z2, 0.0)
        self.col_h = v * P0[a] - P1[a] + zone_sq / (2.0 * mu)
        self.col_zone = z0
        # per positive i, sums over negatives (v sorted)
        vs, qv = v[ov], q[ov]
        Q0, Q1 = (np.concatenate([[0.0], np.cumsum(x)]) for x in (qv, qv * vs))
        full = search_in_order(vs, u + c, ou, "left")  # full: v_j >= u_i + c
        lo = search_in_order(vs, u - c, ou, "right")   # zone: u_i - c < v_j < u_i + c
        y0, y1 = Q0[full] - Q0[lo], Q1[full] - Q1[lo]
        self.row = (Q0[-1] - Q0[full]) + (y1 + (c - u) * y0) / mu  # sum_j q_j a(x_ij)
        self.row_zone = y0
        self.zone_lo, self.zone_hi, self.v_order = lo, full, ov
        #: the factor by which the zone's division by mu magnifies the round-off of the sums
        self.amplification = 1.0 + 1.0 / mu
        if int((b - a).sum()) <= _DIRECT_ZONE * (u.size + v.size):
            self._zone_pair_by_pair(u, v, p, q, us, pu, ou, a, b, P0, P1)

    def _zone_pair_by_pair(self, u, v, p, q, us, pu, ou, a, b, P0, P1):
        """``col``, ``col_h`` and ``row`` again, the zone summed pair by pair.

        Through prefix sums the zone's part is a difference of sums over every lower score,
        divided by mu: its round-off, about eps (m + n) max|s| / mu, reached 1e-9 of the gap
        at mu = 1e-5 and exceeded the gap itself at mu = 1e-12. Summed over the zone pairs
        (``x_ij + c`` formed pair by pair) it is that of the pair terms, as in any sum, and
        rows and columns classify every pair by the same comparison (the columns').
        """
        mu = self.mu
        m, n = u.size, v.size
        count = b - a
        j = np.repeat(np.arange(n), count)
        pos = np.arange(j.size) + np.repeat(a - (np.cumsum(count) - count), count)
        y = (v + 0.5 * mu)[j] - us[pos]  # x_ij + c, in [0, mu)
        self.col = P0[a] + np.bincount(j, pu[pos] * y, n) / mu
        self.col_h = v * P0[a] - P1[a] + np.bincount(j, pu[pos] * y * y, n) / (2.0 * mu)
        # sum of q_j over the negatives with positive (sorted position k) in their full part
        full_row = np.cumsum(np.bincount(a, q, m + 1)[::-1])[::-1][1:]
        row = full_row + np.bincount(pos, q[j] * y, m) / mu
        self.row = np.empty(m)
        self.row[ou] = row
        self.amplification = 1.0


#: Zone pairs per score (m + n) up to which the zone is summed pair by pair.
_DIRECT_ZONE = 8
