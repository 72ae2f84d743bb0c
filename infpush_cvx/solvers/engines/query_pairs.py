"""Sums over the pairs of each query from its sorted scores (RankSVM over queries).

The pairs of a query are its documents ``(i, j)`` with ``y_i > y_j`` (``levels[i] > levels[j]``);
pairs across queries never enter. With scores ``s`` and an ``offset`` (``-1`` for the hinge's
active pairs ``x_ij = 1 - s_i + s_j > 0``, ``-1 +- mu/2`` for a smoothed hinge's band), the pair
(i, j) is *in* when ``s_j > s_i + offset``. For per-document values ``V`` (n x K columns)::

    lower(V)_i = sum_{j in q(i), level_j < level_i, s_j > s_i + offset} V_j
    upper(U)_j = sum_{i in q(j), level_i > level_j, s_i + offset < s_j} U_i

The same comparison decides both, so a pair is counted in one exactly when it is in the other.
With the documents of a query sorted by score, the thresholds ``s_i + offset`` come in the same
order: walking the documents in descending score, the lower documents above the threshold only
grow, and each is added once to a Fenwick tree over the query's label levels (Lee & Lin, "Large-
scale linear RankSVM", Neural Computation 2014, section 3: order statistics, here with the level
as key). One sort per query and ``O(n_q log L_q)`` additions and queries of K values each:
``O(n_q log n_q + n_q K log L_q)`` per query, memory linear in the documents, no array of pairs.

A pair's weight is a sum of separable terms ``c_ij = sum_r g_ri h_rj`` (one term for
``sw_i sw_j kappa_q``; two for the label difference ``(y_i - y_j)``), so the weighted sums
:meth:`SortedQueries.rows` (``sum_j c_ij F_j`` over the lower documents of i) and
:meth:`SortedQueries.cols` (``sum_i c_ij F_i`` over the higher documents of j) are R calls of
the kernels with K columns each, batched into one.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _local_levels(ptr, levels):
    """Each document's rank among the distinct levels of its query (0 the lowest), and the
    number of distinct levels in each query."""
    local = np.empty(levels.size, dtype=np.int64)
    counts = np.zeros(ptr.size - 1, dtype=np.int64)
    for q in range(ptr.size - 1):
        a, b = ptr[q], ptr[q + 1]
        if b == a:
            continue
        order = np.argsort(levels[a:b], kind="mergesort")
        rank, previous = 0, levels[a + order[0]]
        for k in range(b - a):
            i = a + order[k]
            if levels[i] != previous:
                rank += 1
                previous = levels[i]
            local[i] = rank
        counts[q] = rank + 1
    return local, counts


@numba.njit(cache=True)
def _sorted_within(ptr, s):
    """The document indices sorted by ascending score within each query."""
    order = np.empty(s.size, dtype=np.int64)
    for q in range(ptr.size - 1):
        a, b = ptr[q], ptr[q + 1]
        if b > a:
            order[a:b] = a + np.argsort(s[a:b], kind="mergesort")
    return order


@numba.njit(cache=True)
def _fenwick_add(tree, position, V, row):
    """Add ``V[row]`` at ``position`` (0-based) of the Fenwick tree ``tree`` (levels x K)."""
    K = V.shape[1]
    k = position + 1
    while k < tree.shape[0]:
        for c in range(K):
            tree[k, c] += V[row, c]
        k += k & -k


@numba.njit(cache=True)
def _fenwick_prefix(tree, count, out, row, sign):
    """``out[row] += sign * (the sum of the values added at positions < count)``."""
    K = out.shape[1]
    k = count
    while k > 0:
        for c in range(K):
            out[row, c] += sign * tree[k, c]
        k -= k & -k


@numba.njit(cache=True)
def _lower(ptr, order, local, n_local, s, offset, V, out, first, base):
    K = V.shape[1]
    out[:, :] = 0.0
    tree = np.zeros((n_local.max() + 1 if n_local.size else 1, K))
    for q in range(first, ptr.size - 1):
        a, b = ptr[q], ptr[q + 1]
        tree[:n_local[q] + 1, :] = 0.0
        p = b - 1
        for k in range(b - 1, a - 1, -1):  # documents i by descending score
            i = order[k]
            threshold = s[i] + offset
            while p >= a and s[order[p]] > threshold:
                j = order[p]
                _fenwick_add(tree[:n_local[q] + 1], local[j], V, j - base)
                p -= 1
            _fenwick_prefix(tree, local[i], out, i - base, 1.0)


@numba.njit(cache=True)
def _upper(ptr, order, local, n_local, s, offset, U, out, first, base):
    K = U.shape[1]
    out[:, :] = 0.0
    tree = np.zeros((n_local.max() + 1 if n_local.size else 1, K))
    for q in range(first, ptr.size - 1):
        a, b = ptr[q], ptr[q + 1]
        tree[:n_local[q] + 1, :] = 0.0
        p = a
        for k in range(a, b):  # documents j by ascending score
            j = order[k]
            while p < b and s[order[p]] + offset < s[j]:
                i = order[p]
                _fenwick_add(tree[:n_local[q] + 1], local[i], U, i - base)
                p += 1
            # the levels above j's: all added less those at or below it
            _fenwick_prefix(tree, n_local[q], out, j - base, 1.0)
            _fenwick_prefix(tree, local[j] + 1, out, j - base, -1.0)


class QueryPairs:
    """The pairs of every query of a set: query pointers ``ptr`` (query k is rows
    ``ptr[k]:ptr[k+1]``), label ``levels`` (``y_i > y_j`` iff ``levels[i] > levels[j]``) and the
    pair weights' separable terms ``g``, ``h`` (R x n: ``c_ij = sum_r g[r, i] h[r, j]``, i the
    higher document). :meth:`at` sorts them by a score vector."""

    def __init__(self, ptr, levels, g, h):
        self.ptr = np.ascontiguousarray(ptr, dtype=np.int64)
        self.local, self.n_local = _local_levels(self.ptr, np.ascontiguousarray(levels,
                                                                                dtype=np.int64))
        self.g = np.atleast_2d(np.asarray(g, dtype=float))
        self.h = np.atleast_2d(np.asarray(h, dtype=float))
        if self.g.shape != self.h.shape or self.g.shape[1] != self.local.size:
            raise ValueError(f"g and h must both be R x n (n={self.local.size}), got "
                             f"{self.g.shape} and {self.h.shape}")

    @property
    def n(self) -> int:
        return self.local.size

    def at(self, s: np.ndarray) -> "SortedQueries":
        """The pairs with the documents of each query sorted by the scores ``s``."""
        return SortedQueries(self, s)


class SortedQueries:
    """:class:`QueryPairs` at scores ``s`` (one sort per query); the sums of the module
    docstring at any ``offset``."""

    def __init__(self, pairs: QueryPairs, s: np.ndarray):
        self.pairs = pairs
        self.s = np.ascontiguousarray(s, dtype=float)
        if self.s.shape != (pairs.n,):
            raise ValueError(f"s must have length {pairs.n}, got shape {self.s.shape}")
        self.order = _sorted_within(pairs.ptr, self.s)

    def _run(self, kernel, offset: float, V: np.ndarray, queries) -> np.ndarray:
        p = self.pairs
        first, last = (0, p.ptr.size - 1) if queries is None else queries
        V = np.ascontiguousarray(V, dtype=float)
        if V.shape[0] != p.ptr[last] - p.ptr[first]:
            raise ValueError(f"V must have one row per document of queries {first}:{last}, "
                             f"got {V.shape[0]}")
        out = np.empty_like(V)
        kernel(p.ptr[:last + 1], self.order, p.local, p.n_local, self.s, float(offset), V, out,
               first, p.ptr[first])
        return out

    def lower(self, offset: float, V: np.ndarray, queries=None) -> np.ndarray:
        """``sum_{j lower than i in its query, s_j > s_i + offset} V_j`` for every i (V: n x K;
        ``queries``: ``(first, last)``, the sums of those queries only, V their rows)."""
        return self._run(_lower, offset, V, queries)

    def upper(self, offset: float, U: np.ndarray, queries=None) -> np.ndarray:
        """``sum_{i higher than j in its query, s_i + offset < s_j} U_i`` for every j."""
        return self._run(_upper, offset, U, queries)

    def band(self, lo: float, hi: float, cap: int):
        """The pairs with ``s_i + lo < s_j <= s_i + hi`` as ``(i, j, c_ij)`` arrays, or None
        when there are more than ``cap`` of them (listed only while the band is narrow)."""
        p = self.pairs
        out_i = np.empty(cap, dtype=np.int64)
        out_j = np.empty(cap, dtype=np.int64)
        count = _band(p.ptr, self.order, p.local, self.s, float(lo), float(hi), cap, out_i,
                      out_j)
        if count > cap:
            return None
        i, j = out_i[:count], out_j[:count]
        return i, j, (p.g[:, i] * p.h[:, j]).sum(axis=0)

    def rows(self, offset: float, F: np.ndarray, queries=None) -> np.ndarray:
        """``sum_{j lower, in} c_ij F_j`` for every i (F: n or n x K; the same shape back;
        ``queries`` as for :meth:`lower`)."""
        return self._weighted(self.lower, offset, F, self.pairs.h, self.pairs.g, queries)

    def cols(self, offset: float, F: np.ndarray, queries=None) -> np.ndarray:
        """``sum_{i higher, in} c_ij F_i`` for every j (F: n or n x K; the same shape back)."""
        return self._weighted(self.upper, offset, F, self.pairs.g, self.pairs.h, queries)

    def _weighted(self, sums, offset, F, inner, outer, queries):
        """``sum_r outer_r * sums(inner_r F)``, the R terms batched into one kernel call."""
        F = np.asarray(F, dtype=float)
        flat = F.ndim == 1
        F2 = F[:, None] if flat else F
        if queries is not None:
            rows = slice(self.pairs.ptr[queries[0]], self.pairs.ptr[queries[1]])
            inner, outer = inner[:, rows], outer[:, rows]
        K, R = F2.shape[1], inner.shape[0]
        if R == 1:
            out = sums(offset, inner[0][:, None] * F2, queries)
            out *= outer[0][:, None]
        else:
            batch = np.empty((F2.shape[0], R * K))
            for r in range(R):
                batch[:, r * K:(r + 1) * K] = inner[r][:, None] * F2
            summed = sums(offset, batch, queries)
            out = outer[0][:, None] * summed[:, :K]
            for r in range(1, R):
                out += outer[r][:, None] * summed[:, r * K:(r + 1) * K]
        return out[:, 0] if flat else out



@numba.njit(cache=True)
def _band(ptr, order, local, s, lo, hi, cap, out_i, out_j):
    """The pairs (i, j) of each query with ``local[j] < local[i]`` and ``s_i + lo < s_j <= s_i
    + hi``, written to ``out_i``, ``out_j`` up to ``cap`` of them; returns their number (more
    than ``cap``: the band was not listed whole)."""
    count = 0
    for q in range(ptr.size - 1):
        a, b = ptr[q], ptr[q + 1]
        sorted_s = s[order[a:b]]
        for k in range(a, b):
            i = order[k]
            start = np.searchsorted(sorted_s, s[i] + lo, side="right")
            stop = np.searchsorted(sorted_s, s[i] + hi, side="right")
            for p in range(start, stop):
                j = order[a + p]
                if local[j] < local[i]:
                    if count < cap:
                        out_i[count] = i
                        out_j[count] = j
                    count += 1
    return count
