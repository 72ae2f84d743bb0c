"""Exact reductions of bipartite data: identical rows collapse into one weighted row.

For sample weights p (positives, sum M) and q (negatives, sum N), the losses of Agarwal (SDM 2011,
eqs. 3.6 and 4.18) are::

    Infinite Push   max_j (1/M) sum_i p_i max(0, 1 - s_i + t_j)
    RankSVM         (1/(M N)) sum_ij p_i q_j max(0, 1 - s_i + t_j)

Rows i and i' of ``Xp`` that are equal have equal scores ``s_i = s_i'`` for every w, so their terms
are equal and ``p_i h_ij + p_i' h_i'j = (p_i + p_i') h_ij``: one row of weight ``p_i + p_i'`` gives
the same sums, and M is unchanged. The same holds for equal rows of ``Xn`` in RankSVM. In the
Infinite Push the negatives' weights do not enter (a maximum over negatives), and two equal
negatives give two equal terms of that maximum, so keeping one is exact whatever its weight;
summing their weights is then harmless, and exact for RankSVM. Hence the objective, and so the
optimum and the minimisers, are the same for every w, lambda, penalty and scaling (M and N, so
the normalisers and the seed-to-paper lambda conversion, are unchanged too), while the problem has
fewer rows and so fewer pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .containers import BipartiteData, borrowed, canonical_csr, check_bipartite

_SPLITMIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_SPLITMIX_2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True, eq=False)
class CollapseInfo:
    """How :func:`collapse_duplicates` mapped rows.

    ``pos_index[i]``: the collapsed row of original positive i (int64, length m before);
    ``pos_first[k]``: the original row kept as collapsed positive k (its first occurrence);
    ``pos_counts[k]``: how many original positives collapsed into row k. Likewise for negatives.
    Collapsed rows keep the order of their first occurrences, so ``pos_first`` is increasing.
    """

    pos_index: np.ndarray
    neg_index: np.ndarray
    pos_first: np.ndarray
    neg_first: np.ndarray
    pos_counts: np.ndarray
    neg_counts: np.ndarray

    m_before = property(lambda self: self.pos_index.shape[0], doc="Positives before.")
    n_before = property(lambda self: self.neg_index.shape[0], doc="Negatives before.")
    m_after = property(lambda self: self.pos_first.shape[0], doc="Positives after.")
    n_after = property(lambda self: self.neg_first.shape[0], doc="Negatives after.")


def _mix(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser, in place on a uint64 array (wrapping arithmetic is intended)."""
    x ^= x >> np.uint64(30)
    x *= _SPLITMIX_1
    x ^= x >> np.uint64(27)
    x *= _SPLITMIX_2
    x ^= x >> np.uint64(31)
    return x


def _column_hashes(columns: np.ndarray) -> np.ndarray:
    return _mix(columns.astype(np.uint64) * _GOLDEN + _GOLDEN)


def _row_hashes(X) -> np.ndarray:
    """One uint64 per row: the wrapping sum over its entries of ``mix(bits(value) + mix(column))``.

    A sum, so the hash depends on the set of (column, value) entries only; for canonical CSR
    (no duplicates, no explicit zeros) that set is the row, so equal rows hash equally. Dense
    values get ``+ 0.0`` first, which turns -0.0 into 0.0 (equal values, different bits).
    """
    if sp.issparse(X):
        entries = _mix(X.data.view(np.uint64) + _column_hashes(X.indices))
        prefix = np.concatenate([np.zeros(1, np.uint64), np.cumsum(entries, dtype=np.uint64)])
        return prefix[X.indptr[1:]] - prefix[X.indptr[:-1]]
    entries = np.add(X, 0.0).view(np.uint64)  # a new array, then hashed in place
    entries += _column_hashes(np.arange(X.shape[1]))
    return _mix(entries).sum(axis=1, dtype=np.uint64)


