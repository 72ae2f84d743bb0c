"""Learning-to-rank data: documents grouped by query, with graded relevance labels.

A learning-to-rank set (LETOR's MQ2007/MQ2008, MSLR-WEB10K/30K, Yahoo, Istella) is a list of
documents per query, each with a feature vector and a graded label (0 to 4 on most sets). A
ranker is compared only within a query: the pairs of a query are its documents ``(i, j)`` with
``y_i > y_j`` (Joachims, KDD 2002 and SVMrank 2006; Lee & Lin, Neural Computation 2014), and its
relevant documents are those of label at least a threshold. Pairs across queries never enter a
loss or a metric.

The documents of one query are consecutive, as the svmlight ``qid:`` convention and LightGBM's
group files have them (data in another order is sorted once by the caller, ``order =
np.argsort(qid, kind="stable")``). Query ``k`` holds the rows ``ptr[k]:ptr[k + 1]``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validation import caller_stacklevel, check_matrix, check_vector
from .containers import _check_sample_weights, _own, _private, fingerprint

#: How many query ids a message lists before "...".
_SHOWN = 5


class QueryWarning(UserWarning):
    """A query that contributes nothing to a pairwise loss (all its labels equal)."""


def _shown(ids) -> str:
    ids = [str(v) for v in ids[:_SHOWN]]
    return ", ".join(ids) + (", ..." if len(ids) == _SHOWN else "")


def _query_pointers(qid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(queries, ptr)``: the ids of the runs of equal ``qid`` in order, and the runs' offsets.

    A ValueError names ``qid`` when one id starts two runs (a query's documents not consecutive).
    """
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    queries = qid[starts]
    if np.unique(queries).size != queries.size:
        ids, counts = np.unique(queries, return_counts=True)
        raise ValueError(f"qid: the documents of a query must be consecutive; queries "
                         f"{_shown(ids[counts > 1])} appear in more than one run (sort the rows "
                         f"first: order = np.argsort(qid, kind='stable'))")
    return queries, np.r_[starts, qid.size].astype(np.int64)


