"""Problem data: bipartite ranking data (Infinite Push, RankSVM) and weighted-pair data (Rank2Plan).

Both containers validate at construction and carry a fingerprint: the sha256 of the canonical
bytes of their arrays (float64 / int64 little-endian, C order; sparse matrices as canonical CSR),
so a regenerated instance can be compared bit for bit with a stored one.

The containers own their arrays: the validated arrays are private copies (a conversion during
validation already is one; otherwise a copy is made; arrays another container holds are shared),
and dense ones are read-only, so changing the caller's arrays afterwards cannot bypass the
validation.

Bipartite data may carry sample weights ``wp`` (positives) and ``wn`` (negatives); with integer
weights a weighted problem is the unweighted problem on the data with each row repeated that many
times (see :mod:`infpush_cvx.formulations.objectives` for the weighted losses).
"""

from __future__ import annotations

import hashlib
import weakref
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validation import check_index_vector, check_matrix, check_vector
from .labels import binary_labels


def canonical_csr(a) -> sp.csr_matrix:
    """The sparse ``a`` as a new float64 CSR matrix in canonical form (duplicates summed,
    explicit zeros dropped, indices sorted): equal matrices give equal bytes."""
    a = sp.csr_matrix(a, dtype=np.float64, copy=True)
    a.sum_duplicates()
    a.eliminate_zeros()
    a.sort_indices()
    return a


def fingerprint(**arrays) -> str:
    """sha256 (hex) of the canonical bytes of named arrays, in the order given (module
    docstring: sparse matrices as canonical CSR, dense ones as int64 or float64)."""
    h = hashlib.sha256()
    for name, a in arrays.items():
        if sp.issparse(a):
            a = canonical_csr(a)
            h.update(f"{name}:csr:{a.shape}".encode())
            for part in (a.indptr.astype("<i8"), a.indices.astype("<i8"), a.data.astype("<f8")):
                h.update(np.ascontiguousarray(part).tobytes())
            continue
        a = np.asarray(a)
        kind = "<i8" if np.issubdtype(a.dtype, np.integer) else "<f8"
        h.update(f"{name}:dense:{kind}:{a.shape}".encode())
        h.update(np.ascontiguousarray(a, dtype=kind).tobytes())
    return h.hexdigest()


#: The arrays held by containers, weakly, by id. They are private already, so another container
#: made from them (a solver re-wrapping the data, a row subset) shares them without a copy.
_OWNED = weakref.WeakValueDictionary()


def _own(array):
    """Register ``array`` as held by a container (dense arrays become read-only); return it."""
    if not sp.issparse(array):
        array.flags.writeable = False
    _OWNED[id(array)] = array
    return array


def _is_owned(array) -> bool:
    """True for an array held by a container, or a view of one (read-only like its base)."""
    while array is not None:
        if _OWNED.get(id(array)) is array:
            return True
        array = getattr(array, "base", None)
    return False


def borrowed(X):
    """A read-only view of the dense, C-ordered float64 array ``X`` that a container holds as
    it is, without the private copy (:func:`_private`, whose copy is C-ordered too); ``X``
    itself when it is anything else.

    For a container that lives only during one call that returns nothing holding it (a
    solver's, built from the caller's arrays by
    :func:`~infpush_cvx.solvers.engines.common.data_first`): the view cannot be written, and
    ``X`` is neither copied nor changed (its own flags stay). The copy is the slowest pass over
    large data (1.6 s for 50,000 + 50,000 x 300 in a fresh process on a loaded machine, against
    0.06 s for the view), and a time limit counts from the call."""
    if not (isinstance(X, np.ndarray) and X.dtype == np.float64 and X.ndim == 2
            and X.flags.c_contiguous):
        return X
    view = X.view()
    view.flags.writeable = False
    return _own(view)


def _private(validated, original):
    """``validated`` (the checked form of ``original``) as an array no caller can change.

    Validation often converts, and a conversion is already a copy (a list, another dtype, another
    sparse format); only memory shared with ``original`` is copied here, so large data are not
    copied twice, and arrays a container already holds are not copied at all. Dense arrays are
    made read-only. Sparse matrices are only copied: scipy sorts their indices in place, which a
    read-only buffer would break.
    """
    if _is_owned(original):
        return _own(validated)
    if sp.issparse(validated):
        parts = ("data", "indices", "indptr", "row", "col", "offsets")  # of any sparse format
        originals = [getattr(original, k, None) for k in parts] if sp.issparse(original) else []
        for part in ("data", "indices", "indptr"):
            mine = getattr(validated, part)
            if any(isinstance(theirs, np.ndarray) and np.may_share_memory(mine, theirs)
                   for theirs in originals):
                setattr(validated, part, mine.copy())
        return _own(validated)
    # NumPy builds a new array from a Python sequence; an array-like (DataFrame, __array__) may
    # hand out its own buffer
    shared = (np.may_share_memory(validated, original) if isinstance(original, np.ndarray)
              else not isinstance(original, (list, tuple)))
    return _own(validated.copy() if shared else validated)


