"""Metrics over queries: equal to trec_eval (pytrec_eval) on the letor set and on generated
queries with ties, equal to scikit-learn's tie-averaged ``ndcg_score``, the expectation over
tie-breaking checked by enumeration, the defining properties, and bad input."""

import itertools
import os
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval  # trec_eval's C code (pytrec-eval-terrier, in the test extra)

from infpush_cvx.evaluation import metrics as bipartite
from infpush_cvx.evaluation import query_metrics as QM

CUTOFFS = (1, 3, 5, 10)
TOL = 1e-12


def _letor_dir() -> Path:
    """``$INFPUSH_CVX_DATA``'s sibling ``letor/``, else the shared data next to the checkout."""
    if os.environ.get("INFPUSH_CVX_DATA"):
        sibling = Path(os.environ["INFPUSH_CVX_DATA"]).parent / "letor"
        if sibling.is_dir():
            return sibling
    return Path(__file__).resolve().parents[2].parent / "shared" / "data" / "letor"


@pytest.fixture(scope="module")
def letor():
    """rank.train (3,005 documents, 201 queries, labels 0-4) with the scores of a fixed seeded
    linear model; the query of each row from the group file (counts of consecutive rows)."""
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    folder = _letor_dir()
    if not (folder / "rank.train").is_file():
        pytest.skip(f"the letor set is not in {folder}")
    X, y = sklearn_datasets.load_svmlight_file(str(folder / "rank.train"))
    sizes = np.loadtxt(folder / "rank.train.query", dtype=np.int64)
    assert sizes.sum() == X.shape[0] == 3005 and sizes.size == 201
    qid = np.repeat(np.arange(sizes.size), sizes)
    w = np.random.default_rng(20260530).normal(size=X.shape[1])
    return y, X @ w, qid


def _ties_data(seed=3):
    """Generated queries with ties: integer scores in 0..3, labels 0-4, queries of 1 to 12
    documents in shuffled rows with non-consecutive string ids, queries with every label 0."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 13, size=120)
    qid = np.repeat(np.array([f"q{7 * i + 3}" for i in range(sizes.size)]), sizes)
    y = rng.choice(5, size=qid.size, p=[0.5, 0.2, 0.15, 0.1, 0.05]).astype(float)
    y[qid == "q3"] = 0  # a query without a relevant document, whatever the draw
    s = rng.integers(0, 4, size=qid.size)
    perm = rng.permutation(qid.size)
    return y[perm], s[perm], qid[perm]


def _trec_eval(y, s, qid, measures, *, gain="linear", relevance_level=1):
    """trec_eval's per-query values, keyed by query id then measure. The documents are named
    so that trec_eval's tie order (decreasing name) is the input order, i.e. ``ties="stable"``.
    trec_eval's NDCG gain is the judged relevance: ``2^y - 1`` is passed as the relevance for
    the exponential gain (integers for integer labels)."""
    n = y.size
    names = [f"{n - i:09d}" for i in range(n)]
    judged = np.exp2(y) - 1 if gain == "exponential" else y
    qrel, run = {}, {}
    for i in range(n):
        qrel.setdefault(str(qid[i]), {})[names[i]] = int(judged[i])
        run.setdefault(str(qid[i]), {})[names[i]] = float(s[i])
    evaluator = pytrec_eval.RelevanceEvaluator(qrel, set(measures),
                                               relevance_level=int(relevance_level))
    return evaluator.evaluate(run)


def _per_query(result, trec, key):
    """trec_eval's values in the order of ``result.qid``."""
    return np.array([trec[str(q)][key] for q in result.qid])


