"""Issue 27, item 7: the rankers take sparse X, as the solvers do. Every scipy.sparse format
(matrices and arrays) is converted once to CSR and reaches the solvers as CSR rows; the fitted
model is the dense data's; RankerCV and the README's a8a take it too.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.evaluation.ranker_cv import RankerCV
from infpush_cvx.evaluation.rankers import (InfinitePushRanker, PNormPushRanker, RankSVMRanker,
                                            SparseInfinitePushRanker, SquaredHingeRankSVMRanker,
                                            SVMMAPRanker, TopPushRanker)
from ranker_data import CERTIFIED, SHARED, two_classes  # tests/evaluation/ranker_data.py

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402


RANKERS = [InfinitePushRanker(C=10.0), SparseInfinitePushRanker(C=100.0),
           RankSVMRanker(C=10.0), InfinitePushRanker(C=10.0, kernel="rbf"),
           SVMMAPRanker(C=10.0), TopPushRanker(C=10.0), PNormPushRanker(C=10.0),
           InfinitePushRanker(C=10.0, solver="cvxpy"),
           SparseInfinitePushRanker(C=100.0, solver="cvxpy"), PNormPushRanker(solver="cvxpy"),
           SquaredHingeRankSVMRanker(C=10.0), SquaredHingeRankSVMRanker(solver="cvxpy")]


@pytest.mark.parametrize("ranker", RANKERS, ids=repr)
def test_sparse_X_of_any_format_fits_the_dense_model(ranker):
    # was: TypeError: X must be a dense array, got a scipy.sparse matrix
    X, y = two_classes()
    dense = clone(ranker).fit(X, y)
    assert dense.n_features_used_ is None or dense.n_features_used_ > 0  # a real model
    for fmt in (sp.csr_matrix, sp.csc_matrix, sp.coo_array, sp.lil_matrix):
        fitted = clone(ranker).fit(fmt(X), y)
        for X_pred in (fmt(X), X):  # either kind of X at prediction time
            scores = fitted.decision_function(X_pred)
            assert type(scores) is np.ndarray and scores.shape == (X.shape[0],)
            np.testing.assert_allclose(scores, dense.decision_function(X), rtol=1e-8,
                                       atol=1e-8)
        assert fitted.score(fmt(X), y) == pytest.approx(dense.score(X, y), abs=1e-12)
        np.testing.assert_array_equal(fitted.predict(fmt(X)), dense.predict(X))


def test_sparse_X_is_converted_to_csr_once_and_reaches_the_solver_sparse(monkeypatch):
    from infpush_cvx.solvers import registry
    method = registry.model("ranksvm").default
    seen = []
    real = method._solve

    def spy(self, problem, warm_start, deadline):
        seen.append((type(problem.data.Xp), type(problem.data.Xn)))
        return real(self, problem, warm_start, deadline)

    monkeypatch.setattr(method, "_solve", spy)
    X, y = two_classes()
    RankSVMRanker(C=10.0).fit(sp.csc_array(X), y)
    assert seen == [(sp.csr_matrix, sp.csr_matrix)]  # rows of one CSR matrix, never densified


def test_linear_dual_coef_on_sparse_data_is_the_minimum_norm_solution():
    X, y = two_classes()
    dense = InfinitePushRanker(C=10.0).fit(X, y)
    fitted = InfinitePushRanker(C=10.0).fit(sp.csr_matrix(X), y)
    assert sp.issparse(fitted.support_vectors_)  # kept sparse, as scikit-learn's SVC does
    # Z^T beta = coef_ on the training rows, and beta is LAPACK's minimum-norm one
    np.testing.assert_allclose(fitted.support_vectors_.T @ fitted.dual_coef_[fitted.support_],
                               fitted.coef_, atol=1e-9)
    np.testing.assert_allclose(fitted.dual_coef_, dense.dual_coef_, atol=1e-8)


def test_sparse_X_bad_input_is_named():
    X, y = two_classes()
    with pytest.raises(ValueError, match="X contains NaN"):
        InfinitePushRanker().fit(sp.csr_matrix(np.where(X > 2, np.nan, X)), y)
    with pytest.raises(ValueError, match="0 feature"):
        InfinitePushRanker().fit(sp.csr_matrix((X.shape[0], 0)), y)
    with pytest.raises(ValueError, match="Complex data"):
        InfinitePushRanker().fit(sp.csr_matrix(X.astype(complex)), y)
    r = RankSVMRanker(C=10.0).fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="X has 5 features"):
        r.decision_function(sp.csr_matrix(X[:, :5]))


def test_ranker_cv_takes_sparse_X():
    X, y = two_classes(N=120)
    dense = RankerCV(RankSVMRanker(), Cs=[0.1, 10.0], cv=3).fit(X, y)
    sparse = RankerCV(RankSVMRanker(), Cs=[0.1, 10.0], cv=3).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.scores_, dense.scores_, atol=1e-10)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-8)


@pytest.mark.skipif(not (SHARED / "libsvm" / "a8a").is_file(), reason="a8a not present")
def test_a8a_from_the_readme_fits_as_sparse():
    from infpush_cvx.data.datasets import load_a8a
    X, y = load_a8a(SHARED / "libsvm")
    rows = np.random.default_rng(0).choice(X.shape[0], 600, replace=False)
    r = RankSVMRanker(C=100.0).fit(X[rows], y[rows])
    assert r.status_ in CERTIFIED and r.n_features_used_ > 10
    assert r.score(X[:2000], y[:2000]) > 0.5  # better than chance: 24% positives
