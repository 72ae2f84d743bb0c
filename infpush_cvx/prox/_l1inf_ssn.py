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
so after MAX_PASSES passes the kernel gives up and the caller falls back to
:mod:`._l1inf_newton`'s candidate-window search (never seen on those inputs).

The last linearized solve gives theta and the caps, rescaled once to sum to the radius
(``match_radius``, as the sort method does). Entries are assumed in ``[2**-900, 2**900]`` for
the largest magnitude (sums cannot overflow, entries near the cap are normal numbers); the
caller rescales otherwise. Compiled with numba (``cache=True``), single-threaded.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

# the statistics pass (max, sum, NaN/inf flag), the minorant root, the output pass and the
# rescaling bounds are the window search's
from ._l1inf_newton import _BIG, _ROWS, _TINY, _lower_bound_root, _stats_cols, apply_caps
from ._l1inf_newton import max_sum_rows

# Give up (the caller falls back to the candidate-window search) after this many counting
# passes; 2-10 were measured (module docstring): a guard against pathological slow climbs.
MAX_PASSES = 60

# Status codes of project_ssn.
SOLVED = 0          # caps in mu, projection in out (if out is not empty)
INSIDE = 1          # V already lies in the ball
NOT_FINITE = 2      # V holds NaN or inf
RESCALE = 3         # magnitudes outside [2**-900, 2**900]: info[2] = exponent to scale by 2**-e
NO_CONVERGENCE = 4  # gave up after MAX_PASSES passes


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
        if nonneg:
            for i in range(m):
                a = float(X[g, i])
                above = a > t
                c += above
                s += a if above else 0.0
        else:
            for i in range(m):
                a = float(abs(X[g, i]))
                above = a > t
                c += above
                s += a if above else 0.0
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
            x = X[i0 + r, g]
            a = float(x if nonneg else abs(x))
            above = a > t
            c += above
            s += a if above else 0.0
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
def _apply(X, mu, groups_are_rows, nonneg, out):
    """:func:`._l1inf_newton.apply_caps` with the caps rounded toward zero in X's dtype (so
    that float32 results stay inside the ball)."""
    cap = np.empty(mu.shape[0], X.dtype)
    for g in range(mu.shape[0]):
        cap[g] = mu[g]
        if cap[g] > mu[g]:
            cap[g] = np.nextafter(cap[g], X.dtype.type(0))
    apply_caps(X, cap, groups_are_rows, nonneg, out)


@nb.njit(cache=True, nogil=True)
def project_ssn(X, Xi, sign_mask, groups_are_rows, nonneg, radius, mu, out, info):
    """Caps ``mu`` (float64) of the l1,inf projection of ``|X|`` (or ``max(X, 0)``) and, when
    ``out`` is not empty, the projection itself written into ``out`` (X's shape and dtype).

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
        no_probes = np.empty((0, n), np.float64)
        _stats_cols(X, nonneg, no_probes, M, S, np.empty((0, n), np.int64), no_probes)
    info[0] = 0.0
    info[1] = 0.0
    info[2] = 0.0
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
    theta = _lower_bound_root(M, S, np.full(n, m, np.int64), radius)
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
    if out.size > 0:
        _apply(X, mu, groups_are_rows, nonneg, out)
    return SOLVED
