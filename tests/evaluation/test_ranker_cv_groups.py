"""Issue 30, item 4: ``RankerCV.fit(X, y, groups=qid)`` keeps every query in one fold
(GroupKFold), scores folds by the metrics over queries (``scoring="ndcg@10"``, ``"map"``,
``"precision@k"``), and passes a ranker over queries its training rows' query ids."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import GroupKFold, StratifiedGroupKFold

from infpush_cvx.evaluation import query_metrics as QM
from infpush_cvx.evaluation.ranker_cv import RankerCV
from infpush_cvx.evaluation.rankers import InfinitePushRanker, RankSVMRanker
from ranker_data import two_classes  # tests/evaluation/ranker_data.py


def _queries(seed=0, N=120, n_queries=15):
    """Two classes with a query id per row (non-consecutive, shuffled), every row distinct."""
    X, y = two_classes(seed=seed, N=N, zeros=0.0)
    qid = np.random.default_rng(seed).integers(0, n_queries, N) * 10 + 7
    return X, y, qid


class _HeldOut:
    """A scorer that records the held-out rows it is given (as indices of X)."""

    def __init__(self, X):
        self.index = {row.tobytes(): i for i, row in enumerate(X)}
        self.folds = []

    def __call__(self, estimator, X, y):
        self.folds.append(np.array([self.index[row.tobytes()] for row in X]))
        return 0.0


def _split_queries(folds, qid):
    """The queries whose rows are held out in more than one fold."""
    fold_of = {}
    for k, rows in enumerate(folds):
        for q in set(qid[rows]):
            fold_of.setdefault(q, set()).add(k)
    return [q for q, ks in fold_of.items() if len(ks) > 1]


def test_groups_keep_every_query_in_one_fold():
    X, y, qid = _queries()
    assert len(set(qid)) == 15
    held_out = _HeldOut(X)
    RankerCV(InfinitePushRanker(), Cs=[1.0], scoring=held_out).fit(X, y, groups=qid)
    assert len(held_out.folds) == 5  # the default: 5 folds
    every = np.sort(np.concatenate(held_out.folds))
    np.testing.assert_array_equal(every, np.arange(X.shape[0]))  # a partition of the rows
    assert _split_queries(held_out.folds, qid) == []
    # was (and still is without groups): stratified folds cut the queries
    plain = _HeldOut(X)
    RankerCV(InfinitePushRanker(), Cs=[1.0], scoring=plain).fit(X, y)
    assert len(_split_queries(plain.folds, qid)) > 0


def test_a_splitter_gets_the_groups():
    X, y, qid = _queries(seed=1)
    held_out = _HeldOut(X)
    RankerCV(RankSVMRanker(), Cs=[1.0], cv=StratifiedGroupKFold(3), scoring=held_out).fit(
        X, y, groups=qid)
    assert len(held_out.folds) == 3 and _split_queries(held_out.folds, qid) == []


@pytest.mark.parametrize("scoring,metric", [
    ("ndcg@3", lambda y, s, q: QM.ndcg_at_k(y, s, q, 3)),
    ("ndcg", lambda y, s, q: QM.ndcg_at_k(y, s, q, None)),
    ("map", QM.mean_average_precision),
    ("precision@2", lambda y, s, q: QM.precision_at_k(y, s, q, 2))])
def test_query_scoring_is_the_metric_of_each_fold(scoring, metric):
    X, y, qid = _queries(seed=2)
    cv = RankerCV(RankSVMRanker(), Cs=[1.0], cv=4, scoring=scoring).fit(X, y, groups=qid)
    for k, (train, test) in enumerate(GroupKFold(4).split(X, y, qid)):
        fitted = clone(RankSVMRanker(C=1.0)).fit(X[train], y[train])
        expected = metric(y[test], fitted.decision_function(X[test]), qid[test])
        assert cv.scores_[k, 0] == pytest.approx(expected, abs=1e-12)


def test_query_scoring_reads_the_positive_class_as_relevant():
    """Relevance 1 is the positive class (``pos_label``), not the label's value."""
    X, y, qid = _queries(seed=3)
    plain = RankerCV(RankSVMRanker(), Cs=[0.5, 5.0], cv=3, scoring="map").fit(X, y, groups=qid)
    flipped = RankerCV(RankSVMRanker(pos_label=0), Cs=[0.5, 5.0], cv=3, scoring="map").fit(
        X, 1 - y, groups=qid)
    np.testing.assert_allclose(flipped.scores_, plain.scores_, rtol=0, atol=1e-12)
    signed = RankerCV(RankSVMRanker(), Cs=[0.5, 5.0], cv=3, scoring="map").fit(
        X, 2 * y - 1, groups=qid)  # labels -1/+1: relevance 0/1, no negative label
    np.testing.assert_allclose(signed.scores_, plain.scores_, rtol=0, atol=1e-12)


def test_query_scoring_without_groups_scores_each_fold_as_one_query():
    X, y, _ = _queries(seed=4)
    cv = RankerCV(RankSVMRanker(), Cs=[1.0], cv=3, scoring="ndcg@5").fit(X, y)
    assert cv.scores_.shape == (3, 1) and np.all((cv.scores_ > 0) & (cv.scores_ <= 1))