def _check_sample_weights(v, name: str, length: int) -> np.ndarray:
    """Return sample weights as a private float64 array after checking length, finiteness, sign
    and that their sum is finite (the losses divide by it)."""
    weights = check_vector(v, name, length=length)
    if np.any(weights <= 0):
        raise ValueError(f"{name} must be strictly positive; its smallest entry is "
                         f"{float(weights.min())!r} (drop the rows instead of giving them "
                         f"weight 0)")
    with np.errstate(over="ignore"):  # (an overflowing sum is refused, not warned about)
        if not np.isfinite(weights.sum()):
            raise ValueError(f"{name} sums to more than the largest float; divide the weights "
                             f"by a common factor (only their ratios matter)")
    return _private(weights, v)


@dataclass(frozen=True, eq=False)
class BipartiteData:
    """Positives ``Xp`` (m x d) and negatives ``Xn`` (n x d), dense arrays or scipy.sparse.

    Scores are linear, ``s = Xp @ w`` and ``t = Xn @ w``; the m*n pairs are never materialised.

    Optional sample weights ``wp`` (length m) and ``wn`` (length n), finite and strictly
    positive; ``None`` means all ones. With ``M = sum(wp)`` and ``N = sum(wn)`` the losses become
    (Agarwal, SDM 2011, eqs. 3.6 and 4.18, rows weighted)::

        Infinite Push   max_j (1/M) sum_i wp_i h_ij(w)
        RankSVM         (1/(M N)) sum_ij wp_i wn_j h_ij(w)

    The Infinite Push loss is a maximum over negatives, so ``wn`` does not enter it: a repeated
    negative counts once, as in Agarwal's definition. Integer weights give the unweighted problem
    on the data with every row repeated that many times.
    """

    Xp: object
    Xn: object
    wp: object = None
    wn: object = None

    def __post_init__(self):
        Xp = _private(check_matrix(self.Xp, "Xp"), self.Xp)
        Xn = _private(check_matrix(self.Xn, "Xn"), self.Xn)
        if Xp.shape[1] != Xn.shape[1]:
            raise ValueError(f"Xp and Xn must have the same number of features (columns); got Xp "
                             f"with {Xp.shape[1]} and Xn with {Xn.shape[1]}")
        wp = None if self.wp is None else _check_sample_weights(self.wp, "wp", Xp.shape[0])
        wn = None if self.wn is None else _check_sample_weights(self.wn, "wn", Xn.shape[0])
        for name, value in (("Xp", Xp), ("Xn", Xn), ("wp", wp), ("wn", wn)):
            object.__setattr__(self, name, value)

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

    @property
    def weighted(self) -> bool:
        """True when sample weights were given for either class."""
        return self.wp is not None or self.wn is not None

    @property
    def pos_weights(self) -> np.ndarray:
        """The positives' weights, float64 of length m (ones when unweighted)."""
        return np.ones(self.m) if self.wp is None else self.wp

    @property
    def neg_weights(self) -> np.ndarray:
        """The negatives' weights, float64 of length n (ones when unweighted)."""
        return np.ones(self.n) if self.wn is None else self.wn

    @property
    def wp_sum(self) -> float:
        """M = sum of the positives' weights (m when unweighted)."""
        return float(self.m) if self.wp is None else float(self.wp.sum())

    @property
    def wn_sum(self) -> float:
        """N = sum of the negatives' weights (n when unweighted)."""
        return float(self.n) if self.wn is None else float(self.wn.sum())

    def fingerprint(self) -> str:
        return fingerprint(**self.arrays())

    def arrays(self) -> dict:
        """The arrays, by name (for saving and fingerprints); weights only when given.

        Leaving absent weights out keeps the fingerprint of unweighted data what it was before
        weights existed.
        """
        arrays = {"Xp": self.Xp, "Xn": self.Xn, "wp": self.wp, "wn": self.wn}
        return {name: a for name, a in arrays.items() if a is not None}

    @classmethod
    def from_labels(cls, X, y, sample_weight=None, *, pos_label=None) -> "BipartiteData":
        """Split a feature matrix by binary labels ``y``.

        ``y`` follows the binary-label contract of :mod:`infpush_cvx.data.labels`: the positive
        class is the greater label ({0, 1}, {-1, 1}, {1, 2}, booleans) or ``pos_label``; NaN labels,
        more than two classes, one class only and strings without ``pos_label`` are refused.

        ``sample_weight`` (one nonnegative weight per row) is split the same way into ``wp`` and
        ``wn``; rows of weight 0 are dropped, since they do not enter any loss.
        """
        X = check_matrix(X, "X")
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with one label per row of X ({X.shape[0]}), "
                             f"got shape {y.shape}")
        pos = binary_labels(y, "y", pos_label=pos_label).positive
        keep = np.ones(X.shape[0], dtype=bool)
        if sample_weight is not None:
            sample_weight = check_vector(sample_weight, "sample_weight", length=X.shape[0],
                                         nonnegative=True)
            keep = sample_weight > 0
        if not (pos & keep).any() or not (~pos & keep).any():
            raise ValueError("y must contain both classes; one class is empty after dropping "
                             "the rows of sample_weight 0")
        rows_p, rows_n = np.flatnonzero(pos & keep), np.flatnonzero(~pos & keep)
        # a row selection is a new array: held as it is, not copied again
        weights = () if sample_weight is None else \
            (_own(sample_weight[rows_p]), _own(sample_weight[rows_n]))
        return cls(_own(X[rows_p]), _own(X[rows_n]), *weights)

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        weights = ", weighted" if self.weighted else ""
        return f"BipartiteData(m={self.m}, n={self.n}, d={self.d}, {kind}{weights})"


