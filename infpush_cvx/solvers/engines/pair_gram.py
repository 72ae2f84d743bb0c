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

with ``n_o`` (``n_k``) the weight of the rows paired with o (with k). For sparse rows, taken in
the order of the window, each ``acc`` is the previous one plus the rows the upper end has just
passed, minus those the lower end has: ``G`` costs ``O(nnz(outer) d + sum_rows nnz(x)^2)``
and two sorts, never a pass over the m n pairs (on a8a, 95 million pairs and d = 123, 5-10 ms:
some tens of Hessian-vector products). For dense rows every ``acc`` is a difference of two
prefix sums of the inner rows in the order of their keys, and the three products are matrix
products (BLAS).
Lee & Lin ("Large-scale linear RankSVM", Neural Computation 2014, section 3) form the same sums
by order statistics for each Hessian-vector product instead.

The deadline is looked at between blocks of outer rows (about 2^25 multiply-adds each), and a
block is begun only when the time left exceeds what the previous one took. Dense rows' own
terms (two matrix products, the size of the whole cross term each) follow the cross term, and
are begun only when they fit at its pace.
"""

from __future__ import annotations

import numba as nb
import numpy as np
import scipy.sparse as sp

from infpush_cvx.solvers.engines.deadline import Deadline

#: Largest dimension for which a d x d matrix is formed: 3,000 is 72 MB.
MAX_DIMENSION = 3000
#: Multiply-adds of the cross term between two looks at the deadline (tens of milliseconds).
_BLOCK_WORK = 2 ** 25


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


def search_in_order(sorted_values: np.ndarray, needles: np.ndarray, order: np.ndarray,
                    side: str) -> np.ndarray:
    """``np.searchsorted(sorted_values, needles, side)``, searched in the ascending ``order`` of
    the needles: NumPy's binary search starts from the previous needle's place, so on sorted
    needles it runs about three times faster (the pair sums search every score's threshold)."""
    out = np.empty(needles.size, np.intp)
    out[order] = np.searchsorted(sorted_values, needles[order], side=side)
    return out


def _rows(X, sparse: bool):
    """``X`` as CSR float64 (any order of a row's entries, duplicates included: they are only
    summed) or as a dense float64 array."""
    return sp.csr_matrix(X, dtype=float) if sparse else np.asarray(X, dtype=float)


def sweep_cost(Xp, Xn) -> float:
    """The cost of :meth:`PairGram.window` over that of one Hessian-vector product (two products
    with the data, two with its transpose, sums over the m + n scores)."""
    d = Xp.shape[1]
    rows = [np.diff(X.tocsr().indptr).astype(float) if sp.issparse(X)
            else np.count_nonzero(X, axis=1).astype(float) for X in (Xp, Xn)]
    nnz = [r.sum() for r in rows]
    formed = min(nnz) * d + sum((r * r).sum() for r in rows) + d ** 3 / 6.0
    return formed / max(4.0 * sum(nnz) + 8.0 * (Xp.shape[0] + Xn.shape[0]), 1.0)


class PairGram:
    """The rows of both classes with their weights, ready for :meth:`window` at any scores."""

    def __init__(self, Xp, Xn, p: np.ndarray, q: np.ndarray):
        self.sparse = sp.issparse(Xp) or sp.issparse(Xn)
        self.Xp, self.Xn = _rows(Xp, self.sparse), _rows(Xn, self.sparse)
        self.p, self.q = p, q
        self.d = self.Xp.shape[1]
        # the cross term costs nnz(outer) d: the class with fewer nonzeros is the outer one
        nnz = [X.nnz if self.sparse else X.size for X in (self.Xp, self.Xn)]
        self.positives_outer = nnz[0] <= nnz[1]

    def window(self, s: np.ndarray, v: np.ndarray, lower: float = 0.0, upper: float = np.inf,
               deadline: Deadline | None = None) -> np.ndarray | None:
        """``G`` over the pairs with ``lower < v_j - s_i < upper`` (module docstring; the
        squared hinge's ``s_i < v_j`` is the default window); None when ``deadline`` passes
        while it is built."""
        if self.positives_outer:  # v_j in (s_i + lower, s_i + upper)
            (X, w, score), (Y, u, key) = (self.Xp, self.p, s), (self.Xn, self.q, v)
            lo, hi = s + lower, s + upper
        else:  # s_i in (v_j - upper, v_j - lower)
            (X, w, score), (Y, u, key) = (self.Xn, self.q, v), (self.Xp, self.p, s)
            lo, hi = v - upper, v - lower
        o_order, i_order = np.argsort(score, kind="stable"), np.argsort(key, kind="stable")
        key_sorted, cum_u = key[i_order], np.concatenate([[0.0], np.cumsum(u[i_order])])
        # the inner rows paired with outer row o: positions bottom_o:top_o of the inner order
        top = search_in_order(key_sorted, hi, o_order, "left")
        bottom = np.minimum(search_in_order(key_sorted, lo, o_order, "right"), top)
        # the outer rows paired with inner row k: a range of the outer order
        cum_w = np.concatenate([[0.0], np.cumsum(w[o_order])])
        first = search_in_order(hi[o_order], key, i_order, "right")
        last = np.maximum(search_in_order(lo[o_order], key, i_order, "left"), first)
        n_outer, n_inner = cum_u[top] - cum_u[bottom], cum_w[last] - cum_w[first]
        if self.sparse:
            gram = np.zeros((self.d, self.d))
            _own_terms(gram, X.indptr, X.indices, X.data, w * n_outer)
            _own_terms(gram, Y.indptr, Y.indices, Y.data, u * n_inner)
            cross = self._sweep(X, w, lo, hi, o_order, Y, u, key, i_order, deadline)
            return None if cross is None else gram - cross - cross.T
        begun = None if deadline is None else deadline.elapsed()
        cross = self._prefix_sums(X, w, Y, u, i_order, top, bottom, deadline)
        if cross is None:
            return None
        # the own terms: a product over the outer rows as large as the cross term's, and one
        # over the inner rows, in two BLAS calls that read no clock: begun when they fit at the
        # cross term's pace (at 50,000 + 50,000 x 300, 2 s on a loaded machine)
        if deadline is not None and not deadline.allows(
                (deadline.elapsed() - begun) * (X.shape[0] + Y.shape[0]) / max(X.shape[0], 1)):
            return None
        gram = X.T @ ((w * n_outer)[:, None] * X) + Y.T @ ((u * n_inner)[:, None] * Y)
        return gram - cross - cross.T

    def _blocks(self, n_outer: int, row_work: float, deadline: Deadline | None):
        """Consecutive slices of the outer rows, each about :data:`_BLOCK_WORK`; None in place
        of a block the deadline leaves no time for, and no more blocks after it."""
        size = max(1, int(_BLOCK_WORK / max(row_work, 1.0)))
        last = 0.0
        for start in range(0, n_outer, size):
            if deadline is not None and not deadline.allows(last):
                yield None
                return
            begun = None if deadline is None else deadline.elapsed()
            yield slice(start, min(start + size, n_outer))
            last = 0.0 if deadline is None else deadline.elapsed() - begun

    def _sweep(self, X, w, lo, hi, o_order, Y, u, key, i_order, deadline):
        """The cross term of sparse rows (module docstring), None when the deadline passed."""
        cross, acc, state = np.zeros((self.d, self.d)), np.zeros(self.d), np.zeros(2, np.int64)
        for block in self._blocks(o_order.size, X.nnz / max(X.shape[0], 1) * self.d, deadline):
            if block is None:
                return None
            _sweep(cross, acc, state, o_order, X.indptr, X.indices, X.data, w, lo, hi,
                   i_order, key, Y.indptr, Y.indices, Y.data, u, block.start, block.stop)
        return cross

    def _prefix_sums(self, X, w, Y, u, i_order, top, bottom, deadline):
        """The cross term of dense rows: ``acc_o`` from prefix sums of the inner rows ``Y``
        (weighted by ``u``, in the key order ``i_order``), None when the deadline passed.

        The prefix sums are written in blocks of rows (new memory, the slowest pass over the
        data), each block's first row added to the previous block's last sum: the additions of
        one ``np.cumsum`` in the same order, so the same bits."""
        cum = np.zeros((Y.shape[0] + 1, self.d))
        # blocks of 2^20 entries (8 MB): _BLOCK_WORK / 32 per row
        for block in self._blocks(Y.shape[0], 32.0 * self.d, deadline):
            if block is None:
                return None
            rows = cum[block.start + 1:block.stop + 1]
            np.multiply(Y[i_order[block]], u[i_order[block], None], out=rows)
            if block.start:  # (the first row of all is its own sum, as in np.cumsum)
                rows[0] += cum[block.start]
            np.cumsum(rows, axis=0, out=rows)
        cross = np.zeros((self.d, self.d))
        for block in self._blocks(X.shape[0], float(self.d) ** 2, deadline):
            if block is None:
                return None
            acc = cum[top[block]] - cum[bottom[block]]
            cross += X[block].T @ (w[block, None] * acc)
        return cross
