"""Group caps of the l1,inf projection without sorting: candidate windows, then a bracketed
Newton/secant search on theta over the candidates only.

Role: the fallback of ``project_l1inf(method="newton")``, whose default kernel is the
semismooth Newton iteration of :mod:`._l1inf_ssn` (one vectorized counting pass over V per
step, about 0.2 ns per entry, no candidate buffers). Measured in one session, public call,
Gaussian input: 14-28 us against 75-330 us at 100 x 100 (there this search loads every entry
into the full window and its Michelot partitions cost ~5 ns per entry), 0.9-2.2 ms against
3.0-8.2 ms at 1000 x 1000, 0.8-2.0 ms against 2.1-12 ms at 300 x 3000, 16-45 ms against
32-80 ms at 3000 x 3000. :func:`caps_newton` runs when that iteration gives up
(``_l1inf_ssn.MAX_PASSES``) and stays usable directly.

Notation as in :mod:`._l1inf_sort`: ``A >= 0`` (groups = columns of V for axis=0), caps
``mu_g(theta)`` defined by ``T_g(mu) = sum_i max(a_ig - mu, 0) = theta`` (``mu_g = 0`` once
``S_g = sum_i a_ig <= theta``), and the projection needs the root of
``R(theta) = sum_g mu_g(theta) = radius``.

Candidate windows. Every group g gets a window ``(t_g, u_g]``; one streaming pass over V keeps
the entries inside it (the candidates) and only the count ``k_g`` and sum of the entries above
``u_g``. On the window the model

    T~_g(mu) = sum_{a > u_g} (a - mu) + sum_{t_g < a <= u_g} max(a - mu, 0)

equals ``T_g(mu)`` exactly, and it is itself convex, decreasing and piecewise linear, so the
search below runs on it unchanged. If the root of ``R~`` gives every group a cap inside its
window (or cap 0 with ``S_g <= theta``), then ``R(theta) = R~(theta) = radius`` and the caps are
the exact ones; otherwise the failed groups get the full window ``(0, inf)`` and the pass is
repeated (a full window makes ``T~ = T``).

Windows (matrices of at least SAMPLE_MIN_SIZE entries, groups of at least 2 SAMPLE_ENTRIES):
an exact solve on a sample of about SAMPLE_ENTRIES entries per group places a few probes per
group near its cap; one pass over V gives every group's max, sum and the exact ``T_g`` at its
probes. T_g is convex, so between probes its tangents and chords bound the cap at any theta;
the bound sums bracket the root ``theta_a <= theta* <= theta_b``, and the window of group g is
``(lb_g(theta_b), ub_g(theta_a)]``, which provably holds its cap. The sample only decides how
narrow the windows are, never the result. Smaller matrices use the full window.

Facts used by the search (all follow from T~_g being convex, decreasing and piecewise linear):

- R~ is convex, decreasing and piecewise linear, with slope ``-sum_g 1/k_g`` (k_g = number of
  entries above the cap). Newton steps from either end of a bracket [lo, hi] land at or below
  the root, the secant of the bracket at or above it; on the root's linear piece Newton is exact.
- For one group, Michelot's iteration ``mu <- (S_I - theta) / |I|``, I = entries above mu,
  started from any mu below the root, increases monotonically to the root in finitely many
  steps (it is Newton's method on the convex T~_g). Lower bounds: ``(S~_g - theta) / m~_g``
  (all candidates and fixed entries), ``max_i a_i - theta`` when no entry is fixed, and the cap
  found at any theta' >= theta.
- Pruning: at a lower bound lo of the root theta*, entries above ``mu_g(lo)`` are above
  ``mu_g(theta*)`` too (they only enter through their count and sum); at an upper bound hi,
  entries at or below ``mu_g(hi)`` are below ``mu_g(theta*)`` and can be dropped.

Every evaluation is exact for its theta; the method ends when R~(theta) hits the radius up to
rounding, then solves ``sum_g (S_g - theta) / k_g = radius`` once more with the final pieces, as
the sort method does. The kernels are compiled with numba (``cache=True``), single-threaded.
"""

from __future__ import annotations

import threading

import numba as nb
import numpy as np

from ._l1inf_sort import match_radius
from ._pow2 import scaled_radius

_EPS = np.finfo(np.float64).eps
_MAX_OUTER = 200
# Windows from a sample of about SAMPLE_ENTRIES entries of every group, for matrices of at least
# SAMPLE_MIN_SIZE entries with groups of at least 2 * SAMPLE_ENTRIES entries.
SAMPLE_ENTRIES = 32
SAMPLE_MIN_SIZE = 50_000
# The sample solve only places probes: it stops within SAMPLE_RTOL of the radius.
SAMPLE_RTOL = 1e-3
_SAMPLE_RUN = 8              # adjacent entries per sampled run (one cache line of float64)
# Probes: the sample caps moved along their tangents to theta_s * (1 + offset); exact values of
# T_g at them bracket every cap.
PROBE_OFFSETS = np.array([0.4, 0.06, -0.06, -0.4])
# Probes (fractions of the sample maxima) when the sample already lies in the ball.
NEAR_MAX_PROBES = np.array([0.5, 0.75, 0.9, 1.0])
N_PROBES = 4                 # the row kernel keeps one accumulator pair per probe
assert PROBE_OFFSETS.shape == NEAR_MAX_PROBES.shape == (N_PROBES,)
# Relative width of the theta bracket above which the gathered windows are narrowed with
# CANDIDATE_PROBES probes valued on the candidates (caps near the top, where the sample is thin).
NARROW_WIDTH = 0.05
CANDIDATE_PROBES = 8
# After a cap left its window, the search restarts from the previous theta * (1 -+ SEARCH_WIDTH).
SEARCH_WIDTH = 0.02
# Outside [2**-900, 2**900] sums of a group could overflow or entries be subnormal: rescale.
_BIG = 2.0 ** 900
_TINY = 2.0 ** -900


