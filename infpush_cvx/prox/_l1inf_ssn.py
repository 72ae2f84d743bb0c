"""Group caps of the l1,inf projection by a semismooth Newton iteration on all caps at once:
one vectorized counting pass over V per iteration, no sorting, no candidate buffers.

Notation as in :mod:`._l1inf_sort`: ``A >= 0`` (``|V|``, or ``max(V, 0)`` with nonneg), groups
g with entries ``a_ig``, ``T_g(mu) = sum_i max(a_ig - mu, 0)``; the caps solve
``T_g(mu_g) = theta`` (``mu_g = 0`` once ``S_g = sum_i a_ig <= theta``) and
``sum_g mu_g = radius``.

The iteration (a semismooth Newton method on this system of piecewise linear equations, as in
Chu et al., "Semismooth Newton algorithm for efficient projections onto l1,inf-norm ball",
ICML 2020; the argument below is self-contained): from caps ``nu``, one pass counts ``k_g`` and
sums ``s_g`` of the entries above ``nu_g``; ``T_g`` is linear on that piece,
``T_g(mu) = s_g - k_g mu`` near ``nu_g``, and the linearized system

    sum_g max((s_g - theta) / k_g, 0) = radius,        nu_g <- max((s_g - theta) / k_g, 0)

is solved exactly for theta (a decreasing, piecewise linear function of theta with one
breakpoint per group, solved by Newton from the previous theta, which lies below its root:
O(n) per step, 1-7 steps per pass measured, at most n + 1).
It stops when a pass finds the same entries above the new caps as the pass before (then
``T_g(nu_g) = theta`` exactly for every group with a positive cap, ``S_g <= theta`` for the
others, and the caps are the projection's), or when theta stops increasing (see below).

Why it is exact and monotone (``T_g`` is convex, decreasing and piecewise linear):

- A linearization of ``T_g`` lies below it, so the new caps satisfy ``T_g(nu_g) >= theta``,
  i.e. ``nu_g <= mu_g(theta)``, and they sum to the radius. Hence ``R(theta) =
  sum_g mu_g(theta) >= radius``: theta is a lower bound of the root theta*.
- At the next pass ``s_g - k_g nu_g = T_g(nu_g) >= theta``, so the next linearized system has its
  root at or above theta: theta increases monotonically to theta* and no set of pieces repeats,
  so the iteration is finite. In exact arithmetic theta stays put only at the solution; a theta
  that does not increase is therefore the root up to rounding, which ends the iteration too.
- Start: the root theta_L of the convex minorant ``sum_g max(M_g - theta, (S_g - theta) / m,
  0)`` (M_g the group max, m its size), with caps ``max(M_g - theta_L, (S_g - theta_L) / m, 0)``:
  each term is a lower bound of ``mu_g(theta_L)`` and they sum to the radius, so the invariant
  holds from the first pass on.

A pass reads V once in its own memory order (the groups may be its rows or its columns;
counts and sums vectorize either way: an integer count and a select, no branch, no buffer), so
the cost is about (passes + 2) reads of V: a statistics pass (maxima, sums, NaN/inf), the
counting passes, the output. Measured: 2-10 counting passes on Gaussian matrices from 100 x 100
to 3000 x 3000 (most at radius factor 0.5), at most 10 on ties, sparse, sorted, heavy-tailed,
geometric and differently scaled groups. The count is not bounded a priori by a small number,
so after MAX_PASSES passes the kernel gives up (NO_CONVERGENCE) and the caller falls back to the
exact sort method of :mod:`._l1inf_sort` with a ``RuntimeWarning`` (never seen on those inputs).

The last linearized solve gives theta and the caps, rescaled once to sum to the radius
(``match_radius``, as the sort method does). Entries are assumed in ``[2**-900, 2**900]`` for
the largest magnitude (sums cannot overflow, entries near the cap are normal numbers); the
caller rescales otherwise. Compiled with numba (``cache=True``), single-threaded.

This module holds every numba kernel of the l1,inf projection: the statistics pass, the minorant
root that starts the iteration, the counting passes, the linearized solve and the output pass.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

_EPS = np.finfo(np.float64).eps
# Give up (the caller falls back to the sort method) after this many counting passes; 2-10
# were measured (module docstring): a guard against pathological slow climbs.
MAX_PASSES = 60
# Outside [2**-900, 2**900] sums of a group could overflow or entries be subnormal: rescale.
_BIG = 2.0 ** 900
_TINY = 2.0 ** -900
# Rows per block when the groups are the columns of a C-ordered matrix (per-column state is
# kept in registers over a block).
_ROWS = 8
# X viewed as integers of its width, and the mask that clears their sign bit (max_sum_rows).
SIGN_MASK = {np.dtype(np.float64): (np.int64, np.int64(0x7FFFFFFFFFFFFFFF)),
             np.dtype(np.float32): (np.int32, np.int32(0x7FFFFFFF))}

# Status codes of project_ssn.
SOLVED = 0          # caps in mu, projection in out (if out is not empty)
INSIDE = 1          # V already lies in the ball
NOT_FINITE = 2      # V holds NaN or inf
RESCALE = 3         # magnitudes outside [2**-900, 2**900]: info[2] = exponent to scale by 2**-e
NO_CONVERGENCE = 4  # gave up after MAX_PASSES passes


@nb.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _row_max_sum(X, Xi, sign_mask, g, nonneg):
    """(bits of the max, sum) of the magnitudes in row g of X.

    The max is taken on the bit patterns ``Xi`` (X viewed as integers): for nonnegative
    floats their order is the integer order, and an integer max vectorizes where a float max
    does not. The sum is NaN when the row holds NaN or inf (``x - x``).
    """
    m = X.shape[1]
    mb = Xi[g, 0] & 0
    sm = 0.0
    bad = 0.0
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
    return mb, sm + bad


@nb.njit(cache=True, nogil=True)
def max_sum_rows(X, Xi, sign_mask, nonneg, Mb, S):
    """The statistics pass when the groups are the rows of X: max (bits Mb, see
    :func:`_row_max_sum`) and sum S (NaN flags NaN/inf) of the magnitudes of every row."""
    for g in range(X.shape[0]):
        Mb[g], S[g] = _row_max_sum(X, Xi, sign_mask, g, nonneg)


@nb.njit(cache=True, nogil=True)
def _max_sum_cols_block(X, nonneg, M, S, i0, R):
    """Rows ``i0 .. i0+R-1`` into the state of :func:`max_sum_cols` (R a constant at the call
    sites, so that the row loop unrolls and the column loop vectorizes)."""
    n = X.shape[1]
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


@nb.njit(cache=True, nogil=True)
def max_sum_cols(X, nonneg, M, S):
    """The statistics pass when the groups are the columns of X: max M and sum S (NaN flags
    NaN/inf) of every column, reading X row by row (the per-column state vectorizes across
    columns), _ROWS rows at a time so that the state is loaded and stored once per block."""
    m = X.shape[0]
    M[:] = 0.0
    S[:] = 0.0
    mb = m - m % _ROWS
    for i0 in range(0, mb, _ROWS):
        _max_sum_cols_block(X, nonneg, M, S, i0, _ROWS)
    for i0 in range(mb, m):
        _max_sum_cols_block(X, nonneg, M, S, i0, 1)


@nb.njit(cache=True, nogil=True)
def _lower_bound_root(M, S, m, radius):
    """Root of the convex minorant ``L(theta) = sum_g max(M_g - theta, (S_g - theta) / m, 0)``
    of ``R(theta)`` (groups of m entries, maxima M, sums S).

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
def apply_caps(X, mu, groups_are_rows, nonneg, out):
    """The output pass: ``out = sign(x) min(|x|, mu_g)`` (or ``min(max(x, 0), mu_g)``) for
    C-ordered X."""
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


