"""Group caps of the l1,inf projection without sorting: a bracketed Newton/secant search on theta.

Notation as in :mod:`._l1inf_sort`: ``A >= 0`` (groups = columns), caps ``mu_g(theta)`` defined by
``T_g(mu) = sum_i max(a_ig - mu, 0) = theta`` (``mu_g = 0`` once ``sum_i a_ig <= theta``), and the
projection needs the root of ``R(theta) = sum_g mu_g(theta) = radius``.

Facts used (all follow from T_g being convex, decreasing and piecewise linear):

- R is convex, decreasing and piecewise linear, with slope ``-sum_g 1/k_g`` (k_g = number of
  entries above the cap). Newton steps from either end of a bracket [lo, hi] land at or below the
  root, the secant of the bracket at or above it; on the root's linear piece Newton is exact.
- For one group, Michelot's iteration ``mu <- (S_I - theta) / |I|``, I = entries above mu,
  started from any mu below the root, increases monotonically to the root in finitely many
  steps. Lower bounds: ``max_i a_i - theta``, ``(sum_i a_i - theta) / m``, and the cap found at any
  theta' >= theta.
- Pruning: at a lower bound lo of the root theta*, entries above ``mu_g(lo)`` are above
  ``mu_g(theta*)`` too (they only enter through their count and sum); at an upper bound hi,
  entries at or below ``mu_g(hi)`` are below ``mu_g(theta*)`` and can be dropped. So every
  evaluation shrinks the candidate entries; the Michelot passes partition them in place.

Every evaluation is exact for its theta; the method ends when R(theta) hits the radius up to
rounding (Newton is exact once the bracket end and the root share a linear piece), then solves
``sum_g (S_g - theta) / k_g = radius`` once more with the final pieces, as the sort method does.
The kernels are compiled with numba (``cache=True``) and run single-threaded.
"""

from __future__ import annotations

import threading

import numba as nb
import numpy as np

from ._l1inf_sort import match_radius

_EPS = np.finfo(np.float64).eps
_MAX_OUTER = 200
# The theta estimate: a solve on about SAMPLE_ENTRIES entries of every group, for matrices of at
# least SAMPLE_MIN_SIZE entries; the first two evaluations bracket guess * (1 -+ SAMPLE_WIDTH).
SAMPLE_ENTRIES = 64
SAMPLE_MIN_SIZE = 50_000
SAMPLE_WIDTH = 0.06
# Outside [2**-900, 2**900] sums of a group could overflow or entries be subnormal: rescale.
_BIG = 2.0 ** 900
_TINY = 2.0 ** -900


_TILE = 32


@nb.njit(cache=True, nogil=True)
def _load_columns(V, scale, nonneg, W, M, S):
    """W[g, :] = scaled magnitudes of column g of V; M, S = per-group max and sum.

    A tiled transpose: each tile is read along V's rows and written along W's rows, so both
    sides stay in cache.
    """
    m, n = V.shape
    for g in range(n):
        M[g] = 0.0
        S[g] = 0.0
    for i0 in range(0, m, _TILE):
        i1 = min(i0 + _TILE, m)
        for g0 in range(0, n, _TILE):
            g1 = min(g0 + _TILE, n)
            for g in range(g0, g1):
                mx = M[g]
                sm = S[g]
                for i in range(i0, i1):
                    x = V[i, g]
                    a = (x if x > 0 else 0.0) if nonneg else abs(x)
                    a = a * scale
                    W[g, i] = a
                    mx = a if a > mx else mx
                    sm += a + (x - x)         # x - x is NaN for NaN or inf: flags it in S
                M[g] = mx
                S[g] = sm


@nb.njit(cache=True, nogil=True)
def _load_rows(V, scale, nonneg, W, M, S):
    """W[g, :] = scaled magnitudes of row g of V (groups are rows)."""
    n, m = V.shape
    for g in range(n):
        mx = 0.0
        sm = 0.0
        for i in range(m):
            x = V[g, i]
            a = (x if x > 0 else 0.0) if nonneg else abs(x)
            a = a * scale
            W[g, i] = a
            mx = a if a > mx else mx
            sm += a + (x - x)                 # x - x is NaN for NaN or inf: flags it in S
        M[g] = mx
        S[g] = sm


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
    """Root of the convex minorant L(theta) = sum_g max(M_g - theta, (S_g - theta)/m, 0) <= R.

    L <= R, so its root is a lower bound of the root of R. Newton from theta = 0 (convex,
    decreasing, piecewise linear) climbs monotonically to it in finitely many steps.
    """
    n = M.shape[0]
    theta = 0.0
    for _ in range(100):
        L = 0.0
        B = 0.0
        for g in range(n):
            c1 = M[g] - theta
            c2 = (S[g] - theta) / m
            if c1 >= c2 and c1 > 0.0:
                L += c1
                B += 1.0
            elif c2 > c1 and c2 > 0.0:
                L += c2
                B += 1.0 / m
        if L <= radius * (1.0 + 4 * _EPS) or B == 0.0:
            break
        step = (L - radius) / B
        if step <= theta * _EPS:
            break
        theta += step
    return theta


