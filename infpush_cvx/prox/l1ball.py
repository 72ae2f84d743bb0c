"""Projections onto the simplex and the l1 ball (vectors).

Sorting method (Held, Wolfe & Crowder 1974; Duchi, Shalev-Shwartz, Singer & Chandra, ICML 2008):
with ``u`` the entries of ``|v|`` sorted decreasingly, the projection onto
``{x >= 0 : sum x = r}`` is ``max(v - theta, 0)`` with
``theta = (u_1 + ... + u_k - r) / k``, ``k = max{j : u_j > (u_1 + ... + u_j - r) / j}``.
The l1 ball of radius r is handled through the simplex applied to ``|v|``, then signs restored.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_float_array, check_radius


def _simplex_threshold(u_desc: np.ndarray, radius: float) -> float:
    """theta with ``sum_j max(u_j - theta, 0) = radius`` for float64 ``u_desc`` sorted decreasingly.

    The largest k with ``k u_k > u_1 + ... + u_k - radius`` is the number of entries above theta
    (k = 1 always qualifies since radius > 0).
    """
    cs = np.cumsum(u_desc)
    j = np.arange(1, u_desc.size + 1)
    k = int(np.nonzero(u_desc * j > cs - radius)[0][-1]) + 1
    return (cs[k - 1] - radius) / k


def _scaled(v: np.ndarray, radius: float):
    """``(|v| 2**-e, e)`` in float64, e chosen so the largest of |v| and radius is in [0.5, 1).

    Scaling by a power of two is exact, and afterwards no sum of n entries can overflow.
    """
    a = np.abs(v).astype(np.float64)
    top = max(float(a.max()) if a.size else 0.0, radius)
    e = int(np.frexp(top)[1]) if top > 0 else 0
    return np.ldexp(a, -e), e


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
    # Shift so the largest entry is 0: the projection is invariant to v -> v + c 1.
    shifted = v.astype(np.float64) - float(v.max())
    a, e = _scaled(shifted, radius)
    u = -a  # every entry <= 0 after the shift
    r = np.ldexp(radius, -e)
    u_desc = np.sort(u)[::-1]
    theta = _simplex_threshold(u_desc, r)
    x = np.ldexp(np.maximum(u - theta, 0.0), e)
    return x.astype(v.dtype)


def project_l1ball(v, radius):
    """Euclidean projection of a vector onto ``{x : ||x||_1 <= radius}``.

    Identity inside the ball; otherwise ``sign(v) * max(|v| - theta, 0)`` with theta from the
    simplex projection of ``|v|`` onto radius (Duchi et al., ICML 2008, section 4).
    """
    v = check_float_array(v, "v", ndim=1)
    radius = check_radius(radius)
    if radius == 0:
        return np.zeros_like(v)
    a, e = _scaled(v, radius)
    r = np.ldexp(radius, -e)
    if a.sum() <= r:
        return v.copy()
    theta = _simplex_threshold(np.sort(a)[::-1], r)
    mag = np.ldexp(np.maximum(a - theta, 0.0), e).astype(v.dtype)
    return np.copysign(mag, v).astype(v.dtype)
