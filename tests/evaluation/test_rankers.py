"""Rankers: optimality against the primal objective, sparsity, label handling, sklearn contract,
sample weights."""

import inspect
import warnings

import cvxpy as cp
import numpy as np
import pytest

from infpush_cvx.evaluation import metrics
from infpush_cvx.data import BipartiteData
from infpush_cvx.formulations import objectives
from infpush_cvx.solvers.result import ConvergenceWarning
from infpush_cvx.evaluation.rankers import (InfinitePushRanker, PNormPushRanker, RankSVMRanker,
                                            SparseInfinitePushRanker, SquaredHingeRankSVMRanker,
                                            SVMMAPRanker, TopPushRanker, ZeroModelWarning)
from infpush_cvx.solvers.result import CERTIFIED

RANKERS = [InfinitePushRanker, SparseInfinitePushRanker, RankSVMRanker,
           SquaredHingeRankSVMRanker]
LOSS = {InfinitePushRanker: ("infinite_push", "l2"),
        SparseInfinitePushRanker: ("infinite_push", "l1"),
        RankSVMRanker: ("ranksvm", "l2"),
        SquaredHingeRankSVMRanker: ("squared_hinge_ranksvm", "l2")}


def bipartite_objective(data, w, lam, *, loss, penalty, scaling="paper"):
    """The ranker's objective: the pair-hinge models' (formulations.objectives), or the
    squared-hinge RankSVM problem's."""
    if loss == "squared_hinge_ranksvm":
        from infpush_cvx.solvers import SquaredHingeRankSVMProblem
        return SquaredHingeRankSVMProblem(data, lam, scaling=scaling).objective(w)
    return objectives.bipartite_objective(data, w, lam, loss=loss, penalty=penalty,
                                          scaling=scaling)


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
    # strong regularisation: exactly zero weights, not solver noise, and a warning saying why
    with pytest.warns(ZeroModelWarning, match="C=0.01 is too small for the l1 penalty"):
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


def _failing_solvers(monkeypatch, failing):
    """CVXPY's solve stage raises SolverError for the solvers in ``failing``; the solvers
    called, in order."""
    from cvxpy.reductions.solvers.solving_chain import SolvingChain
    solve_via_data, tried = SolvingChain.solve_via_data, []

    def fails(self, *args, **kwargs):
        tried.append(self.solver.name())
        if self.solver.name() in failing:
            raise cp.error.SolverError("simulated numerical failure")
        return solve_via_data(self, *args, **kwargs)

    monkeypatch.setattr(SolvingChain, "solve_via_data", fails)
    return tried