def _rows_equal(X, rows: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Boolean per k: row ``rows[k]`` of X equals row ``other[k]`` exactly."""
    if not sp.issparse(X):
        return np.all(X[rows] == X[other], axis=1)
    lengths = np.diff(X.indptr)
    same = lengths[rows] == lengths[other]
    rows, other = rows[same], other[same]
    counts = lengths[rows]
    # Entry positions of each row and of its partner, row by row (equal lengths, so aligned).
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    a = np.repeat(X.indptr[rows], counts) + offsets
    b = np.repeat(X.indptr[other], counts) + offsets
    entry_ok = (X.indices[a] == X.indices[b]) & (X.data[a] == X.data[b])
    row_of_entry = np.repeat(np.arange(rows.shape[0]), counts)
    ok = np.bincount(row_of_entry, weights=~entry_ok, minlength=rows.shape[0]) == 0
    result = np.zeros(same.shape[0], dtype=bool)
    result[np.flatnonzero(same)] = ok
    return result


def _group_keys(keys) -> tuple[np.ndarray, np.ndarray]:
    """(first, index): groups of equal keys numbered by first occurrence.

    ``first[k]`` is the first row of group k (increasing), ``index[i]`` the group of row i.
    """
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    return first[order], rank[inverse.ravel()]


def _group_rows_exact(X) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_group_keys` of the rows' bytes: exact, a Python loop, used only on hash collision.

    The keys are an object array: NumPy's bytes dtype would drop trailing zero bytes."""
    if sp.issparse(X):
        keys = [X.indices[lo:hi].astype("<i8").tobytes() + b"|" + X.data[lo:hi].tobytes()
                for lo, hi in zip(X.indptr[:-1], X.indptr[1:])]
    else:
        keys = [(row + 0.0).tobytes() for row in X]  # -0.0 and 0.0 are the same value
    return _group_keys(np.array(keys, dtype=object))


#: Columns of a dense X whose hash :func:`_group_rows` takes first, to find the rows that may
#: repeat.
_SCREEN_COLUMNS = 3


def _group_rows(X) -> tuple[np.ndarray, np.ndarray]:
    """(first, index) of the groups of identical rows of canonical X, by first occurrence.

    Dense rows are screened first by the hashes of their first :data:`_SCREEN_COLUMNS` entries:
    a row whose screen hash no other row shares differs from every other row, and only the
    rows that share one are hashed whole. Continuous features tell every row apart there (the
    hashes of every entry cost 0.9-2.4 s for 100,000 x 300 on a loaded machine, and the working
    set collapses its data on every call); the kernel route's factor rows (Spambase: 4,601 x
    4,146, some points repeated) had every entry hashed in 0.85 s."""
    if sp.issparse(X):
        keys = _row_hashes(X)
    else:
        keys = _row_hashes(X[:, :_SCREEN_COLUMNS])
        _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        shared = np.flatnonzero(counts[inverse.ravel()] > 1)
        if shared.size == 0:  # every screen hash its own: every row distinct
            rows = np.arange(X.shape[0])
            return rows, rows.copy()
        keys[shared] = _row_hashes(X[shared])
    first, index = _group_keys(keys)
    if first.shape[0] == X.shape[0]:
        return first, index  # all keys distinct, so all rows distinct: nothing to verify
    rows = np.arange(X.shape[0])
    repeats = np.flatnonzero(first[index] != rows)  # rows that are not their group's first
    if _rows_equal(X, repeats, first[index[repeats]]).all():
        return first, index
    return _group_rows_exact(X)  # a 64-bit hash collision between different rows


def _collapse_side(X, weights):
    # canonical CSR (equal rows, equal bytes) or C-ordered float64 (-0.0 is left to the hash)
    Xc = canonical_csr(X) if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
    first, index = _group_rows(Xc)
    counts = np.bincount(index, minlength=first.shape[0])
    if first.shape[0] == X.shape[0]:
        return X, weights, first, index, counts  # nothing repeats: keep the rows as they are
    summed = np.bincount(index, weights=np.ones(X.shape[0]) if weights is None else weights,
                         minlength=first.shape[0])
    # (a new array that nothing else holds: the container takes it without a private copy,
    # 0.3 s of the 4,601 x 4,146 factor rows of Spambase's RBF kernel)
    return borrowed(Xc[first]), summed, first, index, counts


def collapse_duplicates(data: BipartiteData) -> tuple[BipartiteData, CollapseInfo]:
    """Collapse identical rows of ``Xp`` (and of ``Xn``) into one row weighted by their sum.

    Returns the collapsed :class:`BipartiteData` (always a new object) and a
    :class:`CollapseInfo` with the index maps and counts. The collapsed weighted problem has the
    same objective as the original one at every w (module docstring), so the same optimum and
    minimisers for the Infinite Push (l2 and l1) and for RankSVM, in either scaling.

    Rows are equal when their float64 entries are equal (0.0 and -0.0 are the same); dense and
    scipy.sparse inputs are both handled (sparse in canonical CSR). Rows are grouped by a 64-bit
    hash of their entries, then every row is checked entry by entry against its group's first
    row, so the grouping is exact (a collision falls back to an exact byte-keyed grouping).
    Cost: O(nnz + r log r) for r rows; no pair arrays. A class without weights and without
    repeated rows keeps ``None`` as its weights.
    """
    check_bipartite(data)
    Xp, wp, pos_first, pos_index, pos_counts = _collapse_side(data.Xp, data.wp)
    Xn, wn, neg_first, neg_index, neg_counts = _collapse_side(data.Xn, data.wn)
    info = CollapseInfo(pos_index=pos_index, neg_index=neg_index, pos_first=pos_first,
                        neg_first=neg_first, pos_counts=pos_counts, neg_counts=neg_counts)
    return BipartiteData(Xp, Xn, wp, wn), info
