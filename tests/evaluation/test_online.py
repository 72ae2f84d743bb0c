"""Perceptron@K: hand-checked updates, Algorithm 1 == sequential scheme, sampling, determinism."""

import numpy as np
import pytest

from infpush_cvx.evaluation.online import (RandomFourierFeatures, imbalanced_stream,
                                           minibatch_indices, perceptron_at_k,
                                           query_probabilities)
from infpush_cvx.evaluation.online.sampling import RANDOM_SCHEMES


def test_minibatch_split_is_a_seeded_partition():
    b = minibatch_indices(1000, seed=3)
    assert len(b) == round(np.log(1000))  # about ln N batches of N / ln N
    np.testing.assert_array_equal(np.sort(np.concatenate(b)), np.arange(1000))
    assert max(x.size for x in b) - min(x.size for x in b) <= 1
    for x, z in zip(b, minibatch_indices(1000, seed=3)):
        np.testing.assert_array_equal(x, z)
    assert not np.array_equal(b[0], minibatch_indices(1000, seed=4)[0])
    with pytest.raises(ValueError, match="n_batches"):
        minibatch_indices(5, n_batches=6, seed=0)


def _one_batch_run(X, y, k, scheme, **kw):
    return perceptron_at_k(X, y, k, scheme=scheme, seed=0, n_batches=2, **kw)


def test_update_rule_by_hand():
    # Batch 1 runs at w = 0; batch 2 scores with the w learned on batch 1, which we rebuild here.
    X, y = imbalanced_stream(40, 3, positive_fraction=0.3, seed=1)
    k = 4
    res = _one_batch_run(X, y, k, "full")
    b1, b2 = minibatch_indices(40, n_batches=2, seed=0)
    w = np.zeros(3)
    for idx in (b1, b2):
        B, yb = X[idx], y[idx]
        order = np.argsort(-(B @ w), kind="stable")
        top, rest = order[:k], order[k:]
        delta = int((yb[top] == 0).sum())
        fp = top[yb[top] == 0]
        fn = rest[yb[rest] == 1][:delta]
        w = w - B[fp].sum(0) + B[fn].sum(0)
    np.testing.assert_allclose(res.w, w)
    assert res.queries.tolist() == [b1.size, b2.size]


def test_sequential_equals_algorithm1_with_fewer_queries():
    X, y = imbalanced_stream(3000, 10, positive_fraction=0.1, separation=2.5, seed=2)
    full = perceptron_at_k(X, y, 30, scheme="full", seed=5)
    seq = perceptron_at_k(X, y, 30, scheme="sequential", seed=5)
    np.testing.assert_array_equal(full.w, seq.w)
    np.testing.assert_array_equal(full.prec_at_k, seq.prec_at_k)
    assert np.all(seq.queries <= full.queries)
    assert np.all(seq.queries >= 30)
    # a batch without mistakes costs exactly the K top labels
    assert np.all(seq.queries[seq.mistakes == 0] == 30)
    assert seq.cumulative_queries[-1] < full.cumulative_queries[-1] / 2
    np.testing.assert_array_equal(seq.expected_queries, seq.queries)


def test_learns_on_an_informative_stream():
    X, y = imbalanced_stream(6000, 10, positive_fraction=0.1, separation=3.0, seed=0)
    for scheme in ("sequential", "exponential", "inverse", "uniform"):
        r = perceptron_at_k(X, y, 50, scheme=scheme, seed=1)
        # base rate is 0.1; the last batches must be far above it
        assert r.prec_at_k[-3:].mean() > 0.6, (scheme, r.prec_at_k)


@pytest.mark.parametrize("scheme", RANDOM_SCHEMES)
def test_query_probabilities(scheme):
    margins = np.array([0.0, 0.1, 0.5, 1.0, 3.0, 10.0])
    p = query_probabilities(margins, 1, scheme, rate=1.0)
    assert np.all((0 <= p) & (p <= 1))
    assert p.sum() == pytest.approx(1.0)  # rate * Delta expected queries when nothing is capped
    if scheme == "uniform":
        assert np.allclose(p, p[0])
    else:  # closer to the K-th score: queried more often
        assert np.all(np.diff(p) < 0)
    if scheme == "exponential":
        assert p[0] / p[3] == pytest.approx(np.e)
    if scheme == "inverse":
        assert p[3] / p[5] == pytest.approx((10 + 1e-3) / (1 + 1e-3))
    assert np.all(query_probabilities(margins, 100, scheme) <= 1)
    with pytest.raises(ValueError, match="scheme"):
        query_probabilities(margins, 1, "sequential")