def test_cvxpy_solver_failure_falls_back_to_other_solvers(monkeypatch):
    X, y = _data(seed=9)
    ref = SparseInfinitePushRanker(C=30.0, solver="cvxpy").fit(X, y).coef_
    assert np.count_nonzero(ref) >= 2
    # a numerical failure of the first solver (cvxpy's SolverError): the next one takes over
    tried = _failing_solvers(monkeypatch, {"CLARABEL"})
    r = SparseInfinitePushRanker(C=30.0, solver="cvxpy").fit(X, y)
    assert tried == ["CLARABEL", "ECOS"] and r.status_ == "optimal"
    np.testing.assert_allclose(r.coef_, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


def test_every_cvxpy_solver_failing_names_each_cause(monkeypatch):
    X, y = _data(seed=9)
    tried = _failing_solvers(monkeypatch, {"CLARABEL", "ECOS", "SCS"})
    with pytest.raises(RuntimeError, match=r"every CVXPY solver failed for C=30.0: "
                                           r"CLARABEL: simulated numerical failure; "
                                           r"ECOS: simulated numerical failure; "
                                           r"SCS: simulated numerical failure"):
        SparseInfinitePushRanker(C=30.0, solver="cvxpy").fit(X, y)
    assert tried == ["CLARABEL", "ECOS", "SCS"]


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
if parametrize_with_checks is not None and "expected_failed_checks" not in \
        inspect.signature(parametrize_with_checks).parameters:
    parametrize_with_checks = None  # scikit-learn < 1.6: no way to declare the expected failures


def _expected_failed_checks(estimator):
    """The scikit-learn checks that do not apply to a bipartite ranker, with the reason."""
    failed = {
        "check_classifiers_classes":
            "string labels need pos_label under the binary-label contract "
            "(infpush_cvx/data/labels.py) and the check fits 'one'/'two' without it; its other "
            "parts (labels {-1, 1}, string labels with pos_label) pass in "
            "tests/evaluation/test_sklearn_conventions.py",
    }
    if isinstance(estimator, SparseInfinitePushRanker) and estimator.C == 1.0:
        failed["check_classifiers_train"] = (
            "at the default C=1 the l1 penalty sets every weight to 0 on the check's two "
            "standardised features (a ZeroModelWarning says so), so predict has accuracy 0.5; "
            "SparseInfinitePushRanker(C=10) passes it")
    if isinstance(estimator, InfinitePushRanker) and estimator.kernel == "rbf":
        reason = (
            "the check shuffles the weighted rows, so the pivoted Cholesky factor of their Gram "
            "matrix and that of the repeated rows differ in round-off, repeated copies are not "
            "collapsed into one row, and the two fits solve problems equal only to round-off, "
            "each certified to the default tol=1e-6: their decision values agree to 9e-7 (1.3e-4 "
            "relative on a value of 0.01), not to the check's rtol=1e-7. Weighted and repeated "
            "rows agree at tol=1e-9, and unshuffled at the default tol, in "
            "tests/evaluation/test_sample_weight_equivalence.py")
        for check in ("check_sample_weight_equivalence_on_dense_data",
                      "check_sample_weight_equivalence_on_sparse_data"):
            failed[check] = reason
    return failed


#: Every public ranker of infpush_cvx.evaluation (RankerCV: its own list, in
#: tests/evaluation/test_sklearn_conventions.py): default instances (native backend when
#: present), the kernel rankers with kernel="rbf" (gamma="scale", resolved on the weighted rows),
#: the CVXPY backend of the l2 rankers, the l1 ranker at a C where its model is not zero (at C=1
#: the weight-equivalence checks pass trivially, w = 0; C_min is 3.2 on their data) with its
#: certified native solver, the default (CVXPY + Clarabel agrees with itself only to about 1e-5
#: in the weights, see test_integer_sample_weights_equal_repeated_rows_cvxpy, against the check's
#: rtol=1e-7), and both TopPush losses.
SKLEARN_CHECKED = ([cls() for cls in RANKERS]
                   + [cls(kernel="rbf") for cls in (InfinitePushRanker, RankSVMRanker)]
                   + [cls(solver="cvxpy") for cls in (InfinitePushRanker, RankSVMRanker)]
                   + [SparseInfinitePushRanker(C=10.0)]
                   + [SVMMAPRanker(), TopPushRanker(), TopPushRanker(loss="hinge")]
                   + [PNormPushRanker(), PNormPushRanker(p=16.0)])


def test_every_public_ranker_is_checked():
    """Each ranker class exported by infpush_cvx.evaluation.rankers has a default instance
    among the estimators scikit-learn's checks run on."""
    from infpush_cvx.evaluation import rankers
    public = {getattr(rankers, name) for name in rankers.__all__ if name.endswith("Ranker")}
    checked = {type(est) for est in SKLEARN_CHECKED if est.get_params() == type(est)().get_params()}
    assert public == checked == {InfinitePushRanker, SparseInfinitePushRanker, RankSVMRanker,
                                 SVMMAPRanker, TopPushRanker, PNormPushRanker,
                                 SquaredHingeRankSVMRanker}


if parametrize_with_checks is not None:
    # scikit-learn's estimator checks, classifier checks included (the rankers are binary
    # classifiers to scikit-learn: decision_function, predict, classes_). Every check passes
    # except those of _expected_failed_checks (marked xfail, strict). Skipped by scikit-learn
    # itself: check_array_api_input unless SCIPY_ARRAY_API is set. Not applicable: multiclass
    # checks (classifier_tags.multi_class = False declares the binary-label contract;
    # check_classifier_not_supporting_multiclass runs and passes). The rankers take sparse X
    # (tags.input_tags.sparse = True), so the sparse checks run and pass: every scipy.sparse
    # format, as matrix and as array, 64-bit indices included (check_estimator_sparse_matrix,
    # check_estimator_sparse_array, check_estimator_sparse_tag). fit takes sample_weight
    # (SVMMAPRanker's does not), so scikit-learn's sample-weight checks run and pass, including
    # check_sample_weight_equivalence_on_dense_data and ..._on_sparse_data (integer / zero
    # weights against repeated / removed rows, decision_function compared at rtol=1e-7).
    @parametrize_with_checks(SKLEARN_CHECKED, expected_failed_checks=_expected_failed_checks,
                             xfail_strict=True)
    def test_sklearn_estimator_checks(estimator, check):
        check(estimator)


def _recording_method(monkeypatch, model, method, status):
    """Replace ``method``'s solve by one that records (method, problem, warm_start) and returns
    w = arange(d) with ``status``."""
    from infpush_cvx.solvers import registry
    from infpush_cvx.solvers.result import SolverResult
    calls = []

    def fake(self, problem, warm_start, deadline):
        calls.append((self, problem, warm_start))
        return SolverResult(w=np.arange(problem.data.d, dtype=float), objective=0.0, gap=0.0,
                            status=status, iterations=1, time=0.0, method=self.name)

    monkeypatch.setattr(registry.model(model).method(method), "_solve", fake)
    return calls


@pytest.mark.parametrize("cls,model,name", [(InfinitePushRanker, "infinite_push", "fista"),
                                            (SparseInfinitePushRanker, "infinite_push", "admm"),
                                            (RankSVMRanker, "ranksvm", "fista")])
def test_native_backend_call_contract(monkeypatch, cls, model, name):
    # The ranker asks the registry's model for its method, built with the ranker's options,
    # and solves the model's problem at lam = 1/C in paper scaling, warm-started along a path.
    calls = _recording_method(monkeypatch, model, name, "max_iter")
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match="max_iter"):  # an early stop is reported
        r = cls(C=4.0, method=name, tol=1e-5, solver="native").fit(X, y)
    assert cls()._backend() == "native"  # solver="auto": every model has a native method
    assert r.backend_ == "native" and r.status_ == "max_iter"  # an early stop is reported
    (method, problem, warm), = calls
    assert warm is None
    with pytest.warns(ConvergenceWarning):
        r._fit_path(X, y, [10.0, 1.0])  # a path runs in increasing C, warm-started
    assert [c[1].lam for c in calls[1:]] == [1.0, 0.1]
    assert calls[1][2] is None and calls[2][2].status == "max_iter"
    assert problem.data.Xp.shape == (y.sum(), X.shape[1])
    assert problem.data.Xn.shape == ((1 - y).sum(), X.shape[1])
    assert problem.lam == 0.25 and problem.scaling == "paper" and problem.model == model
    assert problem.penalty == LOSS[cls][1] and not problem.data.weighted
    assert method.name == name and method.tol == 1e-5
    np.testing.assert_array_equal(r.coef_, np.arange(X.shape[1]))


