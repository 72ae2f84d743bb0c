"""Exact rescaling by powers of two, which the projections use to keep sums in range.

Multiplying by ``2**-e`` changes no significand, so an input scaled to a largest magnitude in
[0.5, 1) is solved exactly as given and the result scaled back; every projection here is
positively homogeneous, ``P_{c B}(c V) = c P_B(V)`` for ``c > 0``.
"""

from __future__ import annotations

import math


def scaled_radius(radius: float, e: int) -> float:
    """``radius * 2**-e``, or ``inf`` when that overflows: a radius so much larger than every
    rescaled entry (all below 1) that the ball contains the input (its norms are at most the
    number of entries)."""
    try:
        return math.ldexp(radius, -e)
    except OverflowError:
        return math.inf