def _compare_with_trec_eval(y, s, qid):
    """Every metric, both gains, two thresholds, per query and mean: the largest difference."""
    worst = 0.0
    cuts = ",".join(map(str, CUTOFFS))
    for gain in QM.GAINS:
        trec = _trec_eval(y, s, qid, {f"ndcg_cut.{cuts}", "ndcg"}, gain=gain)
        for k in CUTOFFS + (None,):
            key = "ndcg" if k is None else f"ndcg_cut_{k}"
            ours = QM.ndcg_at_k(y, s, qid, k, gain=gain, ties="stable", no_relevant=0,
                                per_query=True)
            expected = _per_query(ours, trec, key)
            worst = max(worst, np.max(np.abs(ours.value - expected)))
            mean = QM.ndcg_at_k(y, s, qid, k, gain=gain, ties="stable", no_relevant=0)
            worst = max(worst, abs(mean - expected.mean()))
            # "skip": the mean over the queries with a relevant document
            skip = QM.ndcg_at_k(y, s, qid, k, gain=gain, ties="stable")
            has_relevant = ~np.isnan(QM.ndcg_at_k(y, s, qid, k, gain=gain, ties="stable",
                                                  per_query=True).value)
            worst = max(worst, abs(skip - expected[has_relevant].mean()))
    for threshold in (1, 2):
        trec = _trec_eval(y, s, qid, {"map", f"P.{cuts}"}, relevance_level=threshold)
        ours = QM.mean_average_precision(y, s, qid, threshold=threshold, ties="stable",
                                         no_relevant=0, per_query=True)
        worst = max(worst, np.max(np.abs(ours.value - _per_query(ours, trec, "map"))))
        for k in CUTOFFS:
            ours = QM.precision_at_k(y, s, qid, k, threshold=threshold, ties="stable",
                                     no_relevant=0, per_query=True)
            worst = max(worst, np.max(np.abs(ours.value - _per_query(ours, trec, f"P_{k}"))))
    return worst


def test_equal_to_trec_eval_on_letor(letor):
    y, s, qid = letor
    assert _compare_with_trec_eval(y, s, qid) <= TOL


def test_equal_to_trec_eval_on_generated_queries_with_ties():
    y, s, qid = _ties_data()
    assert np.unique(s).size == 4  # many ties within queries
    assert _compare_with_trec_eval(y, s, qid) <= TOL


def test_tie_averaged_ndcg_equals_scikit_learn():
    """``ties="average"`` is scikit-learn's ``ndcg_score`` (McSherry & Najork's tie-averaged
    DCG; linear gains, its queries one at a time since it needs equal lengths, 0 for a query
    without a relevant document)."""
    from sklearn.metrics import ndcg_score
    y, s, qid = _ties_data(seed=5)
    for gain in QM.GAINS:
        judged = np.exp2(y) - 1 if gain == "exponential" else y
        for k in CUTOFFS + (None,):
            ours = QM.ndcg_at_k(y, s, qid, k, gain=gain, no_relevant=0, per_query=True)
            for q, value in zip(ours.qid, ours.value):
                rows = qid == q
                if rows.sum() == 1:  # scikit-learn refuses a single document
                    assert value == (1.0 if y[rows][0] > 0 else 0.0)
                    continue
                expected = ndcg_score(judged[rows][None], s[rows][None], k=k)
                assert abs(value - expected) <= TOL


def _tie_orders(y, s):
    """Every order of the documents: the metric with ``ties="stable"`` of each, averaged, is the
    expectation over uniformly random tie-breaking."""
    for perm in itertools.permutations(range(y.size)):
        perm = np.array(perm)
        yield y[perm], s[perm]


@pytest.mark.parametrize("metric,options", [
    (QM.ndcg_at_k, {"k": 2}), (QM.ndcg_at_k, {"k": None, "gain": "linear"}),
    (QM.mean_average_precision, {}), (QM.mean_average_precision, {"threshold": 2}),
    (QM.precision_at_k, {"k": 2}), (QM.precision_at_k, {"k": 4})])
def test_tie_average_is_the_expectation_over_tie_breaking(metric, options):
    rng = np.random.default_rng(11)
    for _ in range(25):
        n = int(rng.integers(1, 7))
        y, s = rng.integers(0, 3, n).astype(float), rng.integers(0, 3, n)
        y[0] = 2  # a relevant document at every threshold
        q = np.zeros(n, dtype=int)
        expected = np.mean([metric(yp, sp, q, ties="stable", **options)
                            for yp, sp in _tie_orders(y, s)])
        assert abs(metric(y, s, q, **options) - expected) <= TOL


def test_ap_with_ties_by_hand():
    """Three tied documents, one relevant, after one relevant document: E[AP] =
    (1 + (1/3)(2/2 + 2/3 + 2/4)) / 2."""
    y, s, q = np.array([1, 0, 1, 0]), np.array([5, 1, 1, 1]), np.zeros(4)
    assert QM.mean_average_precision(y, s, q) == pytest.approx((1 + (1 + 2 / 3 + 1 / 2) / 3) / 2,
                                                               abs=1e-15)
    # stable: the input order 1, 0, 1, 0
    assert QM.mean_average_precision(y, s, q, ties="stable") == pytest.approx((1 + 2 / 3) / 2)