@nb.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _row_stats(X, Xi, sign_mask, g, nonneg, ug):
    """(bits of the max, sum, count above ug, sum above ug) of the magnitudes in row g of X.

    The max is taken on the bit patterns ``Xi`` (X viewed as integers): for nonnegative
    floats their order is the integer order, and an integer max vectorizes where a float max
    does not. The sum is NaN when the row holds NaN or inf (``x - x``).
    """
    m = X.shape[1]
    mb = Xi[g, 0] & 0
    sm = 0.0
    bad = 0.0
    ka = 0
    sa = 0.0
    for i in range(m):
        x = X[g, i]
        b = Xi[g, i]
        if nonneg:
            a = float(x if x > 0 else 0.0)
            b = b if b > 0 else 0                 # negative floats have the sign bit set
        else:
            a = float(abs(x))
            b = b & sign_mask
        mb = b if b > mb else mb
        sm += a
        bad += x - x
        above = a > ug
        ka += above
        sa += a if above else 0.0
    return mb, sm + bad, ka, sa


@nb.njit(cache=True, nogil=True)
def max_sum_rows(X, Xi, sign_mask, nonneg, Mb, S):
    """Max (bits) and sum of the magnitudes of every row of X (see :func:`_row_stats`); the
    statistics pass of :mod:`._l1inf_ssn` when the groups are the rows."""
    for g in range(X.shape[0]):
        Mb[g], S[g], _, _ = _row_stats(X, Xi, sign_mask, g, nonneg, np.inf)


@nb.njit(cache=True, nogil=True)
def _gather_rows(X, Xi, sign_mask, nonneg, t, u, W, cnt, kA, SA, Sc, Mb, S):
    """One pass over X whose rows are the groups: per group the max (bits Mb, see
    :func:`_row_stats`) and sum S of the magnitudes ``a = |x|`` (``max(x, 0)`` if nonneg), the
    candidates ``t_g < a <= u_g`` packed into ``W[g, :cnt[g]]`` (sum Sc), and the count kA and
    sum SA of the entries above ``u_g``.

    The packing is branch-free: every entry is written at the packing position, which only
    advances for candidates.
    """
    n, m = X.shape
    for g in range(n):
        tg = t[g]
        ug = u[g]
        Mb[g], S[g], kA[g], SA[g] = _row_stats(X, Xi, sign_mask, g, nonneg, ug)
        c = 0
        for i in range(m):
            x = X[g, i]
            a = float((x if x > 0 else 0.0) if nonneg else abs(x))
            W[g, c] = a
            c += (a > tg) & (a <= ug)
        sc = 0.0
        for i in range(c):
            sc += W[g, i]
        cnt[g] = c
        Sc[g] = sc


@nb.njit(cache=True, nogil=True)
def _gather_cols_rows(X, nonneg, t, u, W, cnt, kA, SA, Sc, M, S, idx, i0, R):
    """Rows ``i0 .. i0+R-1`` into :func:`_gather_cols` (R a constant at the call sites, so
    that the row loop unrolls and the column loop vectorizes)."""
    n = X.shape[1]
    for g in range(n):
        mx = M[g]
        sm = S[g]
        ka = kA[g]
        sa = SA[g]
        ug = u[g]
        for r in range(R):
            x = X[i0 + r, g]
            a = float((x if x > 0 else 0.0) if nonneg else abs(x))
            mx = a if a > mx else mx
            sm += a + (x - x)
            above = a > ug
            ka += above
            sa += a if above else 0.0
        M[g] = mx
        S[g] = sm
        kA[g] = ka
        SA[g] = sa
    for r in range(R):
        i = i0 + r
        c = 0
        for g in range(n):
            x = X[i, g]
            a = float((x if x > 0 else 0.0) if nonneg else abs(x))
            idx[c] = g
            c += (a > t[g]) & (a <= u[g])
        for k in range(c):
            g = idx[k]
            x = X[i, g]
            a = float((x if x > 0 else 0.0) if nonneg else abs(x))
            W[g, cnt[g]] = a
            cnt[g] += 1
            Sc[g] += a


@nb.njit(cache=True, nogil=True)
def _gather_cols(X, Xi, sign_mask, nonneg, t, u, W, cnt, kA, SA, Sc, M, S):
    """As :func:`_gather_rows` for X whose columns are the groups, read row by row (no
    transposed copy): per-group state lives in n-vectors, updated _ROWS rows at a time; the
    candidates of a row are packed into a short index list (branch-free), then appended to
    their groups' rows of W."""
    m, n = X.shape
    for g in range(n):
        M[g] = 0.0
        S[g] = 0.0
        cnt[g] = 0
        Sc[g] = 0.0
        kA[g] = 0
        SA[g] = 0.0
    idx = np.empty(n, np.int64)
    mb = m - m % _ROWS
    for i0 in range(0, mb, _ROWS):
        _gather_cols_rows(X, nonneg, t, u, W, cnt, kA, SA, Sc, M, S, idx, i0, _ROWS)
    for i0 in range(mb, m):
        _gather_cols_rows(X, nonneg, t, u, W, cnt, kA, SA, Sc, M, S, idx, i0, 1)


_TILE = 32
# Rows per block when the groups are the columns of a C-ordered matrix (per-column state is
# kept in registers over a block).
_ROWS = 8


@nb.njit(cache=True, nogil=True)
def _load_cols(X, nonneg, W, cnt, M, S):
    """Full windows, groups = columns of X: the nonzero magnitudes of column g packed into
    ``W[g, :cnt[g]]`` (a tiled transpose: each tile is read along X's rows and written along
    W's rows, so both stay in cache), with the max M and sum S (NaN flags NaN/inf) of every
    column. Zeros never change T, and with nonneg they are half the entries."""
    m, n = X.shape
    for g in range(n):
        M[g] = 0.0
        S[g] = 0.0
        cnt[g] = 0
    for i0 in range(0, m, _TILE):
        i1 = min(i0 + _TILE, m)
        for g0 in range(0, n, _TILE):
            g1 = min(g0 + _TILE, n)
            for g in range(g0, g1):
                mx = M[g]
                sm = S[g]
                c = cnt[g]
                for i in range(i0, i1):
                    x = X[i, g]
                    a = float((x if x > 0 else 0.0) if nonneg else abs(x))
                    W[g, c] = a
                    c += a > 0.0
                    mx = a if a > mx else mx
                    sm += a + (x - x)
                M[g] = mx
                S[g] = sm
                cnt[g] = c


