"""Detect degenerate Infinite Push instances (``w* = 0``).

At ``w = 0`` every hinge equals 1 and the subdifferential of the max-mean hinge term is the convex
hull of ``x_j^- - mean(x^+)``. Hence ``w* = 0`` (for every lambda, both penalties) exactly when the
mean positive lies in the convex hull of the negatives (docs/mathematics.md, section 1.7). Then the
optimal value is 1 in paper scaling and m in seed scaling.

The test is an LP: minimise ``||Xn^T mu - mean(Xp)||_1`` over the simplex; the instance is
degenerate when the minimum is zero (up to a tolerance relative to the data's scale). When it is
not, the LP dual gives a separating direction, a certificate of non-degeneracy. With sample
weights the mean positive is the weighted mean ``sum_i wp_i x_i / sum_i wp_i``; the negatives'
weights do not matter (the hull is the same).

Both tests are scale-invariant: the data are divided by their largest absolute entry first, so
multiplying X by any positive factor gives the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize
import scipy.sparse as sp

from .._validation import check_int, check_scalar, check_time_limit
from .containers import BipartiteData, check_bipartite


class DegeneracyCheckFailed(RuntimeError):
    """The LP of :func:`check_degeneracy` did not reach an optimum (time limit or HiGHS failure)."""


@dataclass(frozen=True)
class DegeneracyReport:
    """Outcome of :func:`check_degeneracy`.

    ``degenerate``: the mean positive lies in the hull of the negatives (so ``w* = 0``).
    ``distance``: l1 distance from the mean positive to that hull (0 when degenerate).
    ``weights``: the convex combination of negatives closest to the mean positive.
    """

    degenerate: bool
    distance: float
    weights: np.ndarray
    tolerance: float

    def __str__(self) -> str:
        if self.degenerate:
            return ("degenerate: the mean positive lies in the convex hull of the negatives, "
                    "so w* = 0 and P* = 1 (paper scaling) for every lambda")
        return (f"non-degenerate: the mean positive is at l1 distance {self.distance:.3g} "
                "from the convex hull of the negatives")


def mean_positive(data: BipartiteData) -> np.ndarray:
    """The (weighted) mean positive ``sum_i wp_i x_i / sum_i wp_i``."""
    return np.asarray(data.Xp.T @ data.pos_weights).ravel() / data.wp_sum


def _in_unit_scale(data) -> tuple:
    """``(unit, Xn / unit, mean positive / unit)`` of ``data`` (TypeError unless it is a
    BipartiteData), ``unit`` the largest absolute entry of the data (1 for all-zero data): the
    scale-invariant form both tests work on."""
    check_bipartite(data)
    largest = max(float(abs(X).max()) if X.shape[0] else 0.0 for X in (data.Xp, data.Xn))
    unit = largest if largest > 0 else 1.0
    return unit, data.Xn / unit, mean_positive(data) / unit


def check_degeneracy(data: BipartiteData, *, rtol: float = 1e-9,
                     time_limit: float | None = None) -> DegeneracyReport:
    """Decide whether the instance has ``w* = 0`` by an LP solved with HiGHS (scipy).

    ``distance`` and ``tolerance`` are in the data's units; the decision compares
    ``distance <= rtol * d * (largest absolute entry)``, so it is scale-invariant.
    ``time_limit`` (seconds, None: none) is HiGHS's; :class:`DegeneracyCheckFailed` (a
    RuntimeError) when the LP stops without an optimum, on that limit or otherwise.
    """
    unit, Xn, mean_pos = _in_unit_scale(data)
    rtol = check_scalar(rtol, "rtol", positive=True)
    time_limit = check_time_limit(time_limit)
    Xn = sp.csc_matrix(Xn, dtype=np.float64)
    n, d = Xn.shape
    # Variables [mu (n), r_plus (d), r_minus (d)]: Xn^T mu + r+ - r- = mean, 1^T mu = 1.
    c = np.concatenate([np.zeros(n), np.ones(2 * d)])
    eye = sp.identity(d, format="csc")
    A_eq = sp.bmat([[Xn.T, eye, -eye], [np.ones((1, n)), None, None]], format="csc")
    b_eq = np.concatenate([mean_pos, [1.0]])
    options = {} if time_limit is None else {"time_limit": time_limit}
    res = scipy.optimize.linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs",
                                 options=options)
    if res.status != 0:
        raise DegeneracyCheckFailed(f"degeneracy LP failed: {res.message}")
    tol = rtol * max(1, d)
    distance = float(res.fun)
    return DegeneracyReport(degenerate=distance <= tol, distance=distance * unit,
                            weights=res.x[:n], tolerance=tol * unit)


def separating_direction(data: BipartiteData, *, max_iter: int = 50):
    """A direction v with ``v . mean(Xp) > max_j v . x_j^-``, or None if none was found.

    Such a v certifies that the mean positive is outside the hull of the negatives (so the
    instance is not degenerate) at O(max_iter (n d)) cost, before the LP of
    :func:`check_degeneracy` is needed. The search is Gilbert's algorithm (1966) for the point of
    ``conv{x_j^- - mean(Xp)}`` nearest the origin, from the centroid; its iterate ``p`` gives the
    candidate ``v = -p``. None decides nothing.
    """
    _, Xn, mean_pos = _in_unit_scale(data)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    p = np.asarray(Xn.mean(axis=0)).ravel() - mean_pos
    for _ in range(max_iter):
        v = -p
        proj = np.asarray(Xn @ v).ravel() - mean_pos @ v  # (x_j - mean_pos) . v
        j = int(np.argmax(proj))
        if proj[j] < -1e-12 * max(1.0, float(np.abs(v).sum())):
            return v
        y = np.asarray(Xn[j].toarray()).ravel() if sp.issparse(Xn) else Xn[j]
        step = y - mean_pos - p
        denom = float(step @ step)
        t = min(1.0, max(0.0, -float(p @ step) / denom)) if denom > 0 else 0.0
        if t == 0.0:
            return None  # p is the nearest point: the origin is in the hull, or touches it
        p = p + t * step
    return None


def is_degenerate(data: BipartiteData, *, rtol: float = 1e-9) -> bool:
    """True when ``w* = 0`` (the mean positive lies in the convex hull of the negatives)."""
    return check_degeneracy(data, rtol=rtol).degenerate
