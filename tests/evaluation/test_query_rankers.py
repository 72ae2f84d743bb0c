"""The rankers over queries: scikit-learn's conventions, qid required, the fit equal to the
solver's, rows in any order, and NDCG@10 as the score."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from infpush_cvx.data.generators import letor_like
from infpush_cvx.evaluation.query_rankers import QueryRanker, QueryRankSVMRanker
from infpush_cvx.solvers import query_ranksvm

DATA = letor_like(12, 8, 5, seed=0)


def test_fit_equals_the_solver():
    ranker = QueryRankSVMRanker(C=20, loss="squared_hinge", normalization="pairs",
                                tol=1e-9).fit(DATA.X, DATA.y, qid=DATA.qid)
    result = query_ranksvm(DATA, 1 / 20, loss="squared_hinge", normalization="pairs", tol=1e-9)
    np.testing.assert_allclose(ranker.coef_, result.w, rtol=1e-10, atol=1e-12)
    assert ranker.status_ == "optimal" and ranker.dual_gap_ <= 1e-9
    assert ranker.n_features_in_ == DATA.d
    np.testing.assert_allclose(ranker.predict(DATA.X), DATA.X @ result.w)
    np.testing.assert_allclose(ranker.decision_function(DATA.X), DATA.X @ result.w)


def test_rows_in_any_order_give_the_same_fit():
    order = np.random.default_rng(0).permutation(DATA.n)
    a = QueryRankSVMRanker(C=10, tol=1e-9).fit(DATA.X, DATA.y, qid=DATA.qid)
    b = QueryRankSVMRanker(C=10, tol=1e-9).fit(DATA.X[order], DATA.y[order],
                                                  qid=DATA.qid[order])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-8)


def test_sample_weights_and_sparse_rows():
    sw = np.random.default_rng(1).uniform(0.5, 2.0, DATA.n)
    dense = QueryRankSVMRanker(C=10, tol=1e-9).fit(DATA.X, DATA.y, qid=DATA.qid,
                                                      sample_weight=sw)
    sparse = QueryRankSVMRanker(C=10, tol=1e-9).fit(sp.csr_matrix(DATA.X), DATA.y,
                                                       qid=DATA.qid, sample_weight=sw)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-6, atol=1e-8)
    unweighted = QueryRankSVMRanker(C=10, tol=1e-9).fit(DATA.X, DATA.y, qid=DATA.qid)
    assert not np.allclose(dense.coef_, unweighted.coef_)


def test_scikit_learn_conventions():
    ranker = QueryRankSVMRanker(C=5, loss="squared_hinge", pair_weight="label_difference")
    assert ranker.get_params()["pair_weight"] == "label_difference"
    copy = clone(ranker).set_params(C=4.0)
    assert copy.C == 4.0 and ranker.C == 5.0
    with pytest.raises(NotFittedError):
        ranker.predict(DATA.X)
    ranker.fit(DATA.X, DATA.y, qid=DATA.qid)
    with pytest.raises(ValueError, match="features"):
        ranker.predict(DATA.X[:, :3])
    assert isinstance(ranker, QueryRanker)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="qid is required"):
        QueryRankSVMRanker().fit(DATA.X, DATA.y)
    with pytest.raises(ValueError, match="qid must have one query id per row"):
        QueryRankSVMRanker().fit(DATA.X, DATA.y, qid=DATA.qid[:-1])
    with pytest.raises(ValueError, match="loss"):
        QueryRankSVMRanker(loss="l1").fit(DATA.X, DATA.y, qid=DATA.qid)
    with pytest.raises(ValueError, match="C"):
        QueryRankSVMRanker(C=0.0).fit(DATA.X, DATA.y, qid=DATA.qid)
    with pytest.raises(ValueError, match="qid is required"):
        QueryRankSVMRanker().fit(DATA.X, DATA.y, qid=DATA.qid).score(DATA.X, DATA.y)


def test_score_is_ndcg_at_10():
    metrics = pytest.importorskip("infpush_cvx.evaluation.query_metrics")
    ranker = QueryRankSVMRanker(C=10).fit(DATA.X, DATA.y, qid=DATA.qid)
    expected = metrics.ndcg_at_k(DATA.y, ranker.decision_function(DATA.X), DATA.qid, k=10)
    assert ranker.score(DATA.X, DATA.y, DATA.qid) == pytest.approx(expected)


def test_infinite_push_ranker_equals_its_solver():
    from infpush_cvx.evaluation.query_rankers import QueryInfinitePushRanker
    from infpush_cvx.solvers import query_infinite_push

    for penalty in ("l2", "l1"):
        ranker = QueryInfinitePushRanker(C=10, penalty=penalty, threshold=2.0,
                                         tol=1e-8).fit(DATA.X, DATA.y, qid=DATA.qid)
        result = query_infinite_push(DATA, 0.1, penalty=penalty, threshold=2.0, tol=1e-8)
        np.testing.assert_allclose(ranker.coef_, result.w, rtol=1e-6, atol=1e-8)
        assert ranker.status_ == "optimal"
    with pytest.raises(ValueError, match="penalty"):
        QueryInfinitePushRanker(penalty="l3").fit(DATA.X, DATA.y, qid=DATA.qid)


def test_ranker_cv_chooses_C_by_ndcg_over_whole_queries():
    from infpush_cvx.evaluation.ranker_cv import RankerCV

    search = RankerCV(QueryRankSVMRanker(loss="squared_hinge"), Cs=[0.1, 10.0], cv=3,
                      scoring="ndcg@5").fit(DATA.X, DATA.y, groups=DATA.qid)
    assert search.C_ in (0.1, 10.0)
    refit = QueryRankSVMRanker(C=search.C_, loss="squared_hinge").fit(DATA.X, DATA.y,
                                                                      qid=DATA.qid)
    np.testing.assert_allclose(search.decision_function(DATA.X), refit.decision_function(DATA.X),
                               rtol=1e-6, atol=1e-8)