@nb.njit(cache=True, nogil=True)
def _load_rows(X, Xi, sign_mask, nonneg, W, cnt, Mb, S):
    """Full windows, groups = rows of X: the nonzero magnitudes of row g packed into
    ``W[g, :cnt[g]]``, with the max (bits Mb, see :func:`_row_stats`) and sum S of every row."""
    n, m = X.shape
    for g in range(n):
        Mb[g], S[g], _, _ = _row_stats(X, Xi, sign_mask, g, nonneg, np.inf)
        c = 0
        for i in range(m):
            x = X[g, i]
            a = float((x if x > 0 else 0.0) if nonneg else abs(x))
            W[g, c] = a
            c += a > 0.0
        cnt[g] = c


@nb.njit(cache=True, nogil=True)
def _partition(w, s, h, mu):
    """Move the entries of w[s:s+h] above mu to the front.

    Returns (count, sum and smallest of the entries above mu, largest of the others). A
    branch-free Lomuto partition: on random data a branch would mispredict half the time.
    """
    j = s
    total = 0.0
    low = np.inf
    high = -np.inf
    for i in range(s, s + h):
        a = w[i]
        w[i] = w[j]
        w[j] = a
        above = a > mu
        total += a if above else 0.0
        b = a if above else np.inf
        low = b if b < low else low
        c = -np.inf if above else a
        high = c if c > high else high
        j += above
    return j - s, total, low, high


@nb.njit(cache=True, nogil=True)
def _michelot(w, s, h, kf, Sf, mu, theta):
    """Cap of one group at theta from a lower bound mu; candidates w[s:s+h], fixed (kf, Sf).

    Michelot's iteration ``mu <- (S_I - theta) / |I|``, I = entries above mu. It stops as soon
    as the new mu lies below every entry of I (then I is exactly the set above the cap).
    Leaves the entries above the cap first. Returns (cap, their count, their sum, entries read).
    """
    visits = 0
    while True:
        hn, Sh, low, high = _partition(w, s, h, mu)
        visits += h
        k = kf + hn
        if k == 0:
            # Nothing above a lower bound of the cap: the bound rounded onto the largest
            # entries (ties), or every entry is 0. Those entries are at or above the cap:
            # partition again just below them.
            if h == 0 or high <= 0.0:
                return 0.0, 0, 0.0, visits
            mu = np.nextafter(high, -np.inf)
            continue
        mu_new = (Sf + Sh - theta) / k
        if mu_new <= 0.0:    # the group's whole mass is at most theta: cap 0
            return 0.0, hn, Sh, visits
        if mu_new <= low or mu_new <= mu or hn == 0:
            return max(mu_new, mu), hn, Sh, visits
        h = hn
        mu = mu_new


@nb.njit(cache=True, nogil=True)
def _group_cap(w, s, h, kf, Sf, pivot, lower, theta):
    """Cap of one group at theta, starting from a guess ``pivot`` and a lower bound ``lower``.

    One partition at the pivot decides its side. Below the cap: continue Michelot on the
    entries above the pivot. Above the cap: those entries are all above the cap, and
    ``(S_I - theta) / |I|`` (I = them and the fixed ones) is a lower bound; continue Michelot on
    the rest. With a good pivot this is one pass over the candidates plus a few small ones.
    Returns (cap, count and sum of the candidates above it, entries read).
    """
    if pivot <= lower:
        return _michelot(w, s, h, kf, Sf, lower, theta)
    hn, Sh, low, high = _partition(w, s, h, pivot)
    k = kf + hn
    if Sf + Sh - k * pivot >= theta:          # T(pivot) >= theta: pivot at or below the cap
        mu = (Sf + Sh - theta) / k
        if mu <= low:
            return mu, hn, Sh, h
        cap, h2, S2, v2 = _michelot(w, s, hn, kf, Sf, mu, theta)
        return cap, h2, S2, h + v2
    kf2 = kf + hn
    Sf2 = Sf + Sh
    mu = lower
    if kf2 > 0:
        mu = max(mu, (Sf2 - theta) / kf2)
        if mu >= high:                        # nothing below the pivot is above mu: exact
            return mu, hn, Sh, h
    cap, h2, S2, v2 = _michelot(w, s + hn, h - hn, kf2, Sf2, mu, theta)
    return cap, hn + h2, Sh + S2, h + v2


@nb.njit(cache=True, nogil=True)
def _lower_bound_root(M, S, m, radius):
    """Root of the convex minorant L(theta) = sum_g max(M_g - theta, (S_g - theta)/m_g, 0) <= R.

    L <= R, so its root is a lower bound of the root of R. Newton from theta = 0 (convex,
    decreasing, piecewise linear) climbs monotonically to it in finitely many steps.
    """
    n = M.shape[0]
    theta = 0.0
    for _ in range(100):
        L = 0.0
        B = 0.0
        for g in range(n):
            if m[g] == 0:
                continue
            c1 = M[g] - theta
            c2 = (S[g] - theta) / m[g]
            if c1 >= c2 and c1 > 0.0:
                L += c1
                B += 1.0
            elif c2 > c1 and c2 > 0.0:
                L += c2
                B += 1.0 / m[g]
        if L <= radius * (1.0 + 4 * _EPS) or B == 0.0:
            break
        step = (L - radius) / B
        if step <= theta * _EPS:
            break
        theta += step
    return theta