@nb.njit(cache=True, nogil=True, inline="always")
def _above(x, nonneg, t, c, s):
    """One entry into a running count c and sum s of the magnitudes above t: with nonneg x is
    used as is (see :func:`_above_rows`). A select, not a multiply, so the loops vectorize."""
    a = float(x if nonneg else abs(x))
    above = a > t
    return c + above, s + (a if above else 0.0)


@nb.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _above_rows(X, nonneg, nu, K, Sa):
    """Count K and sum Sa of the magnitudes above ``nu_g >= 0`` in every row g of X.

    With nonneg, ``max(x, 0) > nu_g`` iff ``x > nu_g`` (nu_g >= 0), so x is used as is. The
    count is an integer and the sum a select (not a multiply): both vectorize."""
    n, m = X.shape
    for g in range(n):
        t = nu[g]
        c = 0
        s = 0.0
        for i in range(m):
            c, s = _above(X[g, i], nonneg, t, c, s)
        K[g] = c
        Sa[g] = s


@nb.njit(cache=True, nogil=True)
def _above_cols_block(X, nonneg, nu, K, Sa, i0, R):
    """Rows ``i0 .. i0+R-1`` into the column counts K and sums Sa above nu (see
    :func:`_above_rows`; R a constant at the call sites)."""
    n = X.shape[1]
    for g in range(n):
        t = nu[g]
        c = K[g]
        s = Sa[g]
        for r in range(R):
            c, s = _above(X[i0 + r, g], nonneg, t, c, s)
        K[g] = c
        Sa[g] = s


