"""Separable operators: soft thresholding (prox of the l1 norm) and box projection (clipping).

Both act entry by entry, accept arrays of any shape and return the input's float dtype.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_float_array, check_scalar, floor_in_dtype


def soft_threshold(v, tau):
    """Prox of ``tau * ||.||_1``: ``sign(v) * max(|v| - tau, 0)`` entry by entry.

    By Moreau, ``soft_threshold(v, tau) = v - project_box(v, -tau, tau)`` (the l_inf ball of
    radius tau is the unit ball of the dual norm, scaled). Used by the l1 w-step of the
    Rakotomamonjy (ICML 2012) ADMM and the Rank2Plan accelerated proximal gradient.
    """
    v = check_float_array(v, "v")
    tau = check_scalar(tau, "tau", nonnegative=True)
    t = v.dtype.type(tau)
    # |v| - t may round up to a nonzero value when t is huge; the max/min clamp keeps the sign.
    return np.sign(v) * np.maximum(np.abs(v) - t, v.dtype.type(0))


def project_box(v, lower, upper):
    """Euclidean projection onto the box ``{x : lower <= x <= upper}``: ``clip(v, lower, upper)``.

    ``lower`` and ``upper`` are scalars with ``lower <= upper``. For the RankSVM dual
    (Agarwal 2011, eq. 4.18 / Figure 3) the box is ``0 <= alpha_ij <= C / (m n)``.
    """
    v = check_float_array(v, "v")
    lo = check_scalar(lower, "lower")
    hi = check_scalar(upper, "upper")
    if lo > hi:
        raise ValueError(f"lower must not exceed upper, got lower={lo!r} > upper={hi!r}")
    # Round the bounds inward in the output dtype so the result lies inside the real box.
    lo_t, hi_t = -floor_in_dtype(-lo, v.dtype), floor_in_dtype(hi, v.dtype)
    if lo_t > hi_t:  # a box thinner than one ulp of the dtype: no representable point inside
        lo_t = hi_t = v.dtype.type(lo)
    return np.clip(v, lo_t, hi_t)