@nb.njit(cache=True, nogil=True)
def _caps_from_buffer(W, cnt, kf0, Sf0, Sc, M, radius, guess, width, pivot, mu_out, info,
                      rtol=0.0):
    """Caps for the model T~ of every group: candidates ``W[g, :cnt[g]]`` (modified in place,
    sum Sc) and ``kf0[g]`` fixed entries of sum ``Sf0[g]`` above them; M = group maxima.

    ``guess > 0`` is an estimate of the root: the first two evaluations are at
    ``guess * (1 -+ width)``, which usually bracket it tightly. ``info`` receives
    (number of evaluations, final theta, entries visited). ``pivot`` holds a guess of every
    cap (or zeros); each later evaluation uses the caps of the one before. ``rtol > 0`` stops
    once R is within ``rtol * radius`` of the radius (an estimate, for the sample).
    """
    n = W.shape[0]
    start = np.zeros(n, np.int64)
    end = cnt.copy()
    kf = kf0.copy()
    Sf = Sf0.copy()
    # Per-group bounds valid for T~: S~ - m~ theta (all entries), and M_g - theta when nothing
    # is fixed and some entry is a candidate: then the group's max is a candidate (a fixed
    # entry's term a - mu may be negative above u_g, so no such bound otherwise).
    Mb = np.zeros(n, np.float64)
    St = np.empty(n, np.float64)
    mt = np.empty(n, np.int64)
    for g in range(n):
        St[g] = Sf0[g] + Sc[g]
        mt[g] = kf0[g] + cnt[g]
        if kf0[g] == 0 and cnt[g] > 0:
            Mb[g] = M[g]
    mu_low = np.zeros(n, np.float64)     # caps at the best upper bound hi (lower bounds on caps)
    cur_mu = pivot.copy()
    cur_k = np.zeros(n, np.int64)
    cur_S = np.zeros(n, np.float64)
    cur_h = np.zeros(n, np.int64)
    alive = np.ones(n, np.bool_)
    visits = 0

    lo = 0.0
    R_lo = 0.0
    hi = 0.0
    for g in range(n):
        R_lo += Mb[g]
        if St[g] > hi:
            hi = St[g]
    B_lo = float(n)          # slope at 0 if every maximum is unique; larger is still safe
    R_hi = 0.0
    B_hi = 0.0
    theta = max((R_lo - radius) / B_lo, _lower_bound_root(Mb, St, mt, radius))
    second = -1.0
    if guess > 0.0:
        t0 = guess * (1.0 - width)
        if t0 > theta and t0 < hi:
            theta = t0
        second = guess * (1.0 + width)
    use_newton = True
    evals = 0
    prev = -1.0              # theta of the previous evaluation (none yet)
    for _ in range(_MAX_OUTER):
        evals += 1
        R = 0.0
        B = 0.0
        err = 0.0
        for g in range(n):
            if not alive[g]:
                cur_mu[g] = 0.0
                cur_k[g] = 0
                cur_h[g] = 0
                continue
            s = start[g]
            h = end[g] - s
            k_all = kf[g] + h
            if k_all == 0:
                cur_mu[g] = 0.0
                cur_k[g] = 0
                cur_h[g] = 0
                cur_S[g] = 0.0
                continue
            # Lower bounds of the cap: T~(Mb - theta) >= theta, T~((S~ - theta)/m~) >= theta,
            # and the cap at the upper bracket end.
            mu0 = Mb[g] - theta
            c2 = (St[g] - theta) / mt[g]
            mu0 = c2 if c2 > mu0 else mu0
            mu0 = mu_low[g] if mu_low[g] > mu0 else mu0
            mu0 = mu0 if mu0 > 0.0 else 0.0
            # Pivot: the cap of the previous evaluation moved along its tangent (mu_g is
            # convex in theta, so for a larger theta this is also a lower bound).
            p = cur_mu[g]
            if prev >= 0.0 and cur_k[g] > 0 and p > 0.0:
                p = p - (theta - prev) / cur_k[g]
                if theta > prev and p > mu0:
                    mu0 = p
            mu, hn, Sh, v = _group_cap(W[g], s, h, kf[g], Sf[g], p, mu0, theta)
            visits += v
            cur_mu[g] = mu
            cur_h[g] = hn
            cur_k[g] = kf[g] + hn
            cur_S[g] = Sf[g] + Sh
            if mu > 0.0:
                R += mu
            if mu > 0.0 and cur_k[g] > 0:
                B += 1.0 / cur_k[g]
                err += (cur_S[g] + theta) / cur_k[g]
        prev = theta
        # Rounding bound of R: every cap is (S - theta)/k with S and theta possibly close.
        tol = max(4.0 * _EPS * (err + radius), rtol * radius)
        if abs(R - radius) <= tol:
            break
        if R > radius:
            lo = theta
            R_lo = R
            B_lo = B
            for g in range(n):
                if not alive[g]:
                    continue
                if cur_mu[g] <= 0.0:
                    alive[g] = False      # zero cap below the root: zero at the root
                    continue
                kf[g] = cur_k[g]
                Sf[g] = cur_S[g]
                start[g] += cur_h[g]
        else:
            hi = theta
            R_hi = R
            B_hi = B
            for g in range(n):
                if alive[g]:
                    end[g] = start[g] + cur_h[g]
                    mu_low[g] = cur_mu[g]
        if hi - lo <= 2.0 * _EPS * hi:
            break
        # Next point: Newton (a lower estimate) and the secant (an upper one), alternating
        # after a Newton step that fell short, so both ends of the bracket keep pruning.
        x_n = lo + (R_lo - radius) / B_lo if B_lo > 0.0 else lo
        if B_hi > 0.0:
            x_h = hi - (radius - R_hi) / B_hi
            if x_h > x_n:
                x_n = x_h
        x_s = lo + (R_lo - radius) * (hi - lo) / (R_lo - R_hi)
        if second > 0.0:
            # The guessed bracket's other end, unless the first guess was already on that side.
            theta = second if (R > radius and second < hi) else x_n
            second = -1.0
            if not (theta > lo and theta < hi):
                theta = 0.5 * (lo + hi)
            continue
        if use_newton or R <= radius:
            theta = x_n
            use_newton = False
        else:
            theta = x_s
            use_newton = True
        if not (theta > lo and theta < hi):
            theta = 0.5 * (lo + hi)
    # Exact theta from the final pieces, then the caps.
    num = 0.0
    den = 0.0
    for g in range(n):
        if cur_mu[g] > 0.0 and cur_k[g] > 0:
            num += cur_S[g] / cur_k[g]
            den += 1.0 / cur_k[g]
    if den > 0.0:
        theta = (num - radius) / den
    info[0] = evals
    info[1] = theta
    info[2] = visits
    for g in range(n):
        if cur_mu[g] > 0.0 and cur_k[g] > 0:
            v = (cur_S[g] - theta) / cur_k[g]
            mu_out[g] = v if v > 0.0 else 0.0
        else:
            mu_out[g] = 0.0


