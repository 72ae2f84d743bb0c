"""Ranking metrics over queries: ``metric(y_true, y_score, qid)``, the mean over queries.

Learning-to-rank data is a list of documents per query with graded relevance labels (LETOR,
MSLR-WEB, Yahoo: 0 to 4). Each metric ranks every query's documents by decreasing score,
measures that ranking, and averages over the queries. Inputs, one entry per document:

- ``y_true``: graded labels, finite and nonnegative (not necessarily integers);
- ``y_score``: scores, finite; higher = nearer the top of its query's list;
- ``qid``: the query of each document, any sortable values (ints, strings); the documents of a
  query need not be consecutive (they are grouped by a stable sort).

For a query with ranked labels ``y_1, ..., y_n`` (rank r = 1 is the top):

- DCG@k ``= sum_{r <= min(k, n)} G(y_r) / log2(1 + r)``, with the gain ``G(y) = 2^y - 1``
  (``gain="exponential"``: Burges et al., ICML 2005; LightGBM and XGBoost) or ``G(y) = y``
  (``gain="linear"``: Jarvelin & Kekalainen, TOIS 2002; trec_eval). NDCG@k ``= DCG@k / IDCG@k``,
  IDCG@k the DCG@k of the labels sorted decreasingly (the ideal ranking). ``k=None``: the whole
  list.
- AP ``= (1/R) sum_r rel_r #{s <= r : rel_s} / r``, ``rel_r = [y_r >= threshold]``, R the
  number of relevant documents of the query (every document is ranked, so R is also trec_eval's
  number of judged relevant documents). MAP is the mean of AP over queries.
- P@k ``= #{r <= k : rel_r} / k``, divided by k even when the query has fewer than k documents
  (trec_eval's ``P_k``: the missing places count as irrelevant).
- positives at the top: the number of relevant documents scored strictly above the query's
  highest-scored irrelevant one (Agarwal, "The Infinite Push", SDM 2011; all of them when the
  query has no irrelevant document). A relevant document tied with that one is not at the top,
  whatever ``ties`` says: the Infinite Push counts a tie as a misordered pair.

Ties in scores (``ties``):

- ``"average"`` (the default): the expected value when the ties are broken uniformly at random
  (McSherry & Najork, ECIR 2008). For NDCG and P@k every position of a group of tied documents
  gets the group's mean gain (relevance), as ``sklearn.metrics.ndcg_score`` (its default
  ``ignore_ties=False``) does; for AP the expectation, exact, of a position r = a + j of a tied
  group of g documents with p relevant, P relevant above it, is
  ``(1/r) [(p/g)(1 + P) + (j - 1) p(p - 1) / (g(g - 1))]`` (the pair of positions r and s < r
  in the same group are both relevant with probability ``p(p-1)/(g(g-1))``). A metric of a
  ranking with ties is then a function of the scores alone, not of the order the documents
  arrive in; a constant scorer gets the metric's mean over the orders.
- ``"stable"``: tied documents keep their input order (the earlier one ranks higher), as
  LightGBM's ``std::stable_sort`` does. trec_eval breaks ties by decreasing document name
  instead: name the documents so that that order is the input order to reproduce it.

Queries without a relevant document (``no_relevant``): NDCG is 0/0 there (IDCG = 0, every label
0) and AP is 0/0 (R = 0, no label at or above the threshold); conventions differ (LightGBM
counts such a query as 1, trec_eval and scikit-learn as 0). The default ``"skip"`` leaves them
out of the mean (their per-query value is NaN): every ranking of such a query is as good as any
other, so a 1 or a 0 only shifts the mean by the share of such queries, which then depends on
the data rather than on the ranker (LETOR's MQ2007 has many); ``0`` or ``1`` gives them that
value. P@k and positives at the top are defined there (0); their ``no_relevant`` is ``"skip"``
(the default, so that every metric averages over the same queries) or ``0``.
A single-document query is ranked perfectly: NDCG and AP 1 when its document is relevant
(otherwise ``no_relevant``), P@k ``1/k`` or 0.

``per_query=True`` returns :class:`QueryScores` ``(qid, value)``: the distinct query ids in
sorted order and each query's value (NaN where skipped) instead of the mean. When every query
is skipped the mean is NaN, with a RuntimeWarning.

Vectorised over the queries: one stable sort by (query, decreasing score) and segment sums,
O(N log N) for N documents, no Python loop over the queries.
"""