def check_bipartite(data) -> BipartiteData:
    """``data`` itself when it is a :class:`BipartiteData`; else a TypeError naming ``data``."""
    if not isinstance(data, BipartiteData):
        raise TypeError(f"data must be a BipartiteData, got {type(data).__name__}")
    return data


def _pair_vector(value, name: str, n_pairs: int) -> np.ndarray:
    """A nonnegative per-pair vector of PairData (ones by default), validated and owned."""
    if value is None:
        return _own(np.ones(n_pairs))
    return _private(check_vector(value, name, length=n_pairs, nonnegative=True), value)


@dataclass(frozen=True, eq=False)
class PairData:
    """Weighted preference pairs over the rows of ``X`` (N x p), the Rank2Plan data.

    Pair k says row ``i[k]`` should score at least ``margin[k]`` *below* row ``j[k]`` under
    ``r(x) = beta . x`` (lower is better), with importance ``weight[k]``.
    Defaults: margin 1, weight 1.
    """

    X: object
    i: object
    j: object
    margin: object = None
    weight: object = None

    def __post_init__(self):
        X = _private(check_matrix(self.X, "X"), self.X)
        N = X.shape[0]
        i = _private(check_index_vector(self.i, "i", upper=N), self.i)
        j = _private(check_index_vector(self.j, "j", upper=N), self.j)
        if i.shape != j.shape:
            raise ValueError(f"i and j must have the same length, got {i.shape[0]} and "
                             f"{j.shape[0]}")
        if i.size == 0:
            raise ValueError("i and j are empty: at least one pair is needed")
        same = np.flatnonzero(i == j)
        if same.size:
            raise ValueError(f"pair {same[0]} compares row {i[same[0]]} with itself (i == j)")
        margin = _pair_vector(self.margin, "margin", i.size)
        weight = _pair_vector(self.weight, "weight", i.size)
        for name, value in (("X", X), ("i", i), ("j", j), ("margin", margin),
                            ("weight", weight)):
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
        rows = np.tile(np.arange(self.n_pairs), 2)
        cols = np.concatenate([self.j, self.i])
        vals = np.repeat([1.0, -1.0], self.n_pairs)
        return sp.csr_matrix((vals, (rows, cols)), shape=(self.n_pairs, self.n_states))

    def fingerprint(self) -> str:
        # the margin is hashed under the name "gap", as in every stored instance fingerprint
        return fingerprint(X=self.X, i=self.i, j=self.j, gap=self.margin, weight=self.weight)

    def arrays(self) -> dict:
        return {"X": self.X, "i": self.i, "j": self.j, "margin": self.margin,
                "weight": self.weight}

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        return (f"PairData(states={self.n_states}, features={self.n_features}, "
                f"pairs={self.n_pairs}, {kind})")