def test_positives_at_top_is_the_bipartite_measure_per_query():
    """Per query, :func:`metrics.positives_at_top` of its binary labels (relevant: label >=
    threshold); a query without an irrelevant document counts all its relevant ones."""
    y, s, qid = _ties_data(seed=7)
    for threshold in (1, 3):
        ours = QM.positives_at_top(y, s, qid, threshold=threshold, no_relevant=0,
                                   per_query=True)
        for q, value in zip(ours.qid, ours.value):
            rel, sq = y[qid == q] >= threshold, s[qid == q]
            expected = (rel.sum() if rel.all() else 0 if not rel.any()
                        else bipartite.positives_at_top(rel, sq))
            assert value == expected
        assert QM.positives_at_top(y, s, qid, threshold=threshold) == pytest.approx(
            np.nanmean(QM.positives_at_top(y, s, qid, threshold=threshold,
                                           per_query=True).value))


def test_positives_at_top_strict_ties():
    y, s, q = np.array([2, 1, 0, 1]), np.array([3.0, 2.0, 2.0, 1.0]), np.zeros(4)
    assert QM.positives_at_top(y, s, q) == 1  # the relevant document tied with 0 is not on top
    assert QM.positives_at_top(y, s, q, threshold=2) == 1
    assert QM.positives_at_top(y, np.array([3.0, 2.5, 2.0, 1.0]), q) == 2


# ---- defining properties ----------------------------------------------------------------------
def test_ideal_ranking_has_ndcg_one_and_ap_one():
    y, _, qid = _ties_data(seed=2)
    for gain in QM.GAINS:
        for k in CUTOFFS + (None,):
            assert QM.ndcg_at_k(y, y, qid, k, gain=gain) == pytest.approx(1.0, abs=TOL)
    # relevant documents first: AP 1, for either tie rule (ties among equal labels only)
    assert QM.mean_average_precision(y, y, qid) == pytest.approx(1.0, abs=TOL)
    assert QM.mean_average_precision(y, (y >= 1).astype(int), qid) == pytest.approx(1.0, abs=TOL)


def test_reversed_ranking_is_worse():
    y, _, qid = _ties_data(seed=2)
    assert QM.ndcg_at_k(y, -y, qid, 5) < QM.ndcg_at_k(y, y + 0.0, qid, 5)


@pytest.mark.parametrize("ties", QM.TIES)
def test_invariant_to_a_monotone_transform_of_the_scores(ties):
    y, s, qid = _ties_data(seed=4)
    transformed = np.exp(0.7 * s) + 3.0  # strictly increasing: the same order and ties
    for metric, options in ((QM.ndcg_at_k, {"k": 5}), (QM.mean_average_precision, {}),
                            (QM.precision_at_k, {"k": 3}), (QM.positives_at_top, {})):
        if metric is not QM.positives_at_top:
            options = dict(options, ties=ties)
        assert metric(y, transformed, qid, **options) == metric(y, s, qid, **options)


def test_permuting_documents_changes_nothing_with_tie_averaging():
    """With ``ties="average"`` each metric is a function of the (label, score, query) triples,
    not of their order; so it is with ``"stable"`` when no score is tied."""
    y, s, qid = _ties_data(seed=6)
    rng = np.random.default_rng(0)
    for metric in (QM.ndcg_at_k, QM.mean_average_precision, QM.precision_at_k,
                   QM.positives_at_top):
        base = metric(y, s, qid, per_query=True)
        for _ in range(3):
            perm = rng.permutation(y.size)
            again = metric(y[perm], s[perm], qid[perm], per_query=True)
            np.testing.assert_array_equal(again.qid, base.qid)
            np.testing.assert_allclose(again.value, base.value, rtol=0, atol=TOL)
    distinct = rng.permutation(y.size).astype(float)
    perm = rng.permutation(y.size)
    for metric in (QM.ndcg_at_k, QM.mean_average_precision, QM.precision_at_k):
        assert metric(y[perm], distinct[perm], qid[perm], ties="stable") == pytest.approx(
            metric(y, distinct, qid, ties="stable"), abs=TOL)


