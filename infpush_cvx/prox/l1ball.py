"""Projections onto the simplex and the l1 ball (vectors).

Sorting method (Held, Wolfe & Crowder 1974; Duchi, Shalev-Shwartz, Singer & Chandra, ICML 2008):
with ``u`` the entries of ``v`` sorted decreasingly, the projection onto
``{x >= 0 : sum x = r}`` is ``max(v - theta, 0)`` with
``theta = (u_1 + ... + u_k - r) / k``, ``k = max{j : u_j > (u_1 + ... + u_j - r) / j}``.
The l1 ball of radius r is handled through the simplex applied to ``|v|``, then signs restored.
Both are computed from the breakpoints ``b_j = u_1 + ... + u_j - j u_j`` (``k`` is the number of
breakpoints below r), summed from differences of neighbours: exact shares of the radius for
entries of any magnitude, and no overflow.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_float_array, check_radius


def _breakpoints(u_desc: np.ndarray) -> np.ndarray:
    """``b_k = (u_1 + ... + u_k) - k u_k`` for ``u_desc`` sorted decreasingly, without cancellation.

    ``b_1 = 0`` and ``b_k = b_{k-1} + (k - 1)(u_{k-1} - u_k)``: a running sum of nonnegative
    terms, each from a difference of neighbours, so it stays accurate when the entries are huge
    next to the radius (the prefix sums ``u_1 + ... + u_k`` would round the radius away). A
    breakpoint past the float range becomes +inf, which no finite radius reaches.
    """
    with np.errstate(over="ignore"):
        steps = np.arange(1, u_desc.size) * (u_desc[:-1] - u_desc[1:])
        return np.concatenate([[0.0], np.cumsum(steps)])


def _project_simplex_values(u: np.ndarray, radius: float) -> np.ndarray:
    """``max(u - theta, 0)`` summing to ``radius`` for float64 ``u`` (any order, any signs).

    With ``k`` the number of breakpoints ``b_k <= radius`` (at least 1: ``b_1 = 0``),
    ``theta = u_k - (radius - b_k) / k`` (sorted order), so the result is computed as
    ``max((u - u_k) + (radius - b_k) / k, 0)``: the entries at the top keep their exact share of
    the radius whatever their magnitude, and nothing overflows (an entry far below ``u_k`` goes
    to -inf, then 0).
    """
    u_desc = np.sort(u)[::-1]
    b = _breakpoints(u_desc)
    k = int(np.count_nonzero(b <= radius))
    offset = (radius - b[k - 1]) / k
    with np.errstate(over="ignore"):
        return np.maximum((u - u_desc[k - 1]) + offset, 0.0)


def project_simplex(v, radius=1.0):
    """Euclidean projection of a vector onto ``{x >= 0 : sum(x) = radius}`` (radius > 0).

    Returns ``max(v - theta, 0)`` (Duchi et al., ICML 2008, Figure 1), in the dtype of ``v``.
    """
    v = check_float_array(v, "v", ndim=1)
    radius = check_radius(radius)
    if radius <= 0:
        raise ValueError(f"radius must be positive for the simplex, got {radius!r}")
    if v.size == 0:
        raise ValueError("v must be non-empty for the simplex projection")
    return _project_simplex_values(v.astype(np.float64), radius).astype(v.dtype)


def project_l1ball(v, radius):
    """Euclidean projection of a vector onto ``{x : ||x||_1 <= radius}``.

    Identity inside the ball; otherwise ``sign(v) * max(|v| - theta, 0)`` with theta from the
    simplex projection of ``|v|`` onto radius (Duchi et al., ICML 2008, section 4).
    """
    v = check_float_array(v, "v", ndim=1)
    radius = check_radius(radius)
    if radius == 0:
        return np.zeros_like(v)
    a = np.abs(v).astype(np.float64)
    with np.errstate(over="ignore"):  # a sum past the float range is outside every ball
        inside = a.sum() <= radius
    if inside:
        return v.copy()
    return np.copysign(_project_simplex_values(a, radius), v).astype(v.dtype)