#: (C, training query ids, training labels) of every fit of _QueryRanker, in order
FITS = []


class _QueryRanker(BaseEstimator):
    """A ranker over queries as the query rankers' contract has it, ``fit(X, y, qid=None,
    sample_weight=None)``: a RankSVM on relevance >= 1, recording what it is fitted with."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y, qid=None, sample_weight=None):
        FITS.append((self.C, None if qid is None else np.asarray(qid).copy(), np.asarray(y)))
        inner = RankSVMRanker(C=self.C).fit(X, (np.asarray(y) >= 1).astype(int),
                                           sample_weight=sample_weight)
        self.coef_, self.n_iter_ = inner.coef_, inner.n_iter_
        return self

    def decision_function(self, X):
        return X @ self.coef_


def test_a_ranker_over_queries_gets_the_training_rows_query_ids():
    X, y, qid = _queries(seed=5)
    graded = y * np.random.default_rng(0).integers(1, 4, y.size)  # labels 0 to 3
    FITS.clear()
    cv = RankerCV(_QueryRanker(), Cs=[0.1, 1.0], cv=3).fit(X, graded, groups=qid)
    folds = list(GroupKFold(3).split(X, graded, qid))
    assert len(FITS) == 3 * 2 + 1  # every fold and C, then the refit
    for k, (train, test) in enumerate(folds):
        for i, C in enumerate((0.1, 1.0)):
            fit_C, fit_qid, fit_y = FITS[2 * k + i]
            assert fit_C == C
            np.testing.assert_array_equal(fit_qid, qid[train])
            np.testing.assert_array_equal(fit_y, graded[train])  # graded labels as they are
            assert not set(fit_qid) & set(qid[test])
            # the default scoring of a ranker over queries: NDCG@10 of the graded labels
            fitted = _QueryRanker(C=C).fit(X[train], graded[train], qid=qid[train])
            assert cv.scores_[k, i] == pytest.approx(
                QM.ndcg_at_k(graded[test], fitted.decision_function(X[test]), qid[test], 10),
                abs=1e-12)
    C, refit_qid, _ = FITS[6]
    assert C == cv.C_ and np.array_equal(refit_qid, qid)
    np.testing.assert_array_equal(cv.coef_, cv.best_estimator_.coef_)
    np.testing.assert_array_equal(cv.decision_function(X), X @ cv.coef_)
    assert cv.n_iter_path_.shape == (3, 2) and not np.isnan(cv.n_iter_path_).any()


def test_a_ranker_over_queries_class_and_scorer_names(caplog):
    X, y, qid = _queries(seed=6)
    FITS.clear()
    with caplog.at_level("INFO", logger="infpush_cvx.evaluation.ranker_cv"):
        cv = RankerCV(_QueryRanker, Cs=[1.0], cv=3, scoring="roc_auc", verbose=True).fit(
            X, y, groups=qid)
    assert cv.scores_.shape == (3, 1) and np.all(cv.scores_ > 0.5)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("RankerCV")]
    assert len(lines) == 4 and lines[0].startswith("RankerCV fold 1/3, C=1: held-out score ")
    assert lines[-1].startswith("RankerCV: C=1 chosen")
    FITS.clear()
    RankerCV(_QueryRanker(), Cs=[1.0], cv=3, scoring="map").fit(X, y)  # no groups: qid None
    assert all(fit_qid is None for _, fit_qid, _ in FITS)


@pytest.mark.parametrize("groups,match", [
    (np.arange(5), "groups must have length 120"),
    (np.full(120, np.nan), "groups contains NaN"),
    (np.zeros((120, 2)), "groups must be 1-D"),
    (np.repeat(np.arange(3), 40), "n_splits=5"),  # sklearn's: more folds than queries
])
def test_bad_groups_are_named(groups, match):
    X, y, _ = _queries()
    with pytest.raises(ValueError, match=match):
        RankerCV(RankSVMRanker(), Cs=[1.0]).fit(X, y, groups=groups)


def test_a_ranker_must_be_a_ranker():
    X, y, qid = _queries()
    with pytest.raises(TypeError, match="a ranker over queries"):
        RankerCV(object(), Cs=[1.0]).fit(X, y, groups=qid)


def test_a_ranker_over_queries_gets_the_fold_weights():
    X, y, qid = _queries(seed=7)
    sw = np.random.default_rng(1).integers(1, 4, y.size).astype(float)
    FITS.clear()
    weighted = RankerCV(_QueryRanker(), Cs=[1.0], cv=3).fit(X, y, sample_weight=sw,
                                                             groups=qid)
    for k, (train, test) in enumerate(GroupKFold(3).split(X, y, qid)):
        fitted = RankSVMRanker(C=1.0).fit(X[train], y[train], sample_weight=sw[train])
        assert weighted.scores_[k, 0] == pytest.approx(
            QM.ndcg_at_k(y[test], fitted.decision_function(X[test]), qid[test]), abs=1e-12)
    with pytest.raises(ValueError, match="sample_weight must have length 120"):
        RankerCV(_QueryRanker(), Cs=[1.0], cv=3).fit(X, y, sample_weight=sw[:5], groups=qid)
