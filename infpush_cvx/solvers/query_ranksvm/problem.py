"""RankSVM over queries: its objective and the duality-gap certificates of both losses.

Paper scaling (docs/mathematics.md, section 11), the pairs ``(i, j)`` of a
query with ``y_i > y_j``, ``x_ij = 1 - s_i + s_j``, ``s = X w``, ``z_ij = x_i - x_j``::

    P(w) = (lam/2) ||w||^2 + sum_q sum_{(i,j) in q} c_ij l(x_ij),    l = max(0, x) or its square

``c_ij = kappa_q sw_i sw_j`` (times ``y_i - y_j`` with ``pair_weight="label_difference"``), with
``kappa_q = omega_q / W_q`` (``normalization="query"``: each query's pair weights ``W_q`` summed
to 1, the queries weighted by ``omega_q``, the query weights normalised to sum 1 over the queries
with pairs) or ``kappa_q = qw_q / sum_q qw_q W_q`` (``"pairs"``: one mean over all pairs). The
pair weights sum to 1 either way. Seed scaling: ``lam_s ||w||^2 + T sum c_ij l(x_ij)`` with
``T`` the total weight (the query weights' sum over queries with pairs, or ``sum_q qw_q W_q``),
the same minimiser at ``lam = 2 lam_s / T``; Lee & Lin's and SVMrank's ``C``: ``C = 1/(lam T)``.

Duals (``alpha_ij >= 0``; ``v(alpha) = sum alpha_ij z_ij``)::

    squared hinge: D(alpha) = sum alpha - sum alpha^2 / (4 c) - ||v||^2 / (2 lam)
    hinge:         D(alpha) = sum alpha - ||v||^2 / (2 lam),   alpha_ij <= c_ij

Every sum over pairs is a per-query sum of the sorted scores
(:mod:`infpush_cvx.solvers.engines.query_pairs`): no array of pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from infpush_cvx._validation import check_choice, check_scalar
from infpush_cvx.data.queries import QueryData
from infpush_cvx.formulations import scaling as _scaling
from infpush_cvx.formulations._query_ranksvm import LOSSES, NORMALIZATIONS, PAIR_WEIGHTS
from infpush_cvx.formulations.objectives import penalty_term
from infpush_cvx.solvers.base import Problem
from infpush_cvx.solvers.engines.query_pairs import QueryPairs, SortedQueries
from infpush_cvx.solvers.result import relative_gap, roundoff_bound

#: The model's name in the registry and the catalog.
MODEL = "query_ranksvm"
#: ``s_j > s_i + ACTIVE``: the pairs with a positive margin violation ``x_ij > 0``.
ACTIVE = -1.0


def _columns(*columns) -> np.ndarray:
    return np.column_stack(columns)


@dataclass(frozen=True)
class Point:
    """A weight vector with its per-query-shifted scores, its sorted queries and its sums:
    ``higher_i = sum_j c_ij l'(x_ij)`` over i's lower documents and ``lower_j`` the same over
    j's higher ones (``l'`` the derivative of the loss, or of the smoothed hinge when ``mu``),
    ``pairs = X^T (higher - lower) = sum_ij c_ij l'(x_ij) z_ij`` and ``value`` the (smoothed)
    objective; ``mu`` None for the squared hinge."""

    w: np.ndarray
    s: np.ndarray
    sorted: SortedQueries
    higher: np.ndarray
    lower: np.ndarray
    pairs: np.ndarray
    value: float
    mu: float | None = None


@dataclass(frozen=True, eq=False)
class QueryRankSVMProblem(Problem):
    """RankSVM over the queries of ``data`` (a :class:`~infpush_cvx.data.queries.QueryData`)
    at ``lam`` (module docstring): ``loss`` "hinge" or "squared_hinge", ``normalization``
    "query" or "pairs", ``pair_weight`` "none" or "label_difference", ``scaling`` "paper" or
    "seed". Sample weights and query weights are the data's."""

    data: QueryData
    lam: float
    loss: str = "hinge"
    normalization: str = "query"
    pair_weight: str = "none"
    scaling: str = "paper"
    lam_paper: float = field(init=False, repr=False)

    model: ClassVar[str] = MODEL
    problem_class: ClassVar[str] = "QP"
    catalog_options: ClassVar[tuple] = ("loss", "normalization", "pair_weight", "scaling")

    def __post_init__(self):
        if not isinstance(self.data, QueryData):
            raise TypeError(f"data must be a QueryData, got {type(self.data).__name__}")
        lam = check_scalar(self.lam, "lam", positive=True)
        check_choice(self.loss, "loss", LOSSES)
        check_choice(self.normalization, "normalization", NORMALIZATIONS)
        check_choice(self.pair_weight, "pair_weight", PAIR_WEIGHTS)
        check_choice(self.scaling, "scaling", _scaling.SCALINGS)
        data = self.data
        if data.n_pairs == 0:
            raise ValueError("data: no query has a pair (every query has one label): the loss "
                             "is empty")
        sw = np.ones(data.n) if data.sample_weight is None else data.sample_weight
        qw = np.ones(data.n_queries) if data.query_weight is None else data.query_weight
        query = data.query_index
        g, h = self._separable(sw, np.ones(data.n))
        # each query's raw pair weight W_q: the sum over its pairs of sw_i sw_j (times
        # y_i - y_j with the label difference), by the sums over all pairs (offset -inf)
        every = QueryPairs(data.ptr, data.levels, g, h).at(np.zeros(data.n))
        W_q = np.bincount(query, every.rows(-np.inf, np.ones(data.n)), minlength=qw.size)
        W_q = np.where(data.pair_counts > 0, W_q, 0.0)
        if self.normalization == "query":
            total = float(qw[W_q > 0].sum())
            kappa = np.divide(qw / total, W_q, out=np.zeros_like(W_q), where=W_q > 0)
        else:
            total = float(qw @ W_q)
            kappa = qw / total
        g, h = self._separable(sw, kappa[query])
        lam_paper = lam if self.scaling == "paper" else \
            lam / (total * _scaling.penalty_coefficient("l2", "paper"))
        if not np.isfinite(lam_paper) or lam_paper <= 0:
            raise ValueError(f"lam={lam!r} is {lam_paper!r} in paper scaling: outside the "
                             f"float range")
        # X^T once, as rows (a sparse X's transpose is a new CSC view at every product)
        XT = data.X.T.tocsr() if data.is_sparse else data.X.T
        for name, value in (("lam", lam), ("lam_paper", float(lam_paper)), ("_XT", XT),
                            ("total_weight", total), ("query_pair_weights", W_q),
                            ("pair_structure", QueryPairs(data.ptr, data.levels, g, h))):
            object.__setattr__(self, name, value)

    def _separable(self, sw: np.ndarray, kappa: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(g, h)`` with ``c_ij = sum_r g_ri h_rj`` (i the higher document)."""
        if self.pair_weight == "none":
            return (kappa * sw)[None, :], sw[None, :]
        y = np.asarray(self.data.y, dtype=float)
        # (y_i - y_j) kappa sw_i sw_j = (kappa sw y)_i sw_j - (kappa sw)_i (sw y)_j
        return np.stack([kappa * sw * y, -kappa * sw]), np.stack([sw, sw * y])

    @property
    def X(self):
        return self.data.X

    def traits(self) -> dict:
        """The l2 penalty, no kernel; weights are the data's and every method takes them."""
        return {"penalty": "l2", "weighted": False, "kernel": False, "loss": self.loss}

    def scores(self, w: np.ndarray) -> np.ndarray:
        """``X w`` less each query's mean score: the differences, all the loss sees, unchanged,
        and the sums' magnitudes kept small."""
        s = np.asarray(self.X @ w, dtype=float).ravel()
        sizes = self.data.sizes
        means = np.add.reduceat(s, self.data.ptr[:-1]) / np.maximum(sizes, 1) \
            if s.size else np.zeros(0)
        return s - np.repeat(means, sizes)

    def transpose(self, r: np.ndarray) -> np.ndarray:
        """``X^T r``."""
        return np.asarray(self._XT @ r, dtype=float).ravel()

    # -- the exact losses -------------------------------------------------------------------

    def loss_value(self, sq: SortedQueries) -> float:
        """``sum c_ij l(x_ij)`` at the scores of ``sq``."""
        if self.loss == "squared_hinge":
            return self._squares(sq)
        s = sq.s
        R = sq.rows(ACTIVE, _columns(np.ones_like(s), s))
        return float(np.maximum((1.0 - s) * R[:, 0] + R[:, 1], 0.0).sum())

    def primal(self, w: np.ndarray, s: np.ndarray | None = None) -> float:
        """``P(w)`` in paper scaling (``s``: its scores, when known)."""
        s = self.scores(w) if s is None else s
        return self._penalty(w) + self.loss_value(self.pair_structure.at(s))

    def objective(self, w) -> float:
        """The primal objective at ``w`` in the caller's scaling."""
        w = np.asarray(w, dtype=float).ravel()
        if w.shape != (self.data.d,):
            raise ValueError(f"w must have length d={self.data.d}, got shape {w.shape}")
        return self.primal(w) * (1.0 if self.scaling == "paper" else self.total_weight)

    # -- points: the squared hinge, the smoothed hinge ---------------------------------------

    def point(self, w: np.ndarray, mu: float | None = None, s: np.ndarray | None = None
              ) -> Point:
        """The :class:`Point` of ``w`` (``s``: its scores, when known): the squared hinge's, or
        the hinge smoothed by ``mu`` (the Huber hinge ``h_mu``: 0 for ``x <= -mu/2``,
        ``(x + mu/2)^2 / (2 mu)`` within ``mu/2`` of 0, x above; its derivative the ramp
        ``clip((x + mu/2) / mu, 0, 1)``; ``h_mu - max(0, x)`` lies in ``[0, mu/8]``)."""
        s = self.scores(w) if s is None else s
        sq = self.pair_structure.at(s)
        ones = np.ones_like(s)
        F2 = _columns(ones, s)
        if mu is None:
            higher, value = self._squares(sq, sums=True)
            C = sq.cols(ACTIVE, F2)
            lower = (1.0 + s) * C[:, 0] - C[:, 1]          # sum_i c_ij x_ij (active)
            return Point(w, s, sq, 2.0 * higher, 2.0 * lower,
                         2.0 * self.transpose(higher - lower), self._penalty(w) + value)
        higher, lower, value = self.ramp_sums(sq, mu)
        return Point(w, s, sq, higher, lower, self.transpose(higher - lower),
                     self._penalty(w) + value, mu)

    def ramp_sums(self, sq: SortedQueries, mu: float):
        """``(higher, lower, value)`` of the hinge smoothed by ``mu`` at the scores of ``sq``:
        ``higher_i = sum_j c_ij a(x_ij)``, ``lower_j = sum_i c_ij a(x_ij)`` (the ramp ``a``)
        and ``sum c_ij h_mu(x_ij)``."""
        s, c = sq.s, 0.5 * mu
        full, zone, value = self._smoothed(sq, mu)
        b = s + ACTIVE - c                                 # x_ij + c = s_j - b_i
        F2 = _columns(np.ones_like(s), s)
        cfull = sq.cols(ACTIVE + c, F2)
        czone = sq.cols(ACTIVE - c, F2) - cfull
        higher = full[:, 0] + (zone[:, 1] - b * zone[:, 0]) / mu
        lower = cfull[:, 0] + ((s - ACTIVE + c) * czone[:, 0] - czone[:, 1]) / mu
        return higher, lower, value

    def slope(self, w, d, s, ds, mu: float) -> float:
        """The derivative of the smoothed objective along ``d`` at ``w`` (scores ``s``; ``ds``
        those of d): ``lam w.d - sum_i (higher_i - lower_i) ds_i`` (no pass over X: a query's
        ``higher - lower`` sums to 0, so the per-query shift of the scores does not enter)."""
        higher, lower, _ = self.ramp_sums(self.pair_structure.at(s), mu)
        return self.lam_paper * float(w @ d) - float((higher - lower) @ ds)

    def _penalty(self, w) -> float:
        return penalty_term(w, self.lam_paper, "l2", "paper")

    def _squares(self, sq: SortedQueries, sums: bool = False):
        """``sum c_ij max(0, x_ij)^2`` (and, with ``sums``, first ``sum_j c_ij max(0, x_ij)``
        for every i)."""
        s = sq.s
        R = sq.rows(ACTIVE, _columns(np.ones_like(s), s, s * s))
        u = 1.0 - s
        # sum_j c_ij (1 - s_i + s_j)^2 expanded; clipped: the terms can cancel to below 0
        value = float(np.maximum(u * u * R[:, 0] + 2.0 * u * R[:, 1] + R[:, 2], 0.0).sum())
        return (u * R[:, 0] + R[:, 1], value) if sums else value

    def _smoothed(self, sq: SortedQueries, mu: float):
        """``(full, zone, sum c h_mu(x))``: the sums of ``c (1, s_j, s_j^2)`` over each i's
        lower documents with ``x_ij > mu/2`` and with ``-mu/2 < x_ij <= mu/2``."""
        s, c = sq.s, 0.5 * mu
        F3 = _columns(np.ones_like(s), s, s * s)
        full = sq.rows(ACTIVE + c, F3)                     # x_ij > c
        zone = sq.rows(ACTIVE - c, F3) - full              # -c < x_ij <= c
        b = s + ACTIVE - c
        squares = np.maximum(zone[:, 2] - 2.0 * b * zone[:, 1] + b * b * zone[:, 0], 0.0)
        value = float(np.maximum((1.0 - s) * full[:, 0] + full[:, 1], 0.0).sum()) + \
            float(squares.sum()) / (2.0 * mu)
        return full, zone, value

    def value(self, w: np.ndarray, s: np.ndarray, mu: float | None = None) -> float:
        """The objective at ``w`` with scores ``s``: the squared hinge's, or the hinge's
        smoothed by ``mu`` (:meth:`point`); the line search's trials."""
        sq = self.pair_structure.at(s)
        loss = self._squares(sq) if mu is None else self._smoothed(sq, mu)[2]
        return self._penalty(w) + loss

    def gradient(self, point: Point) -> np.ndarray:
        """The gradient of the (smoothed) objective at ``point``."""
        return self.lam_paper * point.w - point.pairs

    def curvature_weights(self, point: Point) -> tuple[float, np.ndarray, list]:
        """``(factor, offsets)`` of the generalised Hessian ``lam I + factor sum_{in} c_ij z_ij
        z_ij^T``: the pairs in are those with ``s_j > s_i + offsets[0]`` less (when two)
        those with ``s_j > s_i + offsets[1]``."""
        if point.mu is None:
            return 2.0, [ACTIVE]
        c = 0.5 * point.mu
        return 1.0 / point.mu, [ACTIVE - c, ACTIVE + c]

    def _window(self, sums, offsets, F):
        out = sums(offsets[0], F)
        if len(offsets) > 1:
            out = out - sums(offsets[1], F)
        return out

    def hessian_product(self, point: Point, u: np.ndarray, base=None) -> np.ndarray:
        """``H u = lam u + factor X^T r``, ``r_k = sum_{in} c (a_k - a_j)`` over k's lower
        documents less the same over its higher ones, ``a = X u``; ``base``: the sums of ones
        of :meth:`hessian_base` (computed once per point)."""
        factor, offsets = self.curvature_weights(point)
        base = self.hessian_base(point) if base is None else base
        a = np.asarray(self.X @ u, dtype=float).ravel()
        sq = point.sorted
        r = a * base - self._window(sq.rows, offsets, a) - self._window(sq.cols, offsets, a)
        return self.lam_paper * u + factor * self.transpose(r)

    def hessian_base(self, point: Point) -> np.ndarray:
        """``sum_{in} c_ij`` over each document's lower and higher documents."""
        _, offsets = self.curvature_weights(point)
        ones = np.ones_like(point.s)
        sq = point.sorted
        return self._window(sq.rows, offsets, ones) + self._window(sq.cols, offsets, ones)

    def hessian(self, point: Point, deadline=None, block: int = 8192):
        """The generalised Hessian formed (d x d), or None when ``deadline`` passes first::

            sum_{in} c_ij z_ij z_ij^T = X^T diag(base) X - X^T M - M^T X,
            M_i = sum_{j lower, in} c_ij x_j

        by the per-query sums with d columns, over blocks of about ``block`` documents (whole
        queries; memory O(block d)): no pair is formed."""
        factor, offsets = self.curvature_weights(point)
        base = self.hessian_base(point)
        ptr, d = self.data.ptr, self.data.d
        G = np.zeros((d, d))
        first = 0
        while first < ptr.size - 1:
            if deadline is not None and deadline.expired():
                return None
            last = int(np.searchsorted(ptr, ptr[first] + block, side="right")) - 1
            last = min(max(last, first + 1), ptr.size - 1)
            rows = slice(ptr[first], ptr[last])
            Xb = self.X[rows]
            Xb = Xb.toarray() if hasattr(Xb, "toarray") else np.asarray(Xb, dtype=float)
            M = self._window(lambda off, F: point.sorted.rows(off, F, (first, last)), offsets,
                             Xb)
            # X^T diag(base) X - X^T M - M^T X = K + K^T with K = X^T (diag(base) X / 2 - M)
            M *= -1.0
            M += 0.5 * base[rows, None] * Xb
            half = np.asarray(self.X[rows].T @ M)
            G += half
            G += half.T
            first = last
        H = factor * G
        H[np.diag_indices_from(H)] += self.lam_paper
        return H

    # -- certificates -----------------------------------------------------------------------

    def certificate(self, point: Point) -> dict:
        """The certified gap at ``point`` (paper scaling): a dict with ``primal`` (the best of
        ``P(w)`` and, for the hinge, ``P(w(alpha))``), ``w`` (its point), ``dual``, ``gap``
        and ``roundoff``.

        Squared hinge: ``alpha = 2 c max(0, x)`` at its best multiple ``tau``:
        ``D(tau alpha) = tau A - tau^2 (B + C)``, ``A = sum alpha``, ``B = sum alpha^2/(4c)`` the
        loss, ``C = ||v||^2/(2 lam)``; ``D = A^2 / (4 (B + C))``.
        Hinge: ``alpha = c a(x)`` (the smoothed hinge's ramp, in ``[0, c]``) at its best
        multiple ``tau = min(1, lam A / ||v||^2)``: ``D = tau A - tau^2 ||v||^2 / (2 lam)``; its
        ``w(alpha) = tau v / lam`` is a primal candidate too.
        """
        lam, w = self.lam_paper, point.w
        A = float(point.higher.sum())
        v2 = float(point.pairs @ point.pairs)
        reach = float(np.abs(point.s).max(initial=0.0))
        if point.mu is None:
            loss = point.value - self._penalty(w)
            curvature = loss + v2 / (2.0 * lam)
            dual = A * A / (4.0 * curvature) if curvature > 0 else 0.0
            primal, best = point.value, w
            magnitude = 2.0 * lam * float(w @ w) + 8.0 * (1.0 + 2.0 * reach) ** 2
        else:
            tau = min(1.0, lam * A / v2) if v2 > 0 else 1.0
            dual = tau * A - tau * tau * v2 / (2.0 * lam)
            primal, best = self.primal(w, point.s), w
            w_alpha = (tau / lam) * point.pairs
            if np.all(np.isfinite(w_alpha)):
                other = self.primal(w_alpha)
                if other < primal:
                    primal, best = other, w_alpha
            # the ramp's sums divide by mu: their round-off is magnified by (1 + 2 R) / mu
            magnitude = (lam * float(w @ w) + 4.0 * (1.0 + 2.0 * reach)) * \
                (1.0 + (1.0 + 2.0 * reach) / point.mu)
        gap = relative_gap(primal, dual)
        roundoff = roundoff_bound(self.data.n + self.data.d + 2, magnitude, abs(primal))
        return {"primal": primal, "w": best, "dual": dual, "gap": gap, "roundoff": roundoff}

    def polished(self, point: Point, cap: int = 2000, deadline=None, tol: float = 0.0
                 ) -> dict | None:
        """The hinge's certificate at a dual point whose band is solved exactly: the pairs
        ``x_ij > mu/2`` at ``alpha = c``, those below ``-mu/2`` at 0, and the few in the band
        (listed, at most ``cap``) at the ``beta`` in ``[0, c]`` that maximises the dual
        ``sum alpha - ||v||^2 / (2 lam)`` (a box QP in the band's pairs, by L-BFGS-B); the
        primal candidate is ``w(alpha) = v / lam``. Where the hinge's optimum has the same
        pairs above, below and on the margin this is its exact solution: the smoothing's
        ``mu/8`` no longer bounds the gap. None when the band holds more than ``cap`` pairs
        (or none), or for the squared hinge; ``deadline`` stops the QP's iterations when it
        passes (its point so far is as feasible), and every 25 of them once the gap of their
        point is at most ``tol / 2``. A dict as :meth:`certificate`'s."""
        import scipy.optimize

        if point.mu is None:
            return None
        c, sq, lam = 0.5 * point.mu, point.sorted, self.lam_paper
        band = sq.band(ACTIVE - c, ACTIVE + c, cap)
        if band is None or band[0].size == 0:
            return None
        bi, bj, cb = band
        ones = np.ones_like(point.s)
        above = sq.rows(ACTIVE + c, ones)
        g_full = self.transpose(above - sq.cols(ACTIVE + c, ones))  # sum over x > c of c z
        Z = self.X[bi] - self.X[bj]
        Z = Z.toarray() if hasattr(Z, "toarray") else np.asarray(Z, dtype=float)

        def negative_dual(beta):
            v = g_full + Z.T @ beta
            return float(v @ v) / (2.0 * lam) - float(beta.sum()), Z @ v / lam - 1.0

        x = 1.0 - (point.s[bi] - point.s[bj])
        start = cb * np.clip((x + c) / point.mu, 0.0, 1.0)
        def gap_of(beta):
            v = g_full + Z.T @ beta
            dual = float(above.sum()) + float(beta.sum()) - float(v @ v) / (2.0 * lam)
            return v / lam, dual

        rounds = [0]

        def stop(intermediate_result):
            if deadline is not None and deadline.expired():
                raise StopIteration
            rounds[0] += 1
            if tol > 0 and rounds[0] % 25 == 0:
                w, dual = gap_of(np.clip(intermediate_result.x, 0.0, cb))
                if relative_gap(self.primal(w), dual) <= 0.5 * tol:
                    raise StopIteration

        found = scipy.optimize.minimize(negative_dual, start, jac=True, method="L-BFGS-B",
                                        callback=stop,
                                        bounds=scipy.optimize.Bounds(np.zeros_like(cb), cb),
                                        # 10 corrections (scipy's default): an iteration costs
                                        # O(maxcor n); 50 were slower in all (LETOR)
                                        options={"maxiter": 5000, "maxcor": 10, "ftol": 1e-16,
                                                 "gtol": 1e-13})
        w, dual = gap_of(np.clip(found.x, 0.0, cb))
        primal = self.primal(w)
        reach = float(np.abs(point.s).max(initial=0.0))
        magnitude = lam * float(w @ w) + 4.0 * (1.0 + 2.0 * reach)
        return {"primal": primal, "w": w, "dual": dual, "gap": relative_gap(primal, dual),
                "roundoff": roundoff_bound(self.data.n + self.data.d + bi.size + 2, magnitude,
                                           abs(primal))}

    def cvxpy_problem(self, form: str = "compact"):
        from infpush_cvx.formulations import query_ranksvm_problem

        return query_ranksvm_problem(self.data, self.lam, loss=self.loss,
                                     normalization=self.normalization,
                                     pair_weight=self.pair_weight, scaling=self.scaling,
                                     form=form)