@nb.njit(cache=True, nogil=True)
def _thresholds(Ws, caps, theta_s, offsets, thr):
    """Per-group probe points near the sample's caps: ``c_g - o * theta_s / k_g`` for the
    relative offsets o (the cap moved along its tangent to ``theta_s (1 + o)``; k_g = sample
    entries above the cap), sorted increasingly into the columns of ``thr`` (K x n).

    A group with sample cap 0 gets fractions of its sample max instead.
    """
    n, h = Ws.shape
    K = offsets.shape[0]
    for g in range(n):
        c = caps[g]
        k = 0
        mx = 0.0
        for i in range(h):
            k += Ws[g, i] > c
            mx = Ws[g, i] if Ws[g, i] > mx else mx
        for j in range(K):
            if c > 0.0 and k > 0:
                x = c - offsets[j] * theta_s / k
            else:
                x = mx * (0.5 ** (K - j))
            thr[j, g] = x if x > 0.0 else 0.0
        # insertion sort of the K points (offsets are decreasing, so this is nearly sorted)
        for j in range(1, K):
            x = thr[j, g]
            i = j - 1
            while i >= 0 and thr[i, g] > x:
                thr[i + 1, g] = thr[i, g]
                i -= 1
            thr[i + 1, g] = x


@nb.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _probe_candidates(W, cnt, kA, SA, lo, hi, M, P, T, k):
    """Exact ``T_g`` and right slopes at K probes spread evenly over ``[lo_g, min(hi_g, M_g)]``.

    Only the gathered entries are read: an entry at or below ``lo_g`` adds nothing to
    ``T_g(p)`` for ``p >= lo_g``, and the entries above ``hi_g`` enter by count and sum.
    """
    n, K = P.shape
    for g in range(n):
        top = hi[g] if hi[g] < M[g] else M[g]
        top = top if top > lo[g] else lo[g]
        for j in range(K):
            p = lo[g] + (top - lo[g]) * j / (K - 1)
            c = 0
            sa = 0.0
            for i in range(cnt[g]):
                a = W[g, i]
                above = a > p
                c += above
                sa += a if above else 0.0
            P[g, j] = p
            k[g, j] = kA[g] + c
            T[g, j] = (SA[g] + sa) - (kA[g] + c) * p


@nb.njit(cache=True, nogil=True)
def _narrow(W, cnt, kA, SA, Sc, t, u):
    """Keep in every row of W only the candidates in ``(t_g, u_g]`` (in place); those above
    ``u_g`` join the fixed count kA and sum SA."""
    n = W.shape[0]
    for g in range(n):
        tg = t[g]
        ug = u[g]
        c = 0
        sc = 0.0
        ka = 0
        sa = 0.0
        for i in range(cnt[g]):
            a = W[g, i]
            W[g, c] = a
            inside = (a > tg) & (a <= ug)
            c += inside
            sc += a if inside else 0.0
            above = a > ug
            ka += above
            sa += a if above else 0.0
        cnt[g] = c
        Sc[g] = sc
        kA[g] += ka
        SA[g] += sa


@nb.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _stats_rows(X, Xi, sign_mask, nonneg, thr, Mb, S, KC, KS):
    """Max (bits Mb, see :func:`_row_stats`), sum S (NaN flags NaN/inf) of every row of X,
    and count KC / sum KS above each of its 4 probes ``thr[:, g]``, in one loop per row (four
    scalar accumulator pairs: one load per entry, and the loop vectorizes)."""
    n, m = X.shape
    for g in range(n):
        p0 = thr[0, g]
        p1 = thr[1, g]
        p2 = thr[2, g]
        p3 = thr[3, g]
        k0 = k1 = k2 = k3 = 0
        s0 = s1 = s2 = s3 = 0.0
        mb = Xi[g, 0] & 0
        sm = 0.0
        bad = 0.0
        for i in range(m):
            x = X[g, i]
            b = Xi[g, i]
            if nonneg:
                a = float(x if x > 0 else 0.0)
                b = b if b > 0 else 0
            else:
                a = float(abs(x))
                b = b & sign_mask
            mb = b if b > mb else mb
            sm += a
            bad += x - x
            c0 = a > p0
            c1 = a > p1
            c2 = a > p2
            c3 = a > p3
            k0 += c0
            k1 += c1
            k2 += c2
            k3 += c3
            s0 += a if c0 else 0.0
            s1 += a if c1 else 0.0
            s2 += a if c2 else 0.0
            s3 += a if c3 else 0.0
        Mb[g] = mb
        S[g] = sm + bad
        KC[0, g] = k0
        KC[1, g] = k1
        KC[2, g] = k2
        KC[3, g] = k3
        KS[0, g] = s0
        KS[1, g] = s1
        KS[2, g] = s2
        KS[3, g] = s3


@nb.njit(cache=True, nogil=True)
def _stats_cols_rows(X, nonneg, thr, M, S, KC, KS, i0, R):
    """Rows ``i0 .. i0+R-1`` into the state of :func:`_stats_cols` (R a constant at the call
    sites, so that the row loop unrolls and the column loop vectorizes)."""
    n = X.shape[1]
    K = thr.shape[0]
    for g in range(n):
        mx = M[g]
        sm = S[g]
        for r in range(R):
            x = X[i0 + r, g]
            a = float((x if x > 0 else 0.0) if nonneg else abs(x))
            mx = a if a > mx else mx
            sm += a + (x - x)
        M[g] = mx
        S[g] = sm
    for j in range(K):
        for g in range(n):
            p = thr[j, g]
            kc = KC[j, g]
            ks = KS[j, g]
            for r in range(R):
                x = X[i0 + r, g]
                a = float((x if x > 0 else 0.0) if nonneg else abs(x))
                above = a > p
                kc += above
                ks += a if above else 0.0
            KC[j, g] = kc
            KS[j, g] = ks


