"""Sums of ``c_ij z_ij z_ij^T`` over a window of pairs, by one sweep over the sorted scores.

The Newton methods of the pairwise losses need the matrix

    G = sum_{(i, j) in A} p_i q_j z_ij z_ij^T,     z_ij = x_i - x_j,

over the pairs A where the loss is curved: for the squared hinge the pairs below the margin
(``s_i < v_j``, ``v_j = 1 + t_j``), for a smoothed hinge those within ``c`` of it
(``|v_j - s_i| < c``). Both are windows: a row o of one class (the "outer" one) is paired with
the rows of the other class whose key lies in an open interval ``(lo_o, hi_o)`` whose ends rise
with the outer row's own score. Expanded by class (the Kronecker form of the pair matrix)::

    G = sum_o w_o n_o x_o x_o^T + sum_k w_k n_k x_k x_k^T - (C + C^T),
    C = sum_o w_o x_o acc_o^T,    acc_o = sum_{k: lo_o < key_k < hi_o} w_k x_k,

with ``n_o`` (``n_k``) the weight of the rows paired with o (with k). Taken in the order of the
window, each ``acc`` is the previous one plus the rows the upper end has just passed, minus
those the lower end has: ``G`` costs ``O(nnz(outer) d + sum_rows nnz(x)^2)`` and two sorts, never
a pass over the m n pairs (on a8a, 95 million pairs and d = 123, about ten Hessian-vector
products). Lee & Lin ("Large-scale linear RankSVM", Neural Computation 2014, section 3) form
the same sums by order statistics for each Hessian-vector product instead.
"""

from __future__ import annotations

import numba as nb
import numpy as np
import scipy.sparse as sp

from infpush_cvx.solvers.engines.deadline import Deadline

#: Largest dimension for which a d x d matrix is formed: 3,000 is 72 MB.
MAX_DIMENSION = 3000
#: Outer rows swept between two looks at the deadline.
_CHUNK = 4096


@nb.njit(cache=True, nogil=True)
def _own_terms(gram, ptr, idx, val, weight):
    """``gram += sum_r weight_r x_r x_r^T`` over CSR rows."""
    for r in range(ptr.size - 1):
        if weight[r] == 0.0:
            continue
        for a in range(ptr[r], ptr[r + 1]):
            va = weight[r] * val[a]
            for b in range(ptr[r], ptr[r + 1]):
                gram[idx[a], idx[b]] += va * val[b]


@nb.njit(cache=True, nogil=True)
def _sweep(cross, acc, state, o_order, o_ptr, o_idx, o_val, o_w, lo, hi,
           i_order, i_key, i_ptr, i_idx, i_val, i_w, start, stop):
    """Outer positions ``start:stop`` of the sweep: ``cross += w_o x_o acc_o^T``. ``state``
    holds the two pointers into the inner order (rows added, rows removed) between calls."""
    added, removed = state[0], state[1]
    n_inner = i_order.size
    for pos in range(start, stop):
        o = o_order[pos]
        while added < n_inner and i_key[i_order[added]] < hi[o]:
            k = i_order[added]
            for a in range(i_ptr[k], i_ptr[k + 1]):
                acc[i_idx[a]] += i_w[k] * i_val[a]
            added += 1
        while removed < added and i_key[i_order[removed]] <= lo[o]:
            k = i_order[removed]
            for a in range(i_ptr[k], i_ptr[k + 1]):
                acc[i_idx[a]] -= i_w[k] * i_val[a]
            removed += 1
        if added == removed:
            continue
        for a in range(o_ptr[o], o_ptr[o + 1]):
            va = o_w[o] * o_val[a]
            row = cross[o_idx[a]]
            for col in range(acc.size):
                row[col] += va * acc[col]
    state[0], state[1] = added, removed


def _csr(X):
    """``X`` as CSR float64 (any order of a row's entries, duplicates included: only summed)."""
    return sp.csr_matrix(X, dtype=float)


def sweep_cost(Xp, Xn) -> float:
    """The sweep's operation count over that of one Hessian-vector product (two products with
    the data, two with its transpose, sums over the m + n scores)."""
    d = Xp.shape[1]
    rows = [np.diff(_csr(X).indptr).astype(float) for X in (Xp, Xn)]
    nnz = [r.sum() for r in rows]
    formed = min(nnz) * d + sum((r * r).sum() for r in rows) + d ** 3 / 6.0
    return formed / max(4.0 * sum(nnz) + 8.0 * (Xp.shape[0] + Xn.shape[0]), 1.0)


class PairGram:
    """The rows of both classes with their weights, ready for :meth:`window` at any scores."""

    def __init__(self, Xp, Xn, p: np.ndarray, q: np.ndarray):
        self.Xp, self.Xn, self.p, self.q = _csr(Xp), _csr(Xn), p, q
        self.d = self.Xp.shape[1]
        # the sweep costs nnz(outer) d: the class with fewer nonzeros is the outer one
        self.positives_outer = self.Xp.nnz <= self.Xn.nnz

    def window(self, s: np.ndarray, v: np.ndarray, lower: float = 0.0, upper: float = np.inf,
               deadline: Deadline | None = None) -> np.ndarray | None:
        """``G`` over the pairs with ``lower < v_j - s_i < upper`` (module docstring; the
        squared hinge's ``s_i < v_j`` is the default window); None when ``deadline`` passes
        during the sweep."""
        if self.positives_outer:  # v_j in (s_i + lower, s_i + upper)
            (X, w, score), (Y, u, key) = (self.Xp, self.p, s), (self.Xn, self.q, v)
            lo, hi = s + lower, s + upper
        else:  # s_i in (v_j - upper, v_j - lower)
            (X, w, score), (Y, u, key) = (self.Xn, self.q, v), (self.Xp, self.p, s)
            lo, hi = v - upper, v - lower
        o_order, i_order = np.argsort(score, kind="stable"), np.argsort(key, kind="stable")
        key_sorted, lo_sorted, hi_sorted = key[i_order], lo[o_order], hi[o_order]
        cum_u = np.concatenate([[0.0], np.cumsum(u[i_order])])
        cum_w = np.concatenate([[0.0], np.cumsum(w[o_order])])
        # the weight paired with each row: a range of the other class's order
        n_outer = (cum_u[np.searchsorted(key_sorted, hi, side="left")]
                   - cum_u[np.searchsorted(key_sorted, lo, side="right")])
        first = np.searchsorted(hi_sorted, key, side="right")
        last = np.searchsorted(lo_sorted, key, side="left")
        n_inner = np.where(last > first, cum_w[last] - cum_w[np.minimum(first, last)], 0.0)
        gram = np.zeros((self.d, self.d))
        _own_terms(gram, X.indptr, X.indices, X.data, w * n_outer)
        _own_terms(gram, Y.indptr, Y.indices, Y.data, u * n_inner)
        cross, acc, state = np.zeros((self.d, self.d)), np.zeros(self.d), np.zeros(2, np.int64)
        for start in range(0, o_order.size, _CHUNK):
            if deadline is not None and deadline.expired():
                return None
            _sweep(cross, acc, state, o_order, X.indptr, X.indices, X.data, w, lo, hi,
                   i_order, key, Y.indptr, Y.indices, Y.data, u, start,
                   min(start + _CHUNK, o_order.size))
        return gram - cross - cross.T
