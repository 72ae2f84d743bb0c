"""Rankers: optimality against the primal objective, sparsity, label handling, sklearn contract."""

import numpy as np
import pytest

from infpush_cvx import metrics
from infpush_cvx.data import BipartiteData
from infpush_cvx.objectives import bipartite_objective
from infpush_cvx.rankers import InfinitePushRanker, RankSVMRanker, SparseInfinitePushRanker

RANKERS = [InfinitePushRanker, SparseInfinitePushRanker, RankSVMRanker]
LOSS = {InfinitePushRanker: ("infinite_push", "l2"),
        SparseInfinitePushRanker: ("infinite_push", "l1"),
        RankSVMRanker: ("ranksvm", "l2")}


def _data(seed=0, N=80, d=6, informative=3):
    rng = np.random.default_rng(seed)
    y = (rng.random(N) < 0.4).astype(int)
    X = rng.normal(size=(N, d))
    X[:, :informative] += 1.2 * y[:, None]
    return X, y


@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("C", [0.5, 50.0])
def test_coef_minimises_the_paper_objective(cls, C):
    X, y = _data()
    r = cls(C=C, solver="cvxpy").fit(X, y)
    data = BipartiteData.from_labels(X, y)
    loss, pen = LOSS[cls]
    f = lambda w: bipartite_objective(data, w, 1.0 / C, loss=loss, penalty=pen, scaling="paper")
    f_star = f(r.coef_)
    rng = np.random.default_rng(1)
    # no random perturbation (small or large) improves on the fitted weights
    for scale in (1e-3, 1e-1):
        for _ in range(20):
            assert f_star <= f(r.coef_ + scale * rng.normal(size=X.shape[1])) + 1e-7
    assert f_star <= f(np.zeros(X.shape[1])) + 1e-9
    assert r.status_ == "optimal" and r.backend_ == "cvxpy"
    assert r.coef_.shape == (X.shape[1],)


def test_sparse_ranker_drops_irrelevant_features():
    # 2 informative features among 40: the l1 Infinite Push keeps both and drops most others
    rng = np.random.default_rng(0)
    y = (rng.random(120) < 0.4).astype(int)
    X = rng.normal(size=(120, 40))
    X[:, :2] += 2.5 * y[:, None]
    r = SparseInfinitePushRanker(C=2.0, solver="cvxpy").fit(X, y)
    assert np.all(r.coef_[:2] > 0)
    assert 2 <= r.n_features_used_ <= 10
    assert np.count_nonzero(r.coef_) == r.n_features_used_
    assert InfinitePushRanker(C=2.0, solver="cvxpy").fit(X, y).n_features_used_ == 40
    # strong regularisation: exactly zero weights, not solver noise
    assert np.all(SparseInfinitePushRanker(C=0.01, solver="cvxpy").fit(X, y).coef_ == 0)


def test_score_is_average_precision_and_separable_data_ranks_perfectly():
    X, y = _data(seed=3)
    X = X + 10 * y[:, None] * np.r_[1.0, np.zeros(X.shape[1] - 1)]
    r = InfinitePushRanker(C=10.0, solver="cvxpy").fit(X, y)
    assert r.score(X, y) == metrics.average_precision(y, r.decision_function(X)) == 1.0
    assert metrics.positives_at_top(y, r.decision_function(X)) == y.sum()


def test_label_encodings_agree():
    X, y = _data(seed=4)
    base = RankSVMRanker(C=1.0, solver="cvxpy").fit(X, y).coef_
    for yy in (2 * y - 1, y.astype(bool), np.where(y == 1, "b", "a").astype(object)):
        if yy.dtype == object:
            with pytest.raises(ValueError, match="y"):
                RankSVMRanker(solver="cvxpy").fit(X, yy)
            continue
        np.testing.assert_allclose(RankSVMRanker(C=1.0, solver="cvxpy").fit(X, yy).coef_, base,
                                   atol=1e-6)


def test_fit_path_matches_individual_fits():
    X, y = _data(seed=5)
    r = InfinitePushRanker(solver="cvxpy")
    path = r._fit_path(X, y, [0.1, 10.0])
    for (w, status), C in zip(path, [0.1, 10.0]):
        np.testing.assert_allclose(w, InfinitePushRanker(C=C, solver="cvxpy").fit(X, y).coef_,
                                   atol=1e-6)


@pytest.mark.parametrize("cls", RANKERS)
def test_native_and_cvxpy_backends_agree(cls):
    module = "ranksvm" if cls is RankSVMRanker else "infinite_push"
    pytest.importorskip(f"infpush_cvx.solvers.{module}")
    X, y = _data(seed=8)
    data = BipartiteData.from_labels(X, y)
    loss, pen = LOSS[cls]
    Cs = [0.3, 3.0, 30.0]
    nat = cls(solver="native")._fit_path(X, y, Cs)
    cvx = cls(solver="cvxpy")._fit_path(X, y, Cs)
    for C, (wn, sn), (wc, _) in zip(Cs, nat, cvx):
        fn = bipartite_objective(data, wn, 1 / C, loss=loss, penalty=pen)
        fc = bipartite_objective(data, wc, 1 / C, loss=loss, penalty=pen)
        assert sn == "optimal"
        assert abs(fn - fc) <= 1e-6 * max(1.0, abs(fc))