@pytest.mark.parametrize("scheme", RANDOM_SCHEMES)
def test_active_queries_match_expected_budget(scheme):
    # With rate r, a batch with Delta mistakes queries about K + r * Delta labels (uncapped).
    X, y = imbalanced_stream(20000, 5, positive_fraction=0.2, separation=1.0, seed=7)
    r = perceptron_at_k(X, y, 20, scheme=scheme, seed=1, rate=1.5, n_batches=40)
    extra = (r.queries - 20).sum()
    expected = (r.expected_queries - 20).sum()
    assert expected <= 1.5 * r.mistakes.sum() + 1e-9  # the cap at 1 can only lower the budget
    assert abs(extra - expected) <= 4 * np.sqrt(expected)  # Bernoulli sum: within 4 sd


@pytest.mark.parametrize("scheme", ["sequential", "exponential", "uniform"])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_deterministic_under_seed(scheme, kernel):
    X, y = imbalanced_stream(2000, 6, seed=3)
    a = perceptron_at_k(X, y, 20, scheme=scheme, seed=11, kernel=kernel, n_components=50)
    b = perceptron_at_k(X, y, 20, scheme=scheme, seed=11, kernel=kernel, n_components=50)
    np.testing.assert_array_equal(a.w, b.w)
    np.testing.assert_array_equal(a.queries, b.queries)
    c = perceptron_at_k(X, y, 20, scheme=scheme, seed=12, kernel=kernel, n_components=50)
    assert not np.array_equal(a.w, c.w)
    df = a.frame()
    assert list(df["cumulative_queries"]) == list(np.cumsum(a.queries))
    assert a.decision_function(X[:5]).shape == (5,)


def test_random_fourier_features_approximate_rbf_kernel():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    Z = RandomFourierFeatures(20000, gamma=0.3, seed=0).fit_transform(X)
    K = np.exp(-0.3 * ((X[:, None] - X[None]) ** 2).sum(-1))
    assert np.abs(Z @ Z.T - K).max() < 0.05
    with pytest.raises(ValueError, match="gamma"):
        RandomFourierFeatures(10, gamma=0.0, seed=0)
    with pytest.raises(ValueError, match="n_components"):
        RandomFourierFeatures(0, seed=0)
    with pytest.raises(ValueError, match="RandomFourierFeatures is not fitted"):
        RandomFourierFeatures(10, seed=0).transform(X)
    with pytest.raises(ValueError, match="X has 3 features, RandomFourierFeatures was fitted on 4"):
        RandomFourierFeatures(10, seed=0).fit(X).transform(X[:, :3])


def test_bad_input():
    X, y = imbalanced_stream(200, 3, seed=0)
    with pytest.raises(ValueError, match="k"):
        perceptron_at_k(X, y, 1000, seed=0)
    with pytest.raises(TypeError, match="k"):
        perceptron_at_k(X, y, 2.0, seed=0)
    with pytest.raises(ValueError, match="scheme"):
        perceptron_at_k(X, y, 5, scheme="greedy", seed=0)
    with pytest.raises(ValueError, match="y"):
        perceptron_at_k(X, y[:-1], 5, seed=0)
    with pytest.raises(ValueError, match="y"):
        perceptron_at_k(X, y + np.arange(len(y)) % 2, 5, seed=0)  # three labels
    with pytest.raises(ValueError, match="X"):
        perceptron_at_k(np.full_like(X, np.nan), y, 5, seed=0)
    with pytest.raises(ValueError, match="rate"):
        perceptron_at_k(X, y, 5, scheme="uniform", rate=0.0, seed=0)
    with pytest.raises(TypeError, match="seed"):
        perceptron_at_k(X, y, 5, seed=None)
    with pytest.raises(ValueError, match="positive_fraction"):
        imbalanced_stream(100, 2, positive_fraction=1.0, seed=0)