# ---- sample weights ---------------------------------------------------------------------------
NATIVE_MODULE = {InfinitePushRanker: "infinite_push", SparseInfinitePushRanker: "infinite_push",
                 SquaredHingeRankSVMRanker: "squared_hinge_ranksvm",
                 RankSVMRanker: "ranksvm"}


def _native(cls):
    pytest.importorskip(f"infpush_cvx.solvers.{NATIVE_MODULE[cls]}")


def _assert_same_coef(a, b, rtol=1e-5):
    """||a - b|| <= rtol ||b|| (exact equality when b = 0)."""
    err = np.linalg.norm(a - b)
    assert err <= rtol * np.linalg.norm(b), (err, np.linalg.norm(b), a, b)


def _small(seed, N=30, d=5):
    X, y = _data(seed=seed, N=N, d=d)
    sw = np.random.default_rng(100 + seed).integers(0, 4, size=N)  # 0..3, zeros included
    return X, y, sw


@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("C", [0.3, 10.0])
def test_integer_sample_weights_equal_repeated_rows_native(cls, C):
    _native(cls)
    for seed in (11, 12):
        X, y, sw = _small(seed)
        Xr, yr = X.repeat(sw, axis=0), y.repeat(sw)
        a = cls(C=C, solver="native").fit(X, y, sample_weight=sw)
        b = cls(C=C, solver="native").fit(Xr, yr)
        assert a.status_ in CERTIFIED and b.status_ in CERTIFIED
        _assert_same_coef(a.coef_, b.coef_)
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=1e-5,
                                   atol=1e-5 * np.abs(b.decision_function(X)).max())