def test_queries_are_independent_and_averaged():
    """The mean over queries of the metric of each query alone; the per-query ids sorted."""
    y, s, qid = _ties_data(seed=8)
    ours = QM.mean_average_precision(y, s, qid, per_query=True)
    assert list(ours.qid) == sorted(set(qid))
    for q, value in zip(ours.qid[:20], ours.value[:20]):
        rows = qid == q
        alone = QM.mean_average_precision(y[rows], s[rows], qid[rows], per_query=True).value[0]
        assert (np.isnan(value) and np.isnan(alone)) or value == pytest.approx(alone, abs=TOL)
    assert QM.mean_average_precision(y, s, qid) == pytest.approx(np.nanmean(ours.value),
                                                                 abs=TOL)


# ---- degenerate queries -----------------------------------------------------------------------
def test_query_without_relevant_document():
    y, s, q = np.array([0, 0, 2, 0]), np.array([1.0, 2.0, 1.0, 2.0]), np.array([5, 5, 9, 9])
    for metric, values in ((QM.ndcg_at_k, ("skip", 0, 1)),
                           (QM.mean_average_precision, ("skip", 0, 1)),
                           (QM.precision_at_k, ("skip", 0)), (QM.positives_at_top, ("skip", 0))):
        skipped = metric(y, s, q, per_query=True)
        assert np.isnan(skipped.value[0]) and not np.isnan(skipped.value[1])
        assert metric(y, s, q) == skipped.value[1]
        for value in values[1:]:
            assert metric(y, s, q, no_relevant=value, per_query=True).value[0] == value
            assert metric(y, s, q, no_relevant=value) == pytest.approx(
                (value + skipped.value[1]) / 2)
    with pytest.warns(RuntimeWarning, match="no query has a relevant document"):
        assert np.isnan(QM.ndcg_at_k([0, 0], [1.0, 2.0], [1, 1]))
    with pytest.raises(ValueError, match="no_relevant"):
        QM.precision_at_k(y, s, q, no_relevant=1)
    with pytest.raises(ValueError, match="no_relevant"):
        QM.ndcg_at_k(y, s, q, no_relevant="zero")


def test_single_document_queries():
    y, s, q = np.array([3, 0, 1]), np.array([0.1, 0.2, 0.3]), np.array([1, 2, 3])
    assert list(QM.ndcg_at_k(y, s, q, no_relevant=0, per_query=True).value) == [1, 0, 1]
    assert list(QM.mean_average_precision(y, s, q, no_relevant=0, per_query=True).value) == \
        [1, 0, 1]
    assert list(QM.precision_at_k(y, s, q, 4, no_relevant=0, per_query=True).value) == \
        [0.25, 0, 0.25]


def test_short_queries_and_large_k():
    """k beyond a query's length: NDCG over the whole list, P@k divided by k (trec_eval)."""
    y, s, q = np.array([1, 0, 2]), np.array([3.0, 2.0, 1.0]), np.zeros(3)
    assert QM.ndcg_at_k(y, s, q, 50) == QM.ndcg_at_k(y, s, q, None)
    assert QM.precision_at_k(y, s, q, 10) == pytest.approx(2 / 10)


def test_gains_by_hand():
    y, s, q = np.array([1, 2, 0]), np.array([3.0, 2.0, 1.0]), np.zeros(3)
    d2 = 1 / np.log2(3)
    assert QM.ndcg_at_k(y, s, q, gain="linear") == pytest.approx((1 + 2 * d2) / (2 + d2))
    assert QM.ndcg_at_k(y, s, q) == pytest.approx((1 + 3 * d2) / (3 + d2))
    assert QM.ndcg_at_k(y, s, q, 1) == pytest.approx(1 / 3)


def test_integer_scores_are_ranked_exactly():
    """Integer scores above 2**53 are not merged into ties by a cast to float64."""
    y, q = np.array([0, 1]), np.zeros(2)
    s = np.array([2**60, 2**60 + 1], dtype=np.int64)
    assert QM.ndcg_at_k(y, s, q) == 1.0
    assert QM.ndcg_at_k(y, np.array([np.iinfo(np.int64).min, 0]), q) == 1.0


