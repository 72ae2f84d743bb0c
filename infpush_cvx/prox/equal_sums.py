"""Euclidean projection onto two nonnegative vectors of equal sums (the TopPush dual's set).

The set (Li, Jin & Zhou, "Top Rank Optimization in Linear Time", NIPS 2014, section 3)::

    Omega = { (alpha, beta) in R^m x R^n : 0 <= alpha <= u,  beta >= 0,  sum(alpha) = sum(beta) }

with ``u = +inf`` for the truncated quadratic loss and ``u_i`` the weight of positive i for the
hinge. The projection of ``(a, b)`` minimises ``1/2 ||alpha - a||^2 + 1/2 ||beta - b||^2`` over
Omega. With a multiplier ``gamma`` for the equality, the KKT conditions give::

    alpha = clip(a - gamma, 0, u),   beta = max(b + gamma, 0),
    g(gamma) = sum(alpha(gamma)) - sum(beta(gamma)) = 0

``g`` is continuous, piecewise linear and nonincreasing, with breakpoints ``a_i``, ``a_i - u_i``
and ``-b_j``, so the projection is a one-dimensional root search, as in the paper. The paper
finds the root in linear time by splitting the breakpoints around a pivot (a quickselect, the
authors' C code); here it is a safeguarded Newton method on ``g``: every step costs
O(m + n), a Newton step from inside the linear piece holding the root lands on it exactly, and
a bracket (bisection when a step leaves it) makes every step progress. Inside the accelerated
gradient the previous root is the starting point (a warm start). Linear time per evaluation of
``g``, but not the paper's worst-case linear bound: the number of evaluations is not bounded by a
constant (it is returned by the kernel); no sorting alternative was timed against it.

The kernel is compiled with numba (``cache=True``), single-threaded.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._validation import check_vector

#: Newton/bisection steps before the kernel gives up (never reached in the tests: the bracket
#: halves at least every other step, so 2100 steps would exhaust float64 itself).
_MAX_STEPS = 2100


@nb.njit(cache=True, nogil=True)
def _evaluate(a, b, u, boxed, gamma):
    """``g(gamma)``, its right and left slopes (as counts) and ``sum(alpha) + sum(beta)``."""
    g = 0.0
    total = 0.0
    right = 0  # coordinates that change when gamma moves up from here
    left = 0   # ... and when it moves down
    for i in range(a.size):
        x = a[i] - gamma
        top = u[i] if boxed else np.inf
        if x > 0.0:
            if x >= top:
                g += top
                total += top
                if x == top:
                    right += 1
            else:
                g += x
                total += x
                right += 1
                left += 1
        elif x == 0.0 and top > 0.0:
            left += 1
    for j in range(b.size):
        y = b[j] + gamma
        if y > 0.0:
            g -= y
            total += y
            right += 1
            left += 1
        elif y == 0.0:
            right += 1
    return g, right, left, total


@nb.njit(cache=True, nogil=True)
def _next_breakpoint(a, b, u, boxed, gamma, upward):
    """The nearest breakpoint of g above (``upward``) or below ``gamma``; +-inf when none.

    Downward is upward on the negated line (a sign flip is exact)."""
    sign = 1.0 if upward else -1.0
    best = np.inf
    for k in range(a.size + b.size + (a.size if boxed else 0)):
        if k < a.size:
            p = a[k]
        elif k < a.size + b.size:
            p = -b[k - a.size]
        else:
            p = a[k - a.size - b.size] - u[k - a.size - b.size]
        if sign * gamma < sign * p < best:
            best = sign * p
    return sign * best


@nb.njit(cache=True, nogil=True)
def _root(a, b, u, boxed, gamma):
    """A root of g by Newton steps inside a shrinking bracket; returns (gamma, evaluations)."""
    lo, hi = -np.inf, np.inf
    eps = np.finfo(np.float64).eps
    for step in range(1, _MAX_STEPS + 1):
        g, right, left, total = _evaluate(a, b, u, boxed, gamma)
        if abs(g) <= 4.0 * eps * total or g == 0.0:
            return gamma, step
        if g > 0.0:
            lo = gamma
        else:
            hi = gamma
        slope = right if g > 0.0 else left
        new = gamma + g / slope if slope > 0 else _next_breakpoint(a, b, u, boxed, gamma, g > 0.0)
        if not lo < new < hi:
            if np.isinf(lo) or np.isinf(hi):
                # unreachable with finite data (g > 0 has a breakpoint above, g < 0 a moving
                # beta), kept so that the bracket logic below never sees an infinite midpoint
                return gamma, step
            new = 0.5 * (lo + hi)
            if not lo < new < hi:  # lo and hi are adjacent floats: the root is between them
                return gamma, step
        gamma = new
    return gamma, _MAX_STEPS


@nb.njit(cache=True, nogil=True)
def _project(a, b, u, boxed, gamma0, alpha, beta):
    gamma, steps = _root(a, b, u, boxed, gamma0)
    for i in range(a.size):
        x = a[i] - gamma
        if x < 0.0:
            x = 0.0
        if boxed and x > u[i]:
            x = u[i]
        alpha[i] = x
    for j in range(b.size):
        y = b[j] + gamma
        beta[j] = y if y > 0.0 else 0.0
    return gamma, steps


def project_equal_sums(a, b, upper=None, *, gamma0: float = 0.0, out=None):
    """Project ``(a, b)`` onto ``{0 <= alpha <= upper, beta >= 0, sum alpha = sum beta}``.

    ``upper``: None (no upper bound) or a length-m array of positive bounds. ``gamma0`` is a
    starting guess for the multiplier (the previous one, inside an iterative method). Returns
    ``(alpha, beta, gamma)`` with ``alpha = clip(a - gamma, 0, upper)``,
    ``beta = max(b + gamma, 0)``. ``out``: optional preallocated ``(alpha, beta)`` arrays.
    """
    a = check_vector(a, "a")  # (finite: check_vector refuses NaN and inf)
    b = check_vector(b, "b")
    if a.size == 0 or b.size == 0:
        raise ValueError(f"a and b must be nonempty, got lengths {a.size} and {b.size}")
    boxed = upper is not None
    if boxed:
        u = check_vector(upper, "upper", length=a.size)
        if not np.all(u > 0):
            raise ValueError("upper must hold finite positive bounds")
    else:
        u = np.empty(0)
    return _project_checked(a, b, u, boxed, float(gamma0), out)


def _project_checked(a, b, u, boxed, gamma0, out=None):
    """The kernel on validated float64 arrays (the solvers' entry point)."""
    alpha, beta = (np.empty(a.size), np.empty(b.size)) if out is None else out
    gamma, _ = _project(a, b, u, boxed, gamma0, alpha, beta)
    return alpha, beta, gamma