from __future__ import annotations

import numbers
import re
import warnings
from functools import partial
from typing import NamedTuple

import numpy as np

from .._validation import caller_stacklevel, check_choice, check_int, check_scalar, check_vector

__all__ = ["ndcg_at_k", "mean_average_precision", "precision_at_k", "positives_at_top",
           "QueryScores", "query_metric", "check_query_ids", "GAINS", "TIES"]

GAINS = ("exponential", "linear")
TIES = ("average", "stable")


class QueryScores(NamedTuple):
    """A metric per query: ``qid`` the distinct query ids (sorted), ``value`` their values
    (NaN for a query left out by ``no_relevant="skip"``)."""
    qid: np.ndarray
    value: np.ndarray


class _Ranking(NamedTuple):
    """The documents ranked by (query, decreasing score), and the groups of that order."""
    qids: np.ndarray       # the distinct query ids, sorted
    query: np.ndarray      # query index of each ranked position
    starts: np.ndarray     # first position of each query, then N (length n_queries + 1)
    rank: np.ndarray       # rank of each position within its query, from 1
    labels: np.ndarray     # labels in ranked order
    ties: np.ndarray       # first position of each group of equal scores in one query
    group: np.ndarray      # the group of equal scores of each ranked position


# ---- validation and the ranking ---------------------------------------------------------------
def check_query_ids(qid, n: int, name: str = "qid") -> np.ndarray:
    """Query ids ``qid`` as a 1-D array of length n (one per document, any sortable values);
    ValueError/TypeError naming ``name``."""
    q = np.asarray(qid)
    if q.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one query id per document), got shape {q.shape}")
    if q.shape[0] != n:
        raise ValueError(f"{name} must have length {n} (one query id per document), got "
                         f"{q.shape[0]}")
    if q.dtype.kind == "c":
        raise TypeError(f"{name} must hold real numbers or strings, got complex numbers")
    if q.dtype.kind == "f" and not np.all(np.isfinite(q)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return q


def _score_key(s: np.ndarray) -> np.ndarray:
    """A key ordering the scores decreasingly, exactly, in their own dtype: ``-s`` for floats,
    ``~s`` for integers and booleans (bitwise not, ``-s - 1`` or ``max - s``: no overflow, where
    ``-s`` overflows for the smallest signed integer and float64 would merge distinct integers
    above 2**53)."""
    return -s if s.dtype.kind == "f" else ~s


def _query_index(q: np.ndarray):
    """(the distinct query ids sorted, the index of each document's query among them), as
    ``np.unique(q, return_inverse=True)``; integer ids of a range below 4N without its sort."""
    if q.dtype.kind in "iu" and int(q.max()) - int(q.min()) < 4 * q.shape[0]:
        low = q.min()
        present = np.bincount(q - low) > 0
        return np.flatnonzero(present).astype(q.dtype) + low, (np.cumsum(present) - 1)[q - low]
    try:
        qids, query_of = np.unique(q, return_inverse=True)
    except TypeError as exc:  # e.g. an object array mixing ints and strings
        raise TypeError(f"qid must hold values of one sortable kind: {exc}") from None
    return qids, query_of.reshape(-1)


def _by_query(key: np.ndarray, query_of: np.ndarray, n_queries: int) -> np.ndarray:
    """The indices sorting by (query, key), stably (equal pairs keep the input order), as
    ``np.lexsort((key, query_of))`` but several times faster: a quicksort by ``key``, whose
    tied keys are put back in input order by a sort of ``(run of equal keys) * N + index``
    (keys of 16 bits or fewer: a radix sort), then stable passes over the 16-bit digits of the
    query index, least significant first (NumPy sorts uint16 stably by radix sort, in linear
    time)."""
    n = key.shape[0]
    if n >= 2**31:  # (run * N + index) would overflow int64 beyond N = 3e9
        return np.lexsort((key, query_of))
    if key.dtype.itemsize <= 2:  # radix sort, stable
        order = np.argsort(key, kind="stable")
    else:
        order = np.argsort(key)
        ranked = key[order]
        tied = ranked[1:] == ranked[:-1]
        if tied.any():
            run = np.r_[0, np.cumsum(~tied)]
            order = order[np.argsort(run * n + order)]
    shift = 0
    while shift == 0 or n_queries - 1 >> shift:
        digit = ((query_of[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order


def _rank(y_true, y_score, qid) -> _Ranking:
    """Validate the inputs and rank every query's documents by decreasing score (ties: input
    order)."""
    y = check_vector(y_true, "y_true", nonnegative=True)
    if y.shape[0] == 0:
        raise ValueError("y_true is empty: no document to rank")
    s = np.asarray(y_score)
    s = check_vector(s, "y_score", length=y.shape[0],
                     dtype=s.dtype if s.dtype.kind in "biuf" else np.float64)
    q = check_query_ids(qid, y.shape[0])
    qids, query_of = _query_index(q)
    order = _by_query(_score_key(s), query_of, qids.shape[0])
    query = query_of[order]
    starts = np.r_[0, np.cumsum(np.bincount(query_of, minlength=qids.shape[0]))]
    position = np.arange(y.shape[0])
    rank = position - starts[query] + 1
    s_ranked = s[order]
    new_group = np.r_[True, (query[1:] != query[:-1]) | (s_ranked[1:] != s_ranked[:-1])]
    return _Ranking(qids, query, starts, rank, y[order], np.flatnonzero(new_group),
                    np.cumsum(new_group) - 1)


def _query_sums(values: np.ndarray, ranking: _Ranking) -> np.ndarray:
    """Per-query sums of per-position values (every query has a document: no empty segment)."""
    return np.add.reduceat(values, ranking.starts[:-1])


def _tie_groups(values: np.ndarray, ranking: _Ranking, ties: str):
    """(first position, size, sum of ``values``) of the group of each position: the group of
    its equal scores for ``ties="average"``, the position alone for ``"stable"``."""
    n = values.shape[0]
    if check_choice(ties, "ties", TIES) == "stable" or ranking.ties.shape[0] == n:  # no tie
        return np.arange(n), np.ones(n), values
    size = np.diff(np.r_[ranking.ties, n])
    sums = np.add.reduceat(values, ranking.ties)
    return ranking.ties[ranking.group], size[ranking.group], sums[ranking.group]


def _spread(values: np.ndarray, ranking: _Ranking, ties: str) -> np.ndarray:
    """Per-position values after the tie rule: each position of a tied group gets the group's
    mean (the expectation over random tie-breaking) for ``"average"``, its own for ``"stable"``."""
    _, size, sums = _tie_groups(values, ranking, ties)
    return sums / size


def _cutoff(k, name: str = "k", *, allow_none: bool = False):
    """``k`` as an int >= 1 (or None when allowed); TypeError/ValueError naming it."""
    if k is None and allow_none:
        return None
    k = check_int(k, name)
    if k < 1:
        raise ValueError(f"{name} must be at least 1, got {k}")
    return k


def _threshold(threshold) -> float:
    """The relevance threshold, a positive real number (label 0 is never relevant)."""
    return check_scalar(threshold, "threshold", positive=True)


def _no_relevant(value, allowed: tuple):
    """``"skip"`` or one of the numbers ``allowed``; ValueError naming no_relevant."""
    if isinstance(value, str) and value == "skip":
        return value
    if (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and value in allowed):
        return float(value)
    raise ValueError(f"no_relevant must be 'skip' or one of {list(allowed)}, got {value!r}")


def _result(ranking: _Ranking, value: np.ndarray, undefined: np.ndarray, no_relevant,
            per_query: bool, metric: str):
    """The mean over queries (or the per-query values) once ``no_relevant`` is applied to the
    queries where ``undefined``."""
    value = np.where(undefined, np.nan if no_relevant == "skip" else no_relevant, value)
    if per_query:
        return QueryScores(ranking.qids, value)
    kept = value[~np.isnan(value)]
    if kept.size == 0:
        warnings.warn(f"{metric}: no query has a relevant document and no_relevant='skip' "
                      f"leaves every query out; the mean is NaN", RuntimeWarning,
                      stacklevel=caller_stacklevel())
        return float("nan")
    return float(kept.mean())


# ---- the formulas -----------------------------------------------------------------------------
def _gains(labels: np.ndarray, gain: str) -> np.ndarray:
    """``2^y - 1`` (exponential) or ``y`` (linear)."""
    if check_choice(gain, "gain", GAINS) == "exponential":
        return np.exp2(labels) - 1.0
    return labels


def _dcg(ranked_gains: np.ndarray, ranking: _Ranking, k) -> np.ndarray:
    """DCG@k per query of gains in ranked order: ``sum_{r <= k} G_r / log2(1 + r)``."""
    r = ranking.rank
    discounted = ranked_gains / np.log2(1.0 + r)
    return _query_sums(discounted if k is None else np.where(r <= k, discounted, 0.0), ranking)


def _ideal_labels(ranking: _Ranking) -> np.ndarray:
    """The labels of the ideal ranking: each query's labels sorted decreasingly, at the
    positions of the query."""
    labels = ranking.labels
    top = labels.max()
    # integer labels (the usual grades) are sorted as uint16, by radix; others as floats
    integer = top < 2**16 and np.all(labels == np.floor(labels))
    key = (top - labels).astype(np.uint16) if integer else -labels
    return labels[_by_query(key, ranking.query, ranking.qids.shape[0])]


def ndcg_at_k(y_true, y_score, qid, k=10, *, gain="exponential", ties="average",
              no_relevant="skip", per_query=False):
    """NDCG@k averaged over queries: ``DCG@k / IDCG@k`` per query (module docstring).

    ``gain``: ``"exponential"`` (``2^y - 1``) or ``"linear"`` (``y``). ``k``: an int >= 1, or
    None for the whole list. ``ties``: ``"average"`` or ``"stable"``. ``no_relevant``: the
    value of a query whose labels are all 0 (``"skip"``, 0 or 1).
    """
    ranking = _rank(y_true, y_score, qid)
    k = _cutoff(k, allow_none=True)
    no_relevant = _no_relevant(no_relevant, (0, 1))
    gains = _gains(ranking.labels, gain)
    dcg = _dcg(_spread(gains, ranking, ties), ranking, k)
    ideal = _dcg(_gains(_ideal_labels(ranking), gain), ranking, k)
    undefined = ideal == 0
    value = dcg / np.where(undefined, 1.0, ideal)
    return _result(ranking, value, undefined, no_relevant, per_query, "ndcg_at_k")


def mean_average_precision(y_true, y_score, qid, *, threshold=1, ties="average",
                           no_relevant="skip", per_query=False):
    """MAP: average precision averaged over queries (module docstring); relevant: label >=
    ``threshold``. ``no_relevant``: the value of a query with no relevant document (``"skip"``,
    0 or 1)."""
    ranking = _rank(y_true, y_score, qid)
    relevant = (ranking.labels >= _threshold(threshold)).astype(np.float64)
    no_relevant = _no_relevant(no_relevant, (0, 1))
    # per position r = a + j of a group of g documents, p relevant, P relevant above it:
    # (1/r) [(p/g)(1 + P) + (j - 1) p(p - 1) / (g(g - 1))]  (module docstring)
    first, g, p = _tie_groups(relevant, ranking, ties)
    cumulative = np.r_[0.0, np.cumsum(relevant)]
    above = cumulative[first] - cumulative[ranking.starts[ranking.query]]
    j = np.arange(first.shape[0]) - first + 1
    both = np.where(g > 1, p * (p - 1) / np.maximum(g * (g - 1), 1), 0.0)
    precision_terms = ((p / g) * (1.0 + above) + (j - 1) * both) / ranking.rank
    n_relevant = _query_sums(relevant, ranking)
    undefined = n_relevant == 0
    value = _query_sums(precision_terms, ranking) / np.where(undefined, 1.0, n_relevant)
    return _result(ranking, value, undefined, no_relevant, per_query, "mean_average_precision")


def precision_at_k(y_true, y_score, qid, k=10, *, threshold=1, ties="average",
                   no_relevant="skip", per_query=False):
    """P@k averaged over queries: the relevant share (label >= ``threshold``) of the k top
    places of each query, divided by k even for a shorter list (module docstring).
    ``no_relevant``: ``"skip"`` or 0 (the value P@k has there)."""
    ranking = _rank(y_true, y_score, qid)
    k = _cutoff(k)
    relevant = (ranking.labels >= _threshold(threshold)).astype(np.float64)
    no_relevant = _no_relevant(no_relevant, (0,))
    hits = _query_sums(np.where(ranking.rank <= k, _spread(relevant, ranking, ties), 0.0),
                       ranking)
    return _result(ranking, hits / k, _query_sums(relevant, ranking) == 0, no_relevant,
                   per_query, "precision_at_k")


def positives_at_top(y_true, y_score, qid, *, threshold=1, no_relevant="skip",
                     per_query=False):
    """Relevant documents (label >= ``threshold``) scored strictly above the highest-scored
    irrelevant one, per query, averaged over queries (module docstring); all the relevant
    documents of a query without an irrelevant one. ``no_relevant``: ``"skip"`` or 0."""
    ranking = _rank(y_true, y_score, qid)
    relevant = ranking.labels >= _threshold(threshold)
    no_relevant = _no_relevant(no_relevant, (0,))
    n = relevant.shape[0]
    # the first irrelevant position of each query (n if none), then the first position of its
    # group of equal scores: the relevant documents above that are at the top
    first_irrelevant = np.minimum.reduceat(np.where(relevant, n, np.arange(n)),
                                           ranking.starts[:-1])
    group_first = ranking.ties[ranking.group[np.minimum(first_irrelevant, n - 1)]]
    cutoff = np.where(first_irrelevant < n, group_first, ranking.starts[1:])
    cumulative = np.r_[0, np.cumsum(relevant)]
    at_top = (cumulative[cutoff] - cumulative[ranking.starts[:-1]]).astype(np.float64)
    return _result(ranking, at_top, _query_sums(relevant.astype(np.int64), ranking) == 0,
                   no_relevant, per_query, "positives_at_top")


# ---- metrics by name (RankerCV's scoring) -----------------------------------------------------
_NAMES = re.compile(r"^(ndcg|precision)(?:@(\d+))?$|^map$")


def query_metric(name: str):
    """The metric ``name`` as a function ``(y_true, y_score, qid) -> float`` with the defaults
    above: ``"ndcg@k"`` (``"ndcg"``: the whole list), ``"map"``, ``"precision@k"``; None when
    ``name`` is no such name (a string of another kind, such as a scikit-learn scorer's)."""
    match = _NAMES.match(name) if isinstance(name, str) else None
    if match is None:
        return None
    metric, k = match.groups()
    if name == "map":
        return mean_average_precision
    if metric == "precision":
        if k is None:
            return None  # scikit-learn's "precision" (of a classifier)
        return partial(precision_at_k, k=_cutoff(int(k), "the k of scoring"))
    return partial(ndcg_at_k, k=None if k is None else _cutoff(int(k), "the k of scoring"))