@nb.njit(cache=True, nogil=True)
def _stats_cols(X, nonneg, thr, M, S, KC, KS):
    """Max M, sum S (NaN flags NaN/inf) of every column of X, and count/sum above every probe
    ``thr[j, g]``, reading X row by row (the per-column state vectorizes across columns),
    _ROWS rows at a time so that the state is loaded and stored once per block."""
    m = X.shape[0]
    M[:] = 0.0
    S[:] = 0.0
    KC[:] = 0
    KS[:] = 0.0
    mb = m - m % _ROWS
    for i0 in range(0, mb, _ROWS):
        _stats_cols_rows(X, nonneg, thr, M, S, KC, KS, i0, _ROWS)
    for i0 in range(mb, m):
        _stats_cols_rows(X, nonneg, thr, M, S, KC, KS, i0, 1)


@nb.njit(cache=True, nogil=True, inline="always")
def _cap_bounds(theta, g, M, S, m, P, T, k):
    """Bounds ``lb <= mu_g(theta) <= ub`` from exact values of T_g at the probes of group g.

    T_g is convex and decreasing with ``T(0) = S_g`` (slope at least -m), ``T(p) = T[g, j]`` at
    the probe ``p = P[g, j]`` (right slope -k[g, j], probes increasing) and ``T(M_g) = 0``. On
    the segment where T crosses theta, the right tangent at its left end bounds the cap from
    below and the chord from above.
    """
    if theta >= S[g]:
        return 0.0, 0.0
    p = 0.0
    Tp = S[g]
    kp = float(m)
    q = M[g]
    Tq = 0.0
    for j in range(P.shape[1]):
        x = P[g, j]
        if x <= p or x >= q:
            continue
        if T[g, j] >= theta:
            p = x
            Tp = T[g, j]
            kp = k[g, j]
        else:
            q = x
            Tq = T[g, j]
            break
    lb = p + (Tp - theta) / kp if kp > 0.0 else p
    ub = p + (q - p) * (Tp - theta) / (Tp - Tq) if Tp > Tq else q
    lb = min(lb, q)
    return lb, max(ub, lb)


@nb.njit(cache=True, nogil=True)
def _bound_sum(theta, upper, M, S, m, P, T, k):
    """Sum over the groups of the lower (or upper) bounds of the caps at theta."""
    total = 0.0
    for g in range(M.shape[0]):
        lb, ub = _cap_bounds(theta, g, M, S, m, P, T, k)
        total += ub if upper else lb
    return total


@nb.njit(cache=True, nogil=True)
def _bound_root(upper, M, S, m, P, T, k, radius, guess, lo, hi):
    """Bracket ``[a, b]`` (relative width 4e-3) of the point where the lower (upper) bound sum
    f crosses the radius: ``f(a) >= radius > f(b)``. Outward steps from ``guess`` by growing
    factors find a bracket, then regula falsi with the Illinois rule narrows it (f is
    piecewise linear and decreasing)."""
    a = lo
    b = hi
    fa = np.inf
    fb = 0.0
    x = guess
    step = 1.1
    while x > a and x < b:
        fx = _bound_sum(x, upper, M, S, m, P, T, k)
        if fx >= radius:
            a, fa = x, fx
            x = x * step
        else:
            b, fb = x, fx
            x = x / step
        if a > lo and b < hi:
            break
        step *= step
    side = 0
    while b - a > 4e-3 * b:
        if fa < np.inf and fa > fb:
            x = a + (fa - radius) * (b - a) / (fa - fb)
        else:
            x = 0.5 * (a + b)
        if not (x > a and x < b):
            x = 0.5 * (a + b)
        fx = _bound_sum(x, upper, M, S, m, P, T, k)
        if fx >= radius:
            a, fa = x, fx
            if side == 1:
                fb = radius + 0.5 * (fb - radius)     # Illinois: halve the stale end
            side = 1
        else:
            b, fb = x, fx
            if side == -1:
                fa = radius + 0.5 * (fa - radius)
            side = -1
    return a, b


@nb.njit(cache=True, nogil=True)
def _windows(M, S, m, P, T, k, radius, guess, t, u, bracket):
    """Windows that provably hold the caps, from exact ``T[g, j] = T_g(P[g, j])`` and right
    slopes ``-k[g, j]`` at increasing probes: ``theta_a <= theta* <= theta_b`` where the lower
    bounds of the caps still sum to at least the radius at theta_a and the upper bounds to at
    most the radius at theta_b; then ``t_g = lb_g(theta_b)``, ``u_g = ub_g(theta_a)`` (widened
    by 1e-9 against rounding; the solve checks them anyway). ``bracket`` receives
    (theta_a, theta_b)."""
    n = M.shape[0]
    smax = 0.0
    for g in range(n):
        smax = S[g] if S[g] > smax else smax
    guess = guess if guess > 0.0 else 0.5 * smax
    theta_a, _ = _bound_root(False, M, S, m, P, T, k, radius, guess, 0.0, smax)
    _, theta_b = _bound_root(True, M, S, m, P, T, k, radius, guess, theta_a, smax)
    for g in range(n):
        lb, _ub = _cap_bounds(theta_b, g, M, S, m, P, T, k)
        _lb, ub = _cap_bounds(theta_a, g, M, S, m, P, T, k)
        t[g] = lb * (1.0 - 1e-9)
        u[g] = ub * (1.0 + 1e-9) if ub < M[g] else np.inf
    bracket[0] = theta_a
    bracket[1] = theta_b


@nb.njit(cache=True, nogil=True)
def _probe_table(thr, KC, KS, P, T, k):
    """(P, T, k) with groups as rows from the probe counts and sums of a stats pass."""
    K, n = thr.shape
    for g in range(n):
        for j in range(K):
            P[g, j] = thr[j, g]
            T[g, j] = KS[j, g] - KC[j, g] * thr[j, g]
            k[g, j] = KC[j, g]


