"""Detect degenerate Infinite Push instances (``w* = 0``).

At ``w = 0`` every hinge equals 1 and the subdifferential of the max-mean hinge term is the convex
hull of ``x_j^- - mean(x^+)``. Hence ``w* = 0`` (for every lambda, both penalties) exactly when the
mean positive lies in the convex hull of the negatives (docs/mathematics.md, section 1.7). Then the
optimal value is 1 in paper scaling and m in seed scaling.

The test is an LP: minimise ``||Xn^T mu - mean(Xp)||_1`` over the simplex; the instance is
degenerate when the minimum is zero (up to a tolerance relative to the data's scale). When it is
not, the LP dual gives a separating direction, a certificate of non-degeneracy. With many
negatives it is solved by column generation over them (:func:`check_degeneracy`). With sample
weights the mean positive is the weighted mean ``sum_i wp_i x_i / sum_i wp_i``; the negatives'
weights do not matter (the hull is the same).

Both tests are scale-invariant: the data are divided by their largest absolute entry first, so
multiplying X by any positive factor gives the same answer.
"""

from __future__ import annotations

import time
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
    ``direction``: the LP's dual direction v (``|v_k| <= 1``), along which the mean positive
    scores above every negative by at least ``distance``: ``v . mean(Xp) - max_j v . x_j^- >=
    distance`` (up to the LP's tolerances; at w = t v, t small, the Infinite Push loss is
    ``1 - t distance`` or less, the steepest decrease in this norm). Zero when degenerate.
    """

    degenerate: bool
    distance: float
    weights: np.ndarray
    tolerance: float
    direction: np.ndarray | None = None

    def __str__(self) -> str:
        if self.degenerate:
            return ("degenerate: the mean positive lies in the convex hull of the negatives, "
                    "so w* = 0 and P* = 1 (paper scaling) for every lambda")
        return (f"non-degenerate: the mean positive is at l1 distance {self.distance:.3g} "
                "from the convex hull of the negatives")


def mean_positive(data: BipartiteData) -> np.ndarray:
    """The (weighted) mean positive ``sum_i wp_i x_i / sum_i wp_i``."""
    return np.asarray(data.Xp.T @ data.pos_weights).ravel() / data.wp_sum


def _largest_absolute(X) -> float:
    """``abs(X).max()`` without the copy ``abs(X)`` of a dense X (the same number)."""
    if sp.issparse(X):
        return float(abs(X).max())
    return max(float(X.max()), -float(X.min()))


def _unit(data) -> float:
    """The largest absolute entry of ``data`` (1 for all-zero data; TypeError unless it is a
    BipartiteData): the unit of the scale-invariant form both tests work in."""
    check_bipartite(data)
    largest = max(_largest_absolute(X) if X.shape[0] else 0.0 for X in (data.Xp, data.Xn))
    return largest if largest > 0 else 1.0


def _in_unit_scale(data) -> tuple:
    """``(unit, Xn / unit, mean positive / unit)`` of ``data``, ``unit`` from :func:`_unit`."""
    unit = _unit(data)
    return unit, data.Xn / unit, mean_positive(data) / unit


#: Column generation (:func:`check_degeneracy`): the LP over all negatives is solved whole below
#: this many columns, else over a growing subset of them (the first of ``_SUBSET`` columns or
#: ``4 (d + 1)``, whichever is more; ``_ADDED`` or ``2 (d + 1)`` more a round).
_WHOLE, _SUBSET, _ADDED = 4000, 1000, 500


def _hull_lp(XnT, mean_pos: np.ndarray, time_limit: float | None):
    """``min ||XnT mu - mean_pos||_1`` over the simplex by HiGHS (scipy): variables
    ``[mu, r+, r-]`` with ``XnT mu + r+ - r- = mean_pos``, ``1^T mu = 1``; the scipy result (its
    ``eqlin.marginals`` are the duals ``(y, z)`` of the two blocks of rows)."""
    d, k = XnT.shape
    c = np.concatenate([np.zeros(k), np.ones(2 * d)])
    eye = sp.identity(d, format="csc")
    A_eq = sp.bmat([[XnT, eye, -eye], [np.ones((1, k)), None, None]], format="csc")
    b_eq = np.concatenate([mean_pos, [1.0]])
    # (HiGHS's presolve finds little to remove in these LPs: without it they took 15-40% less
    # on a8a, its 150 x 1,500 samples, Spambase and 10^8-pair degenerate and binary sets)
    options = {"presolve": False}
    if time_limit is not None:
        options["time_limit"] = max(time_limit, 1e-6)
    res = scipy.optimize.linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs",
                                 options=options)
    if res.status != 0:
        raise DegeneracyCheckFailed(f"degeneracy LP failed: {res.message}")
    return res


def check_degeneracy(data: BipartiteData, *, rtol: float = 1e-9,
                     time_limit: float | None = None) -> DegeneracyReport:
    """Decide whether the instance has ``w* = 0`` by an LP solved with HiGHS (scipy).

    ``distance`` and ``tolerance`` are in the data's units; the decision compares
    ``distance <= rtol * d * (largest absolute entry)``, so it is scale-invariant.
    ``time_limit`` (seconds, None: none) covers every LP; :class:`DegeneracyCheckFailed` (a
    RuntimeError) when an LP stops without an optimum, on that limit or otherwise.

    With many negatives the LP is solved by column generation (Dantzig & Wolfe 1960): over a
    subset S of them (spread evenly over the rows), then S grown by the negatives of most
    negative reduced cost ``-(y . x_j + z)``, ``(y, z)`` the restricted LP's duals, until none
    is negative (then S's optimum is the whole LP's) or the distance is zero (degenerate: S's
    weights already put the mean positive in the hull). A point of the hull needs at most
    ``d + 1`` negatives (Caratheodory), so S stays small: on a8a (14,264 distinct negatives)
    two rounds over 1,200 of them, 0.09 s against 0.49 s for the whole LP.
    """
    started = time.perf_counter()
    unit, Xn, mean_pos = _in_unit_scale(data)
    rtol = check_scalar(rtol, "rtol", positive=True)
    time_limit = check_time_limit(time_limit)
    Xn = sp.csr_matrix(Xn, dtype=np.float64)
    n, d = Xn.shape
    XnT = Xn.T.tocsc()
    tol = rtol * max(1, d)
    first = max(_SUBSET, 4 * (d + 1))
    cols = (np.arange(n) if n <= max(_WHOLE, 4 * first)
            else np.unique(np.linspace(0, n - 1, first).astype(np.intp)))
    while True:
        left = None if time_limit is None else time_limit - (time.perf_counter() - started)
        if left is not None and left <= 0:
            raise DegeneracyCheckFailed(f"degeneracy LP failed: time limit of {time_limit:g} s "
                                        f"reached")
        res = _hull_lp(XnT[:, cols] if cols.size < n else XnT, mean_pos, left)
        distance = float(res.fun)
        if distance <= tol or cols.size == n:
            break
        y, z = res.eqlin.marginals[:d], res.eqlin.marginals[d]
        reduced = -(Xn @ y + z)
        reduced[cols] = np.inf
        # (y, z - eps) is feasible for the whole LP's dual when no reduced cost is below -eps,
        # so S's optimum is then within eps of the whole LP's
        entering = np.flatnonzero(reduced < -1e-9)
        if entering.size == 0:
            break
        added = max(_ADDED, 2 * (d + 1))
        entering = entering[np.argsort(reduced[entering], kind="stable")[:added]]
        cols = np.union1d(cols, entering)
    weights = np.zeros(n)
    weights[cols] = res.x[:cols.size]
    degenerate = distance <= tol
    # (y . x_j + z <= 0 for every negative and y . mean + z = distance: LP duality)
    direction = np.zeros(d) if degenerate else np.array(res.eqlin.marginals[:d], float)
    return DegeneracyReport(degenerate=degenerate, distance=distance * unit, weights=weights,
                            tolerance=tol * unit, direction=direction)


def separating_direction(data: BipartiteData, *, max_iter: int = 50, deadline=None):
    """A direction v with ``v . mean(Xp) > max_j v . x_j^-``, or None if none was found.

    Such a v certifies that the mean positive is outside the hull of the negatives (so the
    instance is not degenerate) at O(max_iter (n d)) cost, before the LP of
    :func:`check_degeneracy` is needed. The search is Gilbert's algorithm (1966) for the point of
    ``conv{x_j^- - mean(Xp)}`` nearest the origin, from the centroid; its iterate ``p`` gives the
    candidate ``v = -p``. None decides nothing. ``deadline`` (a solver's
    :class:`~infpush_cvx.solvers.engines.deadline.Deadline`, None: none): an iteration (a pass
    over Xn) is begun only when one as long as the last fits before it; else None.
    """
    # (in units of the largest entry, without a scaled copy of Xn: on 50,000 x 300 dense rows
    # the copy took up to 0.3 s of a 1 s time limit)
    unit = _unit(data)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    Xn = sp.csr_matrix(data.Xn) if sp.issparse(data.Xn) else data.Xn
    mean_pos = mean_positive(data) / unit
    p = np.asarray(Xn.mean(axis=0)).ravel() / unit - mean_pos
    last = 0.0
    for _ in range(max_iter):
        if deadline is not None:
            if not deadline.allows(last):
                return None
            begun = deadline.elapsed()
        v = -p
        proj = np.asarray(Xn @ v).ravel() / unit - mean_pos @ v  # (x_j - mean_pos) . v
        j = int(np.argmax(proj))
        if proj[j] < -1e-12 * max(1.0, float(np.abs(v).sum())):
            return v
        y = _row(Xn, j) / unit
        step = y - mean_pos - p
        denom = float(step @ step)
        t = min(1.0, max(0.0, -float(p @ step) / denom)) if denom > 0 else 0.0
        if t == 0.0:
            return None  # p is the nearest point: the origin is in the hull, or touches it
        p = p + t * step
        if deadline is not None:
            last = deadline.elapsed() - begun
    return None


def _row(X, j: int) -> np.ndarray:
    """Row j of X as a dense vector (of a CSR matrix from its arrays: scipy's row indexing
    cost about 0.1 ms a call, most of the separation test's time on the a8a samples)."""
    if not sp.issparse(X):
        return X[j]
    out = np.zeros(X.shape[1])
    start, stop = X.indptr[j], X.indptr[j + 1]
    out[X.indices[start:stop]] = X.data[start:stop]
    return out


def is_degenerate(data: BipartiteData, *, rtol: float = 1e-9) -> bool:
    """True when ``w* = 0`` (the mean positive lies in the convex hull of the negatives)."""
    return check_degeneracy(data, rtol=rtol).degenerate