@nb.njit(cache=True, nogil=True)
def _caps_from_buffer(W, M, S, radius, guess, width, pivot, mu_out, info):
    """Caps for the groups stored in the rows of W (modified in place).

    ``guess > 0`` is an estimate of the root: the first two evaluations are at
    ``guess * (1 -+ width)``, which usually bracket it tightly. ``info`` receives
    (number of evaluations, final theta, entries visited). ``pivot`` holds a guess of every
    cap (or zeros); each later evaluation uses the caps of the one before.
    """
    n, m = W.shape
    start = np.zeros(n, np.int64)
    end = np.full(n, m, np.int64)
    kf = np.zeros(n, np.int64)
    Sf = np.zeros(n, np.float64)
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
        R_lo += M[g]
        if S[g] > hi:
            hi = S[g]
    B_lo = float(n)          # slope at 0 if every maximum is unique; larger is still safe
    R_hi = 0.0
    B_hi = 0.0
    theta = max((R_lo - radius) / B_lo, _lower_bound_root(M, S, m, radius))
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
            # Lower bounds of the cap: T(M - theta) >= theta, T((S - theta)/m) >= theta, and
            # the cap at the upper bracket end.
            mu0 = M[g] - theta
            c2 = (S[g] - theta) / m
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
        tol = 4.0 * _EPS * (err + radius)
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


_local = threading.local()


def _workspace(size: int) -> np.ndarray:
    """A per-thread float64 scratch buffer, reused across calls (a solver projects every
    iteration at one shape; fresh pages would cost a page fault per 4 KiB)."""
    buf = getattr(_local, "buf", None)
    if buf is None or buf.size < size:
        buf = np.empty(size, np.float64)
        _local.buf = buf
    return buf[:size]


def _load(G, scale, nonneg, W, M, S):
    """Fill W (groups x entries) from G (entries x groups), reading G in its memory order."""
    if G.flags.f_contiguous and not G.flags.c_contiguous:
        _load_rows(G.T, scale, nonneg, W, M, S)
    else:
        _load_columns(G, scale, nonneg, W, M, S)


def caps_newton(G: np.ndarray, nonneg: bool, radius: float, sample_width: float = SAMPLE_WIDTH):
    """Caps (float64) of the l1,inf projection of ``|G|`` (or ``max(G, 0)``), groups = columns.

    ``G`` is a view of the caller's array in any memory order (no transposed copy is made).
    Values are rescaled by a power of two (exact) only when sums could overflow or entries
    could be subnormal. A solve on every ``q``-th entry of each group first estimates theta
    (only a guess: the exact evaluations check it).

    Returns ``(caps, evaluations, entries read per entry)``; caps is None when G is already in
    the ball, and a ValueError names ``V`` when it holds NaN or infinite entries.
    """
    m, n = G.shape
    W = _workspace(n * m).reshape(n, m)
    M = np.empty(n, np.float64)
    S = np.empty(n, np.float64)
    _load(G, 1.0, nonneg, W, M, S)
    e = 0
    if not np.isfinite(S).all() or M.max() > _BIG or 0.0 < M.max() < _TINY:
        if not np.isfinite(G).all():
            raise ValueError("V contains NaN or infinite entries")
        e = int(np.frexp(M.max())[1])
        src = G if abs(e) < 1000 else np.ldexp(G.astype(np.float64), -e)
        _load(src, np.ldexp(1.0, -e) if src is G else 1.0, nonneg, W, M, S)
    r = float(np.ldexp(radius, -e))
    if M.sum() <= r:
        return None, 0, 0.0
    guess = 0.0
    pivot = np.zeros(n, np.float64)
    q = m // SAMPLE_ENTRIES
    if q >= 2 and m * n >= SAMPLE_MIN_SIZE:
        sub = W[:, ::q]                     # already scaled; rows of W are the groups
        Ws = np.ascontiguousarray(sub)
        Ms = Ws.max(axis=1)
        Ss = Ws.sum(axis=1)
        if Ms.sum() > r:
            info = np.zeros(3)
            _caps_from_buffer(Ws, Ms, Ss, r, 0.0, 0.0, np.zeros(n), pivot, info)
            guess = info[1] * (m / Ws.shape[1])
    mu = np.empty(n, np.float64)
    info = np.zeros(3)
    _caps_from_buffer(W, M, S, r, guess, sample_width, pivot, mu, info)
    mu = match_radius(mu, M, r)
    return np.ldexp(mu, e), int(info[0]), info[2] / (m * n)


@nb.njit(cache=True, nogil=True)
def apply_caps(V, mu, groups_are_columns, nonneg, out):
    """``out = sign(v) min(|v|, mu_g)`` (or ``min(max(v, 0), mu_g)``), in V's memory order."""
    rows, cols = V.shape
    zero = 0.0
    if V.flags.f_contiguous and not V.flags.c_contiguous:
        for j in range(cols):
            for i in range(rows):
                c = mu[j] if groups_are_columns else mu[i]
                x = V[i, j]
                lo = zero if nonneg else -c
                out[i, j] = min(max(x, lo), c)
    else:
        for i in range(rows):
            for j in range(cols):
                c = mu[j] if groups_are_columns else mu[i]
                x = V[i, j]
                lo = zero if nonneg else -c
                out[i, j] = min(max(x, lo), c)