@nb.njit(cache=True, nogil=True)
def _sample_rows(X, groups_are_rows, nonneg, q, h, Ws):
    """The sample: ``Ws[g, :h]`` = magnitudes of about 1/q of the entries of group g.

    Groups = columns: rows ``0, q, 2q, ...`` of X (whole rows, read contiguously). Groups =
    rows: runs of _SAMPLE_RUN adjacent entries every ``_SAMPLE_RUN * q`` entries (whole cache
    lines rather than one entry from each).
    """
    n = Ws.shape[0]
    if groups_are_rows:
        m = X.shape[1]
        for g in range(n):
            j = 0
            for b in range(0, m, _SAMPLE_RUN * q):
                for i in range(b, min(b + _SAMPLE_RUN, m)):
                    x = X[g, i]
                    Ws[g, j] = (x if x > 0 else 0.0) if nonneg else abs(x)
                    j += 1
    else:
        for j in range(h):
            for g in range(n):
                x = X[j * q, g]
                Ws[g, j] = (x if x > 0 else 0.0) if nonneg else abs(x)


def _sample_size(m, q, groups_are_rows):
    """Entries per group taken by :func:`_sample_rows`."""
    if not groups_are_rows:
        return (m + q - 1) // q
    return sum(min(_SAMPLE_RUN, m - b) for b in range(0, m, _SAMPLE_RUN * q))


@nb.njit(cache=True, nogil=True)
def _check_windows(mu, t, u, S, theta):
    """Open (to ``(0, inf)``) the window of every group whose cap of the model T~ is not
    provably its cap: a positive cap outside its window, or cap 0 while ``S_g > theta``.

    Returns the number of windows opened (0: the caps are exact)."""
    bad = 0
    for g in range(mu.shape[0]):
        if t[g] == 0.0 and u[g] == np.inf:
            continue
        if mu[g] > 0.0:
            ok = mu[g] >= t[g] and mu[g] <= u[g]
        else:
            ok = S[g] <= theta
        if not ok:
            t[g] = 0.0
            u[g] = np.inf
            bad += 1
    return bad


@nb.njit(cache=True, nogil=True)
def apply_caps(X, mu, groups_are_rows, nonneg, out):
    """``out = sign(x) min(|x|, mu_g)`` (or ``min(max(x, 0), mu_g)``) for C-ordered X."""
    rows, cols = X.shape
    if groups_are_rows:
        for i in range(rows):
            c = mu[i]
            lo = 0.0 if nonneg else -c
            for j in range(cols):
                out[i, j] = min(max(X[i, j], lo), c)
    else:
        lo = np.empty(cols, mu.dtype)
        for j in range(cols):
            lo[j] = 0.0 if nonneg else -mu[j]
        for i in range(rows):
            for j in range(cols):
                out[i, j] = min(max(X[i, j], lo[j]), mu[j])


_local = threading.local()


def _workspace(size: int) -> np.ndarray:
    """A per-thread float64 scratch buffer, reused across calls (a solver projects every
    iteration at one shape; fresh pages would cost a page fault per 4 KiB)."""
    buf = getattr(_local, "buf", None)
    if buf is None or buf.size < size:
        buf = np.empty(size, np.float64)
        _local.buf = buf
    return buf[:size]


_SIGN_MASK = {np.dtype(np.float64): (np.int64, np.int64(0x7FFFFFFFFFFFFFFF)),
              np.dtype(np.float32): (np.int32, np.int32(0x7FFFFFFF))}


class _Gathered:
    """The result of a gather pass: candidates, fixed entries above the windows, group stats."""

    def __init__(self, n, m):
        self.W = _workspace(n * m).reshape(n, m)
        self.cnt = np.empty(n, np.int64)
        self.kA = np.empty(n, np.int64)
        self.SA = np.empty(n, np.float64)
        self.Sc = np.empty(n, np.float64)
        self.M = np.empty(n, np.float64)
        self.S = np.empty(n, np.float64)

    def fill(self, X, groups_are_rows, nonneg, t, u, full):
        """Gather the candidates in the windows ``(t, u]`` (``full``: every window is
        ``(0, inf)``, a plain load)."""
        itype, mask = _SIGN_MASK[X.dtype]
        Xi = X.view(itype)
        if groups_are_rows:
            Mb = np.empty(X.shape[0], itype)
            if full:
                _load_rows(X, Xi, mask, nonneg, self.W, self.cnt, Mb, self.S)
            else:
                _gather_rows(X, Xi, mask, nonneg, t, u, self.W, self.cnt, self.kA, self.SA,
                             self.Sc, Mb, self.S)
            self.M[:] = Mb.view(X.dtype)
        elif full:
            _load_cols(X, nonneg, self.W, self.cnt, self.M, self.S)
        else:
            _gather_cols(X, Xi, mask, nonneg, t, u, self.W, self.cnt, self.kA, self.SA,
                         self.Sc, self.M, self.S)
        if full:      # every nonzero entry is a candidate
            self.kA[:] = 0
            self.SA[:] = 0.0
            self.Sc[:] = self.S


def _group_stats(X, groups_are_rows, nonneg, thr):
    """Max, sum and the counts/sums above the probes ``thr`` (N_PROBES x n) of every group."""
    K, n = thr.shape
    M = np.empty(n, np.float64)
    S = np.empty(n, np.float64)
    KC = np.empty((K, n), np.int64)
    KS = np.empty((K, n), np.float64)
    if groups_are_rows:
        itype, mask = _SIGN_MASK[X.dtype]
        Mb = np.empty(n, itype)
        _stats_rows(X, X.view(itype), mask, nonneg, thr, Mb, S, KC, KS)
        M[:] = Mb.view(X.dtype)
    else:
        _stats_cols(X, nonneg, thr, M, S, KC, KS)
    return M, S, KC, KS