@pytest.mark.parametrize("cls", RANKERS)
def test_weighted_native_fit_minimises_the_repeated_rows_objective(cls):
    # The native working-set solver collapses repeated rows into weights itself, so the previous
    # test compares two runs on the same reduced problem. Independent check: the weighted fit,
    # certified to a relative gap of 1e-8, is at least as good on the objective of the repeated
    # rows (evaluated row by row, no weights) as CVXPY's solve of those repeated rows.
    _native(cls)
    loss, pen = LOSS[cls]
    for seed, C in ((11, 0.3), (12, 10.0)):
        X, y, sw = _small(seed)
        Xr, yr = X.repeat(sw, axis=0), y.repeat(sw)
        rep = BipartiteData.from_labels(Xr, yr)
        f = lambda w: bipartite_objective(rep, w, 1.0 / C, loss=loss, penalty=pen,
                                          scaling="paper")
        nw = cls(C=C, solver="native", tol=1e-8).fit(X, y, sample_weight=sw)
        cr = cls(C=C, solver="cvxpy").fit(Xr, yr)
        assert nw.status_ in CERTIFIED and cr.status_ == "optimal"
        assert f(nw.coef_) <= f(cr.coef_) + 1e-8 * abs(f(cr.coef_))


@pytest.mark.parametrize("cls", RANKERS)
def test_integer_sample_weights_equal_repeated_rows_cvxpy(cls):
    # CVXPY + Clarabel solves the weighted (compact) and the repeated-rows problems to about 1e-7
    # in relative objective; its weights then agree only to about 1e-5 relative (measured: up to
    # 2.5e-5 for RankSVM at C=0.3; the native solver, certified, agrees exactly). Compared here
    # on the objective of the repeated rows, to the tolerance of the backend-agreement test.
    loss, pen = LOSS[cls]
    for seed, C in ((11, 1.0), (12, 10.0)):
        X, y, sw = _small(seed)
        Xr, yr = X.repeat(sw, axis=0), y.repeat(sw)
        rep = BipartiteData.from_labels(Xr, yr)
        f = lambda w: bipartite_objective(rep, w, 1.0 / C, loss=loss, penalty=pen,
                                          scaling="paper")
        a = cls(C=C, solver="cvxpy").fit(X, y, sample_weight=sw)
        b = cls(C=C, solver="cvxpy").fit(Xr, yr)
        assert a.status_ == b.status_ == "optimal"
        assert abs(f(a.coef_) - f(b.coef_)) <= 1e-6 * max(1.0, abs(f(b.coef_)))


@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("solver", ["native", "cvxpy"])
def test_zero_sample_weights_equal_dropping_rows(cls, solver):
    if solver == "native":
        _native(cls)
    X, y = _data(seed=13, N=30, d=5)
    sw = np.ones(len(y))
    sw[[0, 3, 4, 10, 17, 25]] = 0.0
    keep = sw > 0
    for C in (1.0, 10.0):
        a = cls(C=C, solver=solver).fit(X, y, sample_weight=sw)
        b = cls(C=C, solver=solver).fit(X[keep], y[keep])
        assert a.status_ in CERTIFIED and b.status_ in CERTIFIED
        _assert_same_coef(a.coef_, b.coef_)
        assert a.n_features_in_ == X.shape[1]


@pytest.mark.parametrize("cls", RANKERS)
def test_weighted_fit_matches_data_with_duplicated_rows(cls):
    # a small random set drawn with replacement: genuine duplicates in random order; the weighted
    # fit on the distinct rows with their counts is the same ranker
    _native(cls)
    rng = np.random.default_rng(14)
    base, ybase = _data(seed=14, N=12, d=4)
    ybase[:2] = [0, 1]
    idx = rng.integers(0, 12, size=40)
    idx[:2] = [0, 1]  # both classes drawn
    X, y = base[idx], ybase[idx]
    uniq, counts = np.unique(idx, return_counts=True)
    for solver in ("native", "auto"):
        a = cls(C=2.0, solver=solver).fit(base[uniq], ybase[uniq], sample_weight=counts)
        b = cls(C=2.0, solver=solver).fit(X, y)
        assert a.status_ in CERTIFIED and b.status_ in CERTIFIED
        _assert_same_coef(a.coef_, b.coef_)  # auto: CVXPY for the l1 ranker, native otherwise