def test_metric_names():
    y, s, qid = _ties_data(seed=9)
    assert QM.query_metric("ndcg@5")(y, s, qid) == QM.ndcg_at_k(y, s, qid, 5)
    assert QM.query_metric("ndcg")(y, s, qid) == QM.ndcg_at_k(y, s, qid, None)
    assert QM.query_metric("map")(y, s, qid) == QM.mean_average_precision(y, s, qid)
    assert QM.query_metric("precision@3")(y, s, qid) == QM.precision_at_k(y, s, qid, 3)
    for other in ("precision", "roc_auc", "average_precision", "ndcg@", "map@3", None):
        assert QM.query_metric(other) is None
    with pytest.raises(ValueError, match="k of scoring"):
        QM.query_metric("ndcg@0")


# ---- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize("call,match", [
    (lambda: QM.ndcg_at_k([1, 0], [1.0], [1, 1]), "y_score must have length 2"),
    (lambda: QM.ndcg_at_k([1, 0], [1.0, 2.0], [1]), "qid must have length 2"),
    (lambda: QM.ndcg_at_k([1, 0], [1.0, np.nan], [1, 1]), "y_score contains NaN"),
    (lambda: QM.ndcg_at_k([1, np.nan], [1.0, 2.0], [1, 1]), "y_true contains NaN"),
    (lambda: QM.ndcg_at_k([1, -1], [1.0, 2.0], [1, 1]), "y_true must be nonnegative"),
    (lambda: QM.ndcg_at_k([1, 0], [1.0, 2.0], [1, np.nan]), "qid contains NaN"),
    (lambda: QM.ndcg_at_k([1, 0], [1.0, 2.0], [[1, 1]]), "qid must be 1-D"),
    (lambda: QM.ndcg_at_k([], [], []), "y_true is empty"),
    (lambda: QM.ndcg_at_k([1, 0], [1.0, 2.0], [1, 1], k=0), "k must be at least 1"),
    (lambda: QM.precision_at_k([1, 0], [1.0, 2.0], [1, 1], k=-2), "k must be at least 1"),
    (lambda: QM.ndcg_at_k([1, 0], [1.0, 2.0], [1, 1], gain="log"), "gain"),
    (lambda: QM.ndcg_at_k([1, 0], [1.0, 2.0], [1, 1], ties="random"), "ties"),
    (lambda: QM.mean_average_precision([1, 0], [1.0, 2.0], [1, 1], threshold=0),
     "threshold must be positive"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_types_name_the_argument():
    with pytest.raises(TypeError, match="k must be an integer"):
        QM.ndcg_at_k([1, 0], [1.0, 2.0], [1, 1], k=2.5)
    with pytest.raises(TypeError, match="y_score"):
        QM.ndcg_at_k([1, 0], ["a", "b"], [1, 1])
    with pytest.raises(TypeError, match="qid"):
        QM.ndcg_at_k([1, 0], [1.0, 2.0], np.array([1, "a"], dtype=object))


def test_ten_thousand_queries_vectorised():
    """MSLR-WEB10K's shape (10,000 queries x 120 documents, shuffled rows): a generous bound
    for a loaded machine; the measured time is in the report (well under a second)."""
    import time
    rng = np.random.default_rng(0)
    qid = rng.permutation(np.repeat(np.arange(10_000), 120))
    y, s = rng.integers(0, 5, qid.size).astype(float), rng.normal(size=qid.size)
    start = time.perf_counter()
    value = QM.ndcg_at_k(y, s, qid, 10)
    assert time.perf_counter() - start < 10.0
    assert 0 < value < 1


@pytest.mark.parametrize("n_queries", [1, 3, 70_000])
def test_the_ranking_sort_is_lexsort(n_queries):
    """The ranking's sort (quicksort, ties put back in input order, radix passes over the query
    index: two 16-bit digits beyond 65,536 queries) is ``np.lexsort((key, query))``."""
    rng = np.random.default_rng(n_queries)
    query = rng.integers(0, n_queries, 200_000)
    for key in (rng.normal(size=query.size), rng.integers(0, 40, query.size).astype(float),
                rng.integers(-3, 3, query.size).astype(np.int8), ~rng.integers(0, 9, query.size)):
        np.testing.assert_array_equal(QM._by_query(key, query, n_queries),
                                      np.lexsort((key, query)))