def _sample_windows(X, groups_are_rows, nonneg, radius, n, m):
    """Windows from a sample: None when the sample is unusable (then every window is full).

    Returns (t, u, guess, width, pivot): the search starts from the bracket
    ``guess * (1 -+ width)``, which holds the root, and the sample's caps as pivots. When the
    sample already lies in the ball (radius near the norm: caps near the maxima), the probes
    are fractions of the sample maxima instead.
    """
    q = m // SAMPLE_ENTRIES
    h = _sample_size(m, q, groups_are_rows)
    Ws = np.empty((n, h), np.float64)
    _sample_rows(X, groups_are_rows, nonneg, q, h, Ws)
    Ms = Ws.max(axis=1)
    if not (np.isfinite(Ws).all() and _TINY < Ms.max() < _BIG):
        return None
    if Ms.sum() > radius:
        pivot = np.zeros(n, np.float64)
        info = np.zeros(3)
        _caps_from_buffer(Ws.copy(), np.full(n, h, np.int64), np.zeros(n, np.int64),
                          np.zeros(n), Ws.sum(axis=1), Ms, radius, 0.0, 0.0, np.zeros(n),
                          pivot, info, SAMPLE_RTOL)                # (the solve reorders its rows)
        theta_s = info[1]
        thr = np.empty((PROBE_OFFSETS.shape[0], n), np.float64)
        _thresholds(Ws, pivot, theta_s, PROBE_OFFSETS, thr)
    else:
        pivot = Ms
        theta_s = 0.0
        thr = Ms[None, :] * NEAR_MAX_PROBES[:, None]
    M, S, KC, KS = _group_stats(X, groups_are_rows, nonneg, thr)
    if not np.isfinite(S).all() or M.max() > _BIG or 0.0 < M.max() < _TINY or M.sum() <= radius:
        return None
    K = thr.shape[0]
    P = np.empty((n, K))
    T = np.empty((n, K))
    k = np.empty((n, K))
    _probe_table(thr, KC, KS, P, T, k)
    t = np.empty(n, np.float64)
    u = np.empty(n, np.float64)
    bracket = np.empty(2)
    _windows(M, S, m, P, T, k, radius, theta_s * (m / h), t, u, bracket)
    guess = 0.5 * (bracket[0] + bracket[1])
    width = (bracket[1] - bracket[0]) / (bracket[1] + bracket[0]) if guess > 0 else 0.0
    return t, u, guess, width, pivot


def _narrow_windows(G, t, u, m, radius, guess):
    """Narrow wide windows after the gather: probes spread over every window, valued on the
    gathered entries only, give new provable windows; their intersection with the old ones
    is kept and the candidates outside it are dropped (in place). Returns (guess, width)."""
    n = t.shape[0]
    P = np.empty((n, CANDIDATE_PROBES))
    T = np.empty((n, CANDIDATE_PROBES))
    k = np.empty((n, CANDIDATE_PROBES))
    _probe_candidates(G.W, G.cnt, G.kA, G.SA, t, u, G.M, P, T, k)
    t2 = np.empty(n)
    u2 = np.empty(n)
    bracket = np.empty(2)
    _windows(G.M, G.S, m, P, T, k, radius, guess, t2, u2, bracket)
    np.maximum(t, t2, out=t)
    np.minimum(u, u2, out=u)
    _narrow(G.W, G.cnt, G.kA, G.SA, G.Sc, t, u)
    guess = 0.5 * (bracket[0] + bracket[1])
    width = (bracket[1] - bracket[0]) / (bracket[1] + bracket[0]) if guess > 0 else 0.0
    return guess, width


def caps_newton(X: np.ndarray, groups_are_rows: bool, nonneg: bool, radius: float,
                stats: dict | None = None):
    """Caps (float64) of the l1,inf projection of ``|X|`` (or ``max(X, 0)``).

    ``X`` is C-contiguous; its rows are the groups when ``groups_are_rows``, else its columns
    (no transposed copy is made). Values are rescaled by a power of two (exact) only when sums
    could overflow or entries could be subnormal.

    Returns the caps, or None when X is already in the ball; a ValueError names ``V`` when X
    holds NaN or infinite entries. ``stats`` (a dict), if given, receives the number of
    evaluations, gather passes, candidates and entries visited by the search.
    """
    n, m = X.shape if groups_are_rows else X.shape[::-1]
    G = _Gathered(n, m)
    t = np.zeros(n, np.float64)
    u = np.full(n, np.inf)
    pivot = np.zeros(n, np.float64)
    guess = width = 0.0
    full = True
    if m >= 2 * SAMPLE_ENTRIES and m * n >= SAMPLE_MIN_SIZE:
        win = _sample_windows(X, groups_are_rows, nonneg, radius, n, m)
        if win is not None:
            t, u, guess, width, pivot = win
            full = False
    G.fill(X, groups_are_rows, nonneg, t, u, full)
    if not full and width > NARROW_WIDTH:
        guess, width = _narrow_windows(G, t, u, m, radius, guess)
    e = 0
    Mmax = G.M.max()
    if not np.isfinite(G.S).all() or Mmax > _BIG or 0.0 < Mmax < _TINY:
        if not np.isfinite(X).all():
            raise ValueError("V contains NaN or infinite entries")
        e = int(np.frexp(Mmax)[1])
        X = np.ldexp(X.astype(np.float64), -e)
        t[:] = 0.0
        u[:] = np.inf
        guess = width = 0.0
        pivot[:] = 0.0
        full = True
        G.fill(X, groups_are_rows, nonneg, t, u, full)
    r = scaled_radius(radius, e)
    if G.M.sum() <= r:
        return None
    mu = np.empty(n, np.float64)
    info = np.zeros(3)
    passes = 1
    evals = 0
    while True:
        _caps_from_buffer(G.W, G.cnt, G.kA, G.SA, G.Sc, G.M, r, guess, width, pivot, mu,
                          info)
        evals += int(info[0])
        if full or _check_windows(mu, t, u, G.S, info[1]) == 0:
            break
        # Some cap left its window (rounding at a window's edge): read those groups in full.
        passes += 1
        pivot = mu.copy()
        guess, width = info[1], SEARCH_WIDTH
        G.fill(X, groups_are_rows, nonneg, t, u, False)
    if stats is not None:
        stats.update(evaluations=evals, passes=passes, candidates=int(G.cnt.sum()),
                     visits=info[2])
    mu = match_radius(mu, G.M, r)
    return np.ldexp(mu, e) if e else mu