@pytest.mark.parametrize("cls", RANKERS)
def test_sample_weight_scale_uniform_and_negative_weights(cls):
    _native(cls)
    X, y, sw = _small(15)
    sw = sw + 1  # all positive
    base = cls(C=2.0).fit(X, y, sample_weight=sw)
    # weights are normalised by their class sums: a common factor changes nothing
    _assert_same_coef(cls(C=2.0).fit(X, y, sample_weight=2.5 * sw).coef_, base.coef_)
    # uniform weights (also a scalar) are the unweighted fit
    plain = cls(C=2.0).fit(X, y).coef_
    _assert_same_coef(cls(C=2.0).fit(X, y, sample_weight=np.full(len(y), 3.0)).coef_, plain)
    _assert_same_coef(cls(C=2.0).fit(X, y, sample_weight=4).coef_, plain)
    _assert_same_coef(cls(C=2.0).fit(X, y, sample_weight=list(np.ones(len(y)))).coef_, plain)
    # the negatives' weights: no effect on the Infinite Push (a max over negatives), but they
    # enter the (squared-hinge) RankSVM pair sum
    sw_neg = np.where(y == 1, sw, 1.0 + 7.0 * np.random.default_rng(0).random(len(y)))
    other = cls(C=2.0).fit(X, y, sample_weight=sw_neg).coef_
    ref = cls(C=2.0).fit(X, y, sample_weight=np.where(y == 1, sw, 1.0)).coef_
    if cls in (RankSVMRanker, SquaredHingeRankSVMRanker):
        assert np.linalg.norm(other - ref) > 1e-3 * np.linalg.norm(ref)
    else:
        _assert_same_coef(other, ref)
    # the caller's array is not modified
    sw_copy = sw.copy()
    cls(C=2.0).fit(X, y, sample_weight=sw)
    np.testing.assert_array_equal(sw, sw_copy)


@pytest.mark.parametrize("cls", RANKERS)
def test_bad_sample_weights(cls):
    X, y, sw = _small(16)
    n = len(y)
    bad = {
        "length": np.ones(n - 1),
        "longer": np.ones(2 * n),
        "2-D": np.ones((n, 2)),
        "NaN": np.r_[np.nan, np.ones(n - 1)],
        "inf": np.r_[np.inf, np.ones(n - 1)],
        "negative": np.r_[-1.0, np.ones(n - 1)],
        "all zero": np.zeros(n),
        "no positive": np.where(y == 1, 0.0, 1.0),
        "no negative": np.where(y == 1, 1.0, 0.0),
        "strings": np.array(["a"] * n, dtype=object),
        "complex": np.ones(n) + 1j,
    }
    for what, w in bad.items():
        for solver in ("native", "cvxpy"):
            with pytest.raises(ValueError, match="sample_weight"):
                cls(solver=solver).fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="zero"):
        cls(solver="cvxpy").fit(X, y, sample_weight=np.zeros(n))


@pytest.mark.parametrize("cls,method", [(InfinitePushRanker, "fista"),
                                        (InfinitePushRanker, "paper"),
                                        (SparseInfinitePushRanker, "admm"),
                                        (RankSVMRanker, "fista")])
def test_sample_weights_need_the_working_set_method(cls, method):
    _native(cls)
    X, y, sw = _small(17)
    with pytest.raises(ValueError, match="sample_weight.*working_set"):
        cls(solver="native", method=method).fit(X, y, sample_weight=sw)
    # unweighted fits with that method still work; weighted ones with working_set too
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a ConvergenceWarning at a loose tol is fine here
        cls(solver="native", method=method, tol=1e-3).fit(X, y)
    r = cls(solver="native", method="working_set").fit(X, y, sample_weight=sw)
    assert r.status_ in CERTIFIED


@pytest.mark.parametrize("cls,model,default", [
    (InfinitePushRanker, "infinite_push", "working_set"),
    (SparseInfinitePushRanker, "infinite_push", "working_set"),
    (RankSVMRanker, "ranksvm", "smoothing_newton"),
    (SquaredHingeRankSVMRanker, "squared_hinge_ranksvm", "newton")])
def test_native_backend_receives_split_sample_weights(monkeypatch, cls, model, default):
    # the weights reach the problem as wp, wn (split by class, zero rows dropped with their X
    # rows), solved by the model's default method
    calls = _recording_method(monkeypatch, model, default, "optimal")
    X, y, sw = _small(18)
    cls(solver="native").fit(X, y, sample_weight=sw)
    cls(solver="native").fit(X, y)
    (method, problem, _), (_, plain, _) = calls
    data = problem.data
    p, q = (y == 1) & (sw > 0), (y == 0) & (sw > 0)
    np.testing.assert_array_equal(data.Xp, X[p])
    np.testing.assert_array_equal(data.Xn, X[q])
    np.testing.assert_array_equal(data.wp, sw[p])
    np.testing.assert_array_equal(data.wn, sw[q])
    assert method.name == default and not plain.data.weighted