def test_cvxpy_solver_failure_falls_back_to_other_solvers():
    X, y = _data(seed=9)
    ref = SparseInfinitePushRanker(C=3.0, solver="cvxpy").fit(X, y).coef_
    # an unknown solver name raises cvxpy's SolverError, like a numerical failure would
    r = SparseInfinitePushRanker(C=3.0, solver="cvxpy", cvxpy_solver="NO_SUCH_SOLVER").fit(X, y)
    np.testing.assert_allclose(r.coef_, ref, atol=1e-6)


@pytest.mark.parametrize("cls", RANKERS)
def test_bad_input(cls):
    X, y = _data()
    with pytest.raises(ValueError, match="C"):
        cls(C=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        cls(solver="gurobi").fit(X, y)
    with pytest.raises(ValueError, match="y"):
        cls(solver="cvxpy").fit(X, np.zeros_like(y))
    with pytest.raises(ValueError, match="y"):
        cls(solver="cvxpy").fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="X"):
        cls(solver="cvxpy").fit(np.where(X > 2, np.nan, X), y)
    r = cls(solver="cvxpy").fit(X, y)
    with pytest.raises(ValueError, match="X"):
        r.decision_function(X[:, :2])


try:
    from sklearn.utils.estimator_checks import parametrize_with_checks
except ImportError:  # sklearn is optional
    parametrize_with_checks = None

if parametrize_with_checks is not None:
    # Every applicable check passes. Documented exceptions: none are declared failing.
    # check_array_api_input is skipped by sklearn itself unless SCIPY_ARRAY_API is set; sparse-input
    # checks do not apply (tags.input_tags.sparse = False); classifier checks do not apply (the
    # rankers have no predict; their binary-label contract is declared through
    # classifier_tags.multi_class = False, which makes the checks feed two-valued y).
    # default instances (native backend when present) and the CVXPY backend of the l2 rankers
    @parametrize_with_checks([cls() for cls in RANKERS]
                             + [cls(solver="cvxpy") for cls in (InfinitePushRanker, RankSVMRanker)])
    def test_sklearn_estimator_checks(estimator, check):
        check(estimator)


@pytest.mark.parametrize("cls,module,func", [
    (InfinitePushRanker, "infinite_push", "infinite_push"),
    (SparseInfinitePushRanker, "infinite_push", "infinite_push"),
    (RankSVMRanker, "ranksvm", "rank_svm")])
def test_native_backend_call_contract(monkeypatch, cls, module, func):
    # The project's first-order solvers are called as
    # infinite_push(Xp, Xn, lam, penalty=..., scaling="paper", method=..., tol=...) and
    # rank_svm(Xp, Xn, lam, scaling="paper", method=..., tol=...), returning a SolverResult.
    import sys
    import types

    from infpush_cvx.solvers.result import SolverResult
    calls = []

    def fake(Xp, Xn, lam, **kw):
        calls.append((Xp.shape, Xn.shape, lam, kw))
        return SolverResult(w=np.arange(Xp.shape[1], dtype=float), objective=0.0, gap=0.0,
                            status="max_iter", iterations=1, time=0.0)

    mod = types.ModuleType(f"infpush_cvx.solvers.{module}")
    setattr(mod, func, fake)
    monkeypatch.setitem(sys.modules, f"infpush_cvx.solvers.{module}", mod)
    X, y = _data()
    r = cls(C=4.0, method="fista", tol=1e-5, solver="native").fit(X, y)
    if cls is not SparseInfinitePushRanker:
        assert cls()._backend() == "native"  # solver="auto" finds the module
    assert r.backend_ == "native" and r.status_ == "max_iter"  # an early stop is reported
    (sp, sn, lam, kw), = calls
    assert "warm_start" not in kw
    r._fit_path(X, y, [10.0, 1.0])  # a path runs in increasing C, warm-started
    assert [c[2] for c in calls[1:]] == [1.0, 0.1]
    assert "warm_start" not in calls[1][3] and calls[2][3]["warm_start"].status == "max_iter"
    assert sp == (y.sum(), X.shape[1]) and sn == ((1 - y).sum(), X.shape[1])
    assert lam == 0.25 and kw["scaling"] == "paper" and kw["method"] == "fista"
    assert kw["tol"] == 1e-5
    if func == "infinite_push":
        assert kw["penalty"] == LOSS[cls][1]
    np.testing.assert_array_equal(r.coef_, np.arange(X.shape[1]))
