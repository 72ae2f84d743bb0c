"""QueryData: validation, derived query structure, pair counts against brute force; the
LETOR-like generator."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.data import QueryData
from infpush_cvx.data.generators import MSLR_LABELS, letor_like
from infpush_cvx.data.queries import QueryWarning


def brute_pairs(data):
    return [sum(1 for i in range(a, b) for j in range(a, b) if data.y[i] > data.y[j])
            for a, b in zip(data.ptr[:-1], data.ptr[1:])]


def test_structure_and_pair_counts_match_brute_force():
    rng = np.random.default_rng(1)
    qid = np.repeat([7, 3, 9, 4], [5, 1, 6, 4])
    y = rng.integers(0, 3, qid.size).astype(float)
    y[12:] = 2.0  # the last query: one label only
    with pytest.warns(QueryWarning, match="2 of 4 queries contribute no pair.*3, 4"):
        data = QueryData(rng.random((qid.size, 3)), y, qid)
    assert data.queries.tolist() == [7, 3, 9, 4]
    assert data.ptr.tolist() == [0, 5, 6, 12, 16]
    assert data.pair_counts.tolist() == brute_pairs(data)
    assert data.queries_without_pairs.tolist() == [3, 4]
    assert np.array_equal(data.labels[data.levels], data.y)
    assert data.query_index.tolist() == np.repeat(np.arange(4), [5, 1, 6, 4]).tolist()


def test_real_valued_labels_and_sparse_features():
    y = np.array([0.5, -1.0, 0.5, 2.25, 0.0, 0.0])
    data = QueryData(sp.random(6, 4, density=0.5, random_state=0, format="csr"), y,
                     [1, 1, 1, 2, 2, 2])
    assert data.is_sparse and data.n_levels == 4
    assert data.pair_counts.tolist() == brute_pairs(data) == [2, 2]


@pytest.mark.parametrize("qid, error, match", [
    ([1, 2, 1], ValueError, "qid: the documents of a query must be consecutive; queries 1"),
    ([1.5, 1.5, 2], ValueError, "qid must hold integers"),
    (["a", "a", "b"], TypeError, "qid must hold integers"),
    ([1, 1], ValueError, "qid must be 1-D with one query id per row of X"),
])
def test_bad_query_ids_are_named(qid, error, match):
    with pytest.raises(error, match=match):
        QueryData(np.zeros((3, 2)), [0, 1, 1], qid)


def test_bad_labels_and_weights_are_named():
    X, qid = np.zeros((3, 2)), [1, 1, 2]
    with pytest.raises(ValueError, match="y"):
        QueryData(X, [0, np.nan, 1], qid)
    with pytest.raises(ValueError, match="sample_weight must be strictly positive"):
        QueryData(X, [0, 1, 1], qid, sample_weight=[1, 0, 1])
    with pytest.raises(ValueError, match="query_weight"):
        QueryData(X, [0, 1, 1], qid, query_weight=[1, 2, 3])


def test_subset_keeps_whole_queries_and_weights():
    data = letor_like(20, 6, 4, seed=3)
    data = QueryData(data.X, data.y, data.qid, query_weight=np.arange(1.0, 21.0))
    part = data.subset([4, 0])
    assert part.queries.tolist() == [4, 0]
    assert part.query_weight.tolist() == [5.0, 1.0]
    rows = np.r_[data.ptr[4]:data.ptr[5], data.ptr[0]:data.ptr[1]]
    assert np.array_equal(part.X, data.X[rows]) and np.array_equal(part.y, data.y[rows])


def test_letor_like_is_reproducible_and_shaped():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueryWarning)
        a, b = letor_like(300, 40, 10, seed=5), letor_like(300, 40, 10, seed=5)
        c = letor_like(300, 40, 10, seed=6)
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()
    assert a.n_queries == 300 and a.d == 10 and abs(a.n / 300 - 40) < 3
    shares = np.bincount(a.y.astype(int), minlength=5) / a.n
    assert np.allclose(shares, MSLR_LABELS, atol=0.01)
    fixed = letor_like(5, 7, 3, seed=0, vary_sizes=False, label_probs=(0.5, 0.5))
    assert fixed.sizes.tolist() == [7] * 5 and set(fixed.y) <= {0.0, 1.0}


def test_letor_like_labels_follow_the_within_query_signal():
    # a model that sees only within-query differences recovers the relevance order
    data = letor_like(400, 30, 8, seed=2, noise=0.1)
    centred = data.X - np.add.reduceat(data.X, data.ptr[:-1])[data.query_index] / \
        data.sizes[data.query_index, None]
    w = np.linalg.lstsq(centred, data.y - data.y.mean(), rcond=None)[0]
    assert np.corrcoef(centred @ w, data.y)[0, 1] > 0.8


@pytest.mark.parametrize("kwargs, match", [
    ({"label_probs": (0.5, 0.6)}, "label_probs must be"),
    ({"label_probs": (1.0,)}, "label_probs must be"),
    ({"noise": -1.0}, "noise"),
    ({"seed": -1}, "seed"),
])
def test_letor_like_refuses_bad_parameters(kwargs, match):
    args = {"seed": 0, **kwargs}
    with pytest.raises(ValueError, match=match):
        letor_like(5, 5, 3, **args)


def test_the_warning_names_the_callers_line():
    with pytest.warns(QueryWarning) as caught:
        QueryData(np.zeros((2, 1)), [1, 1], [4, 4])
    assert caught[0].filename == __file__