def pairs_per_query(levels: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """The number of pairs ``(i, j)`` with ``y_i > y_j`` in each query: ``C(n_q, 2)`` less the
    pairs of equal labels ``sum_l C(c_ql, 2)``, ``c_ql`` the documents of level l in query q."""
    sizes = np.diff(ptr)
    width = int(levels.max(initial=0)) + 1
    keys, runs = np.unique(np.repeat(np.arange(sizes.size), sizes) * width + levels,
                           return_counts=True)  # the (query, level) runs
    ties = np.bincount(keys // width, weights=runs * (runs - 1) / 2, minlength=sizes.size)
    return (sizes * (sizes - 1) // 2 - np.rint(ties).astype(np.int64)).astype(np.int64)


@dataclass(frozen=True, eq=False)
class QueryData:
    """Documents ``X`` (n x d, dense or scipy.sparse) with graded labels ``y`` and query ids.

    - ``y``: finite real labels (graded relevance, usually the integers 0 to 4); only their
      order within a query enters a pairwise loss.
    - ``qid``: one integer id per document; a query's documents are consecutive.
    - ``sample_weight``: optional per-document weights (> 0); ``query_weight``: optional
      per-query weights (> 0), one per query in the order of :attr:`queries`. ``None``: ones.
      How a model combines them (a pair's weight, a query's) is the model's to say.

    Derived at construction: :attr:`queries` (the ids in order), :attr:`ptr` (query k is rows
    ``ptr[k]:ptr[k+1]``), :attr:`levels` (each label's index among the distinct labels of the
    whole set, so ``y_i > y_j`` exactly when ``levels[i] > levels[j]``), :attr:`pair_counts`.
    A query whose documents all share one label (or has one document) has no pair: it is named
    in a :class:`QueryWarning` and listed by :attr:`queries_without_pairs`.
    """

    X: object
    y: object
    qid: object
    sample_weight: object = None
    query_weight: object = None

    def __post_init__(self):
        X = _private(check_matrix(self.X, "X"), self.X)
        n = X.shape[0]
        y = _private(check_vector(self.y, "y", length=n), self.y)
        qid = np.asarray(self.qid)
        if qid.ndim != 1 or qid.shape[0] != n:
            raise ValueError(f"qid must be 1-D with one query id per row of X ({n}), got shape "
                             f"{qid.shape}")
        if qid.dtype.kind == "f":
            if not np.all(np.isfinite(qid)) or np.any(qid != np.round(qid)):
                raise ValueError("qid must hold integers (query ids); got non-integer values")
        elif qid.dtype.kind not in "iub":
            raise TypeError(f"qid must hold integers (query ids), got dtype {qid.dtype}")
        qid = _own(qid.astype(np.int64))
        queries, ptr = _query_pointers(qid)
        sample_weight = None if self.sample_weight is None else \
            _check_sample_weights(self.sample_weight, "sample_weight", n)
        query_weight = None if self.query_weight is None else \
            _check_sample_weights(self.query_weight, "query_weight", queries.size)
        labels, levels = np.unique(y, return_inverse=True)
        counts = pairs_per_query(levels, ptr)
        for name, value in (("X", X), ("y", y), ("qid", qid), ("sample_weight", sample_weight),
                            ("query_weight", query_weight), ("queries", _own(queries)),
                            ("ptr", _own(ptr)), ("labels", _own(labels)),
                            ("levels", _own(levels.astype(np.int64))),
                            ("pair_counts", _own(counts))):
            object.__setattr__(self, name, value)
        if not counts.all():
            empty = queries[counts == 0]
            warnings.warn(f"{empty.size} of {queries.size} queries contribute no pair (one "
                          f"label, or one document): {_shown(empty)}", QueryWarning,
                          stacklevel=caller_stacklevel())

    @property
    def n(self) -> int:
        """Number of documents."""
        return self.X.shape[0]

    @property
    def d(self) -> int:
        """Number of features."""
        return self.X.shape[1]

    @property
    def n_queries(self) -> int:
        return self.queries.size

    @property
    def sizes(self) -> np.ndarray:
        """Documents in each query."""
        return np.diff(self.ptr)

    @property
    def n_pairs(self) -> int:
        """Pairs ``y_i > y_j`` within a query, over all queries."""
        return int(self.pair_counts.sum())

    @property
    def n_levels(self) -> int:
        """Number of distinct labels."""
        return self.labels.size

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.X)

    @property
    def queries_without_pairs(self) -> np.ndarray:
        """Ids of the queries with no pair (one label only, or one document)."""
        return self.queries[self.pair_counts == 0]

    @property
    def query_index(self) -> np.ndarray:
        """For every document, the index (0 to n_queries - 1) of its query."""
        return np.repeat(np.arange(self.n_queries), self.sizes)

    def relevant(self, threshold: float) -> np.ndarray:
        """Boolean mask of the documents with label at least ``threshold``."""
        return self.y >= threshold

    def subset(self, queries) -> "QueryData":
        """The data of some queries, given by index (0 to n_queries - 1) or a boolean mask, in
        the order given (a cross-validation fold keeps whole queries)."""
        index = np.arange(self.n_queries)[np.asarray(queries)]
        rows = np.concatenate([np.arange(self.ptr[k], self.ptr[k + 1]) for k in index]) \
            if index.size else np.zeros(0, dtype=np.int64)
        pick = (lambda a: None if a is None else a[rows])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", QueryWarning)  # the caller saw the whole set's
            return QueryData(_own(self.X[rows]), pick(self.y), pick(self.qid),
                             pick(self.sample_weight),
                             None if self.query_weight is None else self.query_weight[index])

    def arrays(self) -> dict:
        """The arrays given, by name (for saving and fingerprints); weights only when given."""
        arrays = {"X": self.X, "y": self.y, "qid": self.qid,
                  "sample_weight": self.sample_weight, "query_weight": self.query_weight}
        return {name: a for name, a in arrays.items() if a is not None}

    def fingerprint(self) -> str:
        return fingerprint(**self.arrays())

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        weights = ", weighted" if self.sample_weight is not None or \
            self.query_weight is not None else ""
        return (f"QueryData(n={self.n}, d={self.d}, queries={self.n_queries}, "
                f"levels={self.n_levels}, pairs={self.n_pairs}, {kind}{weights})")