@nb.njit(cache=True, nogil=True)
def _above_cols(X, nonneg, nu, K, Sa):
    """Count K and sum Sa of the magnitudes above ``nu_g >= 0`` in every column g of X, read
    row by row, _ROWS rows at a time."""
    m = X.shape[0]
    K[:] = 0
    Sa[:] = 0.0
    mb = m - m % _ROWS
    for i0 in range(0, mb, _ROWS):
        _above_cols_block(X, nonneg, nu, K, Sa, i0, _ROWS)
    for i0 in range(mb, m):
        _above_cols_block(X, nonneg, nu, K, Sa, i0, 1)


@nb.njit(cache=True, nogil=True)
def _linear_root(K, Sa, radius, theta):
    """Root of ``sum_g max((Sa_g - t) / K_g, 0) = radius`` (groups with K_g > 0), by Newton
    from ``theta``, a lower bound of it: every step drops the groups with ``Sa_g <= t``
    and solves the rest exactly; t increases to the root in at most n + 1 steps. The last
    solve is returned even if rounding put it slightly below its start."""
    n = K.shape[0]
    t = theta
    for _ in range(n + 2):
        num = 0.0
        den = 0.0
        for g in range(n):
            if K[g] > 0 and Sa[g] > t:
                inv = 1.0 / K[g]
                num += Sa[g] * inv
                den += inv
        if den == 0.0:
            return t
        t_new = (num - radius) / den
        if t_new <= t:
            return t_new
        t = t_new
    return t


@nb.njit(cache=True, nogil=True)
def _caps_at(K, Sa, M, theta, nu):
    """Caps of the linearized system at theta: ``max((Sa_g - theta) / K_g, 0)``, kept below
    the group max M_g (then the max stays above the cap and the next K_g is positive: caps
    are below M_g for any theta > 0, so this keeps nu_g <= mu_g(theta))."""
    for g in range(K.shape[0]):
        v = 0.0
        if K[g] > 0 and Sa[g] > theta:
            v = (Sa[g] - theta) / K[g]
            if v >= M[g]:
                v = np.nextafter(M[g], 0.0)
        nu[g] = v


@nb.njit(cache=True, nogil=True)
def _match_radius(mu, M, radius):
    """:func:`._l1inf_sort.match_radius` (rescale the caps to sum to the radius within rounding,
    caps at most the group max) as loops, in place. Kept as a twin: compiling that array-style
    function with numba nearly doubled the kernels' first-call compile time (6.6 s -> 11.8 s)."""
    n = mu.shape[0]
    total = 0.0
    for g in range(n):
        total += mu[g]
    if total > 0.0 and total != radius:
        f = radius / total
        total = 0.0
        for g in range(n):
            v = mu[g] * f
            mu[g] = v if v < M[g] else M[g]
            total += mu[g]
        if total > radius:
            f = radius / total
            total = 0.0
            for g in range(n):
                mu[g] *= f
                total += mu[g]
            if total > radius:
                for g in range(n):
                    mu[g] = np.nextafter(mu[g], 0.0)


