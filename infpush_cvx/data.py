"""Problem data: bipartite ranking data (Infinite Push, RankSVM) and weighted-pair data (Rank2Plan).

Both containers validate at construction and carry a fingerprint: the sha256 of the canonical
bytes of their arrays (float64 / int64 little-endian, C order; sparse matrices as canonical CSR),
so a regenerated instance can be compared bit for bit with a stored one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._validation import check_index_vector, check_matrix, check_vector


def _hash_array(h, name: str, a) -> None:
    if sp.issparse(a):
        a = sp.csr_matrix(a, dtype=np.float64, copy=True)
        a.sum_duplicates()
        a.eliminate_zeros()
        a.sort_indices()
        h.update(f"{name}:csr:{a.shape}".encode())
        for part in (a.indptr.astype("<i8"), a.indices.astype("<i8"), a.data.astype("<f8")):
            h.update(np.ascontiguousarray(part).tobytes())
        return
    a = np.asarray(a)
    kind = "<i8" if np.issubdtype(a.dtype, np.integer) else "<f8"
    h.update(f"{name}:dense:{kind}:{a.shape}".encode())
    h.update(np.ascontiguousarray(a, dtype=kind).tobytes())


def fingerprint(**arrays) -> str:
    """sha256 (hex) of the canonical bytes of named arrays, in the order given."""
    h = hashlib.sha256()
    for name, a in arrays.items():
        _hash_array(h, name, a)
    return h.hexdigest()


@dataclass(frozen=True, eq=False)
class BipartiteData:
    """Positives ``Xp`` (m x d) and negatives ``Xn`` (n x d), dense arrays or scipy.sparse.

    Scores are linear, ``s = Xp @ w`` and ``t = Xn @ w``; the m*n pairs are never materialised.
    """

    Xp: object
    Xn: object

    def __post_init__(self):
        Xp = check_matrix(self.Xp, "Xp")
        Xn = check_matrix(self.Xn, "Xn")
        if Xp.shape[1] != Xn.shape[1]:
            raise ValueError(
                f"Xp and Xn must have the same number of features (columns); "
                f"got Xp with {Xp.shape[1]} and Xn with {Xn.shape[1]}")
        object.__setattr__(self, "Xp", Xp)
        object.__setattr__(self, "Xn", Xn)

    @property
    def m(self) -> int:
        """Number of positives."""
        return self.Xp.shape[0]

    @property
    def n(self) -> int:
        """Number of negatives."""
        return self.Xn.shape[0]

    @property
    def d(self) -> int:
        """Number of features."""
        return self.Xp.shape[1]

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.Xp) or sp.issparse(self.Xn)

    def fingerprint(self) -> str:
        return fingerprint(Xp=self.Xp, Xn=self.Xn)

    def arrays(self) -> dict:
        """The arrays, by name (for saving and fingerprints)."""
        return {"Xp": self.Xp, "Xn": self.Xn}

    @classmethod
    def from_labels(cls, X, y) -> "BipartiteData":
        """Split a feature matrix by binary labels (positive class: ``y > 0`` or ``True``)."""
        X = check_matrix(X, "X")
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with one label per row of X ({X.shape[0]}), "
                             f"got shape {y.shape}")
        pos = y > 0 if y.dtype != bool else y
        if pos.all() or not pos.any():
            raise ValueError("y must contain both classes; one class is empty")
        return cls(X[np.flatnonzero(pos)], X[np.flatnonzero(~pos)])

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        return f"BipartiteData(m={self.m}, n={self.n}, d={self.d}, {kind})"


@dataclass(frozen=True, eq=False)
class PairData:
    """Weighted preference pairs over the rows of ``X`` (N x p), the Rank2Plan data.

    Pair k says row ``i[k]`` should score at least ``gap[k]`` *below* row ``j[k]`` under
    ``r(x) = beta . x`` (lower is better), with importance ``weight[k]``.
    Defaults: gap 1, weight 1.
    """

    X: object
    i: object
    j: object
    gap: object = None
    weight: object = None

    def __post_init__(self):
        X = check_matrix(self.X, "X")
        N = X.shape[0]
        i = check_index_vector(self.i, "i", upper=N)
        j = check_index_vector(self.j, "j", upper=N)
        if i.shape != j.shape:
            raise ValueError(f"i and j must have the same length, got {i.shape[0]} and {j.shape[0]}")
        if i.size == 0:
            raise ValueError("i and j are empty: at least one pair is needed")
        same = np.flatnonzero(i == j)
        if same.size:
            raise ValueError(f"pair {same[0]} compares row {i[same[0]]} with itself (i == j)")
        n_pairs = i.shape[0]
        gap = np.ones(n_pairs) if self.gap is None else \
            check_vector(self.gap, "gap", length=n_pairs, nonnegative=True)
        weight = np.ones(n_pairs) if self.weight is None else \
            check_vector(self.weight, "weight", length=n_pairs, nonnegative=True)
        for name, value in (("X", X), ("i", i), ("j", j), ("gap", gap), ("weight", weight)):
            object.__setattr__(self, name, value)

    @property
    def n_states(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_pairs(self) -> int:
        return self.i.shape[0]

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.X)

    def difference_operator(self) -> sp.csr_matrix:
        """Sparse E (n_pairs x N) with ``E @ X = X[j] - X[i]``, so pair differences stay sparse."""
        k = np.arange(self.n_pairs)
        rows = np.concatenate([k, k])
        cols = np.concatenate([self.j, self.i])
        vals = np.concatenate([np.ones(self.n_pairs), -np.ones(self.n_pairs)])
        return sp.csr_matrix((vals, (rows, cols)), shape=(self.n_pairs, self.n_states))

    def fingerprint(self) -> str:
        return fingerprint(**self.arrays())

    def arrays(self) -> dict:
        return {"X": self.X, "i": self.i, "j": self.j, "gap": self.gap, "weight": self.weight}

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        return (f"PairData(states={self.n_states}, features={self.n_features}, "
                f"pairs={self.n_pairs}, {kind})")