def test_fit_path_with_sample_weights_matches_individual_fits():
    _native(RankSVMRanker)
    X, y, sw = _small(19)
    path = RankSVMRanker(solver="native")._fit_path(X, y, [10.0, 0.3], sample_weight=sw)
    for (w, status), C in zip(path, [10.0, 0.3]):
        r = RankSVMRanker(C=C, solver="native", tol=1e-6).fit(X, y, sample_weight=sw)
        assert status in CERTIFIED and r.status_ in CERTIFIED
        # two certified solves (relative gap 1e-6) from different starting points
        lam = 1.0 / C
        data = BipartiteData.from_labels(X, y, sample_weight=sw)
        f = lambda v: bipartite_objective(data, v, lam, loss="ranksvm", penalty="l2")
        assert abs(f(w) - f(r.coef_)) <= 2e-6 * abs(f(r.coef_))


def test_max_iter_and_eta0_reach_the_papers_gradient_projection():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        short = InfinitePushRanker(C=10.0, method="paper", max_iter=3, eta0=1e-3).fit(X, y)
        other = InfinitePushRanker(C=10.0, method="paper", max_iter=3, eta0=1e-1).fit(X, y)
    assert short.n_iter_ == 3 and short.status_ == "max_iter"
    assert not np.allclose(short.coef_, other.coef_)  # the step scale reached the solver
    for bad, err in [({"max_iter": 0}, ValueError), ({"max_iter": 2.5}, TypeError),
                     ({"eta0": -1.0}, ValueError),
                     ({"eta0": 1e-3, "solver": "cvxpy"}, ValueError)]:
        with pytest.raises(err, match="max_iter|eta0"):
            InfinitePushRanker(**bad).fit(X, y)


# ---- the squared-hinge RankSVM (Lee & Lin 2014) -------------------------------------------------
def test_squared_hinge_ranksvm_ranker_solves_its_model_with_both_backends():
    from infpush_cvx.solvers import SquaredHingeRankSVMProblem, squared_hinge_ranksvm
    X, y = _data(seed=8)
    data = BipartiteData.from_labels(X, y)
    Cs = [30.0, 0.3, 3.0]
    native = SquaredHingeRankSVMRanker(solver="native")._fit_path(X, y, Cs)
    cvxpy_path = SquaredHingeRankSVMRanker(solver="cvxpy")._fit_path(X, y, Cs)
    for C, (w_native, s_native), (w_cvxpy, s_cvxpy) in zip(Cs, native, cvxpy_path):
        f = SquaredHingeRankSVMProblem(data, 1.0 / C).objective  # paper scaling, lam = 1/C
        assert s_native == "optimal" and s_cvxpy == "optimal"
        assert abs(f(w_native) - f(w_cvxpy)) <= 1e-6 * max(1.0, f(w_cvxpy))
        assert f(w_native) <= f(np.zeros(X.shape[1]))
    fitted = SquaredHingeRankSVMRanker(C=2.0, tol=1e-9).fit(X, y)
    direct = squared_hinge_ranksvm(data, 0.5, tol=1e-9)
    np.testing.assert_allclose(fitted.coef_, direct.w, rtol=1e-10, atol=1e-12)
    assert fitted.dual_gap_ <= 1e-9 and fitted.n_iter_ == direct.iterations


@pytest.mark.parametrize("solver", ["native", "cvxpy"])
def test_squared_hinge_ranksvm_ranker_weights_are_repeated_rows(solver):
    X, y, sw = _small(20)
    weighted = SquaredHingeRankSVMRanker(C=2.0, solver=solver, tol=1e-10).fit(
        X, y, sample_weight=sw)
    repeated = SquaredHingeRankSVMRanker(C=2.0, solver=solver, tol=1e-10).fit(
        X.repeat(sw, axis=0), y.repeat(sw))
    _assert_same_coef(weighted.coef_, repeated.coef_, rtol=1e-8 if solver == "native" else 1e-5)


def test_rankers_refuse_options_their_method_lacks():
    X, y = _data()
    assert "eta0" not in SquaredHingeRankSVMRanker().get_params()  # its method has no steps
    with pytest.raises(ValueError, match="eta0 is not an option of the method 'fista'"):
        RankSVMRanker(method="fista", eta0=0.1).fit(X, y)
    with pytest.raises(ValueError, match="unknown method|method"):
        SquaredHingeRankSVMRanker(method="fista").fit(X, y)
    with pytest.warns(ZeroModelWarning, match="same mean"):
        SquaredHingeRankSVMRanker().fit(np.ones((6, 2)), [0, 1, 0, 1, 0, 1])