@nb.njit(cache=True, nogil=True)
def project_ssn(X, Xi, sign_mask, groups_are_rows, nonneg, radius, mu, info):
    """Caps ``mu`` (float64) of the l1,inf projection of ``|X|`` (or ``max(X, 0)``); the caller
    applies them with :func:`apply_caps`.

    X is C-contiguous, its rows the groups when ``groups_are_rows``, else its columns; ``Xi`` is
    X viewed as integers of its width and ``sign_mask`` clears their sign bit. ``radius > 0``.
    Returns a status code (SOLVED, INSIDE, NOT_FINITE, RESCALE, NO_CONVERGENCE); ``info``
    receives (counting passes, theta, exponent for RESCALE).
    """
    n = mu.shape[0]
    m = X.shape[1] if groups_are_rows else X.shape[0]
    M = np.empty(n, np.float64)
    S = np.empty(n, np.float64)
    if groups_are_rows:
        Mb = np.empty(n, Xi.dtype)
        max_sum_rows(X, Xi, sign_mask, nonneg, Mb, S)   # max on bit patterns, sum, NaN flag
        Mv = Mb.view(X.dtype)
        for g in range(n):
            M[g] = Mv[g]
    else:
        max_sum_cols(X, nonneg, M, S)
    info[:] = 0.0
    Mmax = 0.0
    Msum = 0.0
    finite = True
    for g in range(n):
        Mmax = M[g] if M[g] > Mmax else Mmax
        Msum += M[g]
        finite = finite and np.isfinite(S[g])
    if not finite or Mmax > _BIG or 0.0 < Mmax < _TINY:
        for x in X.flat:
            if not np.isfinite(x):
                return NOT_FINITE
        info[2] = math.frexp(Mmax)[1]
        return RESCALE
    if Msum <= radius:
        return INSIDE

    # Start from the minorant's caps (lower bounds of the caps at its root theta_L).
    theta = _lower_bound_root(M, S, m, radius)
    nu = np.empty(n, np.float64)
    for g in range(n):
        v = max(M[g] - theta, (S[g] - theta) / m, 0.0)
        if v >= M[g]:
            v = np.nextafter(M[g], 0.0) if M[g] > 0.0 else 0.0
        nu[g] = v
    K = np.empty(n, np.int64)
    Sa = np.empty(n, np.float64)
    K_prev = np.empty(n, np.int64)
    K_prev[:] = -1
    passes = 0
    status = NO_CONVERGENCE
    while passes < MAX_PASSES:
        if groups_are_rows:
            _above_rows(X, nonneg, nu, K, Sa)
        else:
            _above_cols(X, nonneg, nu, K, Sa)
        passes += 1
        same = True
        for g in range(n):
            if K[g] != K_prev[g]:
                same = False
                K_prev[g] = K[g]
        if same:                 # same entries above the caps as the pass before: exact
            status = SOLVED
            break
        theta_new = _linear_root(K, Sa, radius, theta)
        _caps_at(K, Sa, M, theta_new, nu)
        if passes > 1 and theta_new <= theta:    # no progress: the root up to rounding
            theta = theta_new
            status = SOLVED
            break
        theta = theta_new
    info[0] = passes
    info[1] = theta
    if status != SOLVED:
        return status
    for g in range(n):  # (a loop: a slice assignment here adds ~2 s to the first compile)
        mu[g] = nu[g]
    _match_radius(mu, M, radius)
    return SOLVED


def project(X, groups_are_rows, nonneg, radius, mu, info):
    """:func:`project_ssn` on a C-contiguous float32/float64 X: builds the integer view of X and
    its sign mask (the one place that does), same arguments otherwise, returns the status."""
    itype, mask = SIGN_MASK[X.dtype]
    return project_ssn(X, X.view(itype), mask, groups_are_rows, nonneg, radius, mu, info)
