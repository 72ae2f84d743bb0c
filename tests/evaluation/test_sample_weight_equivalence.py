"""Integer sample weights are repeated rows, to round-off, for the kernel rankers (gamma="scale"
from the weighted rows), for TopPushRanker (the exact optimum on the certified point's active
sets, infpush_cvx/evaluation/_toppush_polish.py) and for RankerCV's held-out scores (the weighted
average precision); issue 26, item 5. The reproducers use the data of scikit-learn's
check_sample_weight_equivalence_on_dense_data (15 rows, 30 features, weights 0..4), where the
decision functions differed by up to 48% (rbf) and 2.1e-4 (TopPush)."""

import dataclasses
import importlib
import warnings

import numpy as np
import pytest

from infpush_cvx.data import BipartiteData
from infpush_cvx.data.kernels import resolve_gamma
from infpush_cvx.solvers.toppush import polish as _toppush_polish
from infpush_cvx.evaluation.rankers import InfinitePushRanker, RankSVMRanker, TopPushRanker
from infpush_cvx.solvers.toppush import duality_gap, toppush
from infpush_cvx.solvers.result import CERTIFIED


def _check_data(seed=42):
    """scikit-learn's data for the weight-equivalence check: X (15 x 30) uniform, labels 0..2
    (binary here: 2 against the rest), integer weights 0..4 (zeros included)."""
    rng = np.random.RandomState(seed)
    X = rng.rand(15, 30)
    y = (rng.randint(0, 3, size=15) == 2).astype(int)
    sw = rng.randint(0, 5, size=15)
    return X, y, sw


def _max_relative(a, b):
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12 * np.abs(b).max())))


# ---- gamma="scale" from the weighted rows ------------------------------------------------------
def test_weighted_gamma_scale_is_the_gamma_of_the_repeated_rows():
    X, _, sw = _check_data()
    repeated = resolve_gamma("scale", X.repeat(sw, axis=0))
    assert resolve_gamma("scale", X, sample_weight=sw) == pytest.approx(repeated, rel=1e-13)
    # scaling the weights changes nothing; unit weights are the unweighted rule
    assert resolve_gamma("scale", X, sample_weight=0.5 * sw) == pytest.approx(repeated,
                                                                               rel=1e-13)
    assert resolve_gamma("scale", X, sample_weight=np.ones(15)) == pytest.approx(
        resolve_gamma("scale", X), rel=1e-13)
    # not the unweighted value (what the rankers used before): the reproducer's 48%
    assert abs(resolve_gamma("scale", X) / repeated - 1) > 1e-3
    # constant rows (zero variance) keep gamma = 1; "auto" and numbers ignore the weights
    assert resolve_gamma("scale", np.ones((4, 3)), sample_weight=[1, 2, 0, 1]) == 1.0
    assert resolve_gamma("auto", X, sample_weight=sw) == 1 / 30
    assert resolve_gamma(0.25, X, sample_weight=sw) == 0.25


@pytest.mark.parametrize("weights,error", [(np.ones(14), ValueError),
                                           (-np.ones(15), ValueError),
                                           (np.zeros(15), ValueError),
                                           (np.full(15, np.nan), ValueError)])
def test_bad_weights_for_gamma_are_named(weights, error):
    X, _, _ = _check_data()
    with pytest.raises(error, match="sample_weight"):
        resolve_gamma("scale", X, sample_weight=weights)


@pytest.mark.parametrize("cls", [InfinitePushRanker, RankSVMRanker])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_kernel_rankers_weighted_equal_repeated_rows(cls, kernel):
    # reproducer: 48% apart before (gamma from the unweighted X); now to round-off of the solve
    X, y, sw = _check_data()
    weighted = cls(kernel=kernel, degree=2, tol=1e-9).fit(X, y, sample_weight=sw)
    repeated = cls(kernel=kernel, degree=2, tol=1e-9).fit(X.repeat(sw, axis=0), y.repeat(sw))
    assert weighted.status_ in CERTIFIED and repeated.status_ in CERTIFIED
    assert weighted.gamma_ == pytest.approx(repeated.gamma_, rel=1e-13)
    assert weighted.gamma_ == pytest.approx(resolve_gamma("scale", X.repeat(sw, axis=0)))
    err = _max_relative(weighted.decision_function(X), repeated.decision_function(X))
    assert err <= 1e-6, err


@pytest.mark.parametrize("cls", [InfinitePushRanker, RankSVMRanker])
def test_default_rbf_rankers_weighted_equal_repeated_rows(cls):
    # the default tol, and the tolerances of scikit-learn's check (assert_allclose_dense_sparse)
    X, y, sw = _check_data()
    weighted = cls(kernel="rbf").fit(X, y, sample_weight=sw)
    repeated = cls(kernel="rbf").fit(X.repeat(sw, axis=0), y.repeat(sw))
    np.testing.assert_allclose(weighted.decision_function(X), repeated.decision_function(X),
                               rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("cls", [InfinitePushRanker, RankSVMRanker])
def test_cvxpy_kernel_rankers_resolve_gamma_on_the_weighted_rows(cls):
    # the CVXPY backend gets the same number; Clarabel then agrees with itself to about 1e-5
    X, y, sw = _check_data()
    weighted = cls(kernel="rbf", solver="cvxpy").fit(X, y, sample_weight=sw)
    repeated = cls(kernel="rbf", solver="cvxpy").fit(X.repeat(sw, axis=0), y.repeat(sw))
    assert weighted.gamma_ == pytest.approx(repeated.gamma_, rel=1e-13)
    scores = repeated.decision_function(X)
    np.testing.assert_allclose(weighted.decision_function(X), scores,
                               atol=1e-4 * np.abs(scores).max())


def test_the_solvers_get_the_resolved_gamma(monkeypatch):
    # the native kernel route is called with the weighted number, not with "scale"
    module = importlib.import_module("infpush_cvx.solvers.engines.kernel")
    seen = []
    solve = module.kernel_solve

    def recording(*args, **kwargs):
        seen.append(args[1].gamma)  # (method, problem, ...)
        return solve(*args, **kwargs)

    monkeypatch.setattr(module, "kernel_solve", recording)
    X, y, sw = _check_data()
    ranker = InfinitePushRanker(kernel="rbf").fit(X, y, sample_weight=sw)
    assert seen == [ranker.gamma_] and isinstance(seen[0], float)


# ---- TopPush ------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["truncated_quadratic", "hinge"])
def test_toppush_weighted_equal_repeated_rows_at_the_default_tol(loss):
    # reproducer: 2.1e-4 (truncated quadratic) and 2.2e-6 (hinge) apart before, both fits
    # certified to tol=1e-6; the smooth loss leaves ||w - w*|| of order sqrt(gap)
    X, y, sw = _check_data()
    weighted = TopPushRanker(loss=loss).fit(X, y, sample_weight=sw)
    repeated = TopPushRanker(loss=loss).fit(X.repeat(sw, axis=0), y.repeat(sw))
    assert weighted.status_ == repeated.status_ == "optimal"
    assert weighted.dual_gap_ <= 1e-13 and repeated.dual_gap_ <= 1e-13
    err = _max_relative(weighted.decision_function(X), repeated.decision_function(X))
    assert err <= 1e-9, err


def _solve(X, y, sw, lam, loss, **kwargs):
    data = BipartiteData.from_labels(X, y == 1, sample_weight=sw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return data, toppush(data.Xp, data.Xn, lam, loss=loss, **kwargs)


@pytest.mark.parametrize("loss", ["truncated_quadratic", "hinge"])
@pytest.mark.parametrize("lam", [1e-2, 1.0, 100.0])
def test_polish_certifies_a_smaller_gap_and_the_same_optimum(loss, lam):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 8))
    y = (rng.random(60) < 0.4).astype(int)
    X[y == 1, :3] += 1.0
    data, result = _solve(X, y, None, lam, loss)
    polished = _toppush_polish.polish(data, lam, loss, result)
    assert result.status == "optimal" and polished.info["polished"]
    # the certificate is recomputed here, independently of the module's bookkeeping
    primal, dual, gap = duality_gap(data, polished.w, *polished.dual, lam, loss)
    assert gap == pytest.approx(polished.gap, abs=1e-15) and gap <= 1e-12 < result.gap
    assert primal == pytest.approx(polished.objective, rel=1e-14)
    _, exact = _solve(X, y, None, lam, loss, tol=1e-13)
    np.testing.assert_allclose(polished.w, exact.w, atol=1e-6 * np.abs(exact.w).max())


def test_polish_keeps_the_solver_point_when_the_sets_give_nothing_better():
    X, y, _ = _check_data()
    data, result = _solve(X, y, None, 1.0, "truncated_quadratic")
    # a dual point that names no active constraint: the systems' points are not better
    wrong = dataclasses.replace(result, dual=(np.zeros(data.m), np.zeros(data.n)),
                                w=np.zeros(data.d))
    kept = _toppush_polish.polish(data, 1.0, "truncated_quadratic", wrong)
    assert kept.info["polished"] is False and kept.gap == wrong.gap
    np.testing.assert_array_equal(kept.w, wrong.w)
    # too large a system is not attempted
    big = _toppush_polish._solve_active(data, 1.0, "truncated_quadratic",
                                        data.pos_weights / data.wp_sum, np.arange(data.m),
                                        np.zeros(0, np.intp), np.arange(data.n))
    assert big is not None
    original = _toppush_polish.MAX_UNKNOWNS
    try:
        _toppush_polish.MAX_UNKNOWNS = data.d
        assert _toppush_polish.polish(data, 1.0, "truncated_quadratic", result) \
            .info["polished"] is False
    finally:
        _toppush_polish.MAX_UNKNOWNS = original


def test_only_a_certified_toppush_fit_is_polished(monkeypatch):
    # the ranker builds its method with polish=True: a certified solve is polished; one that
    # ends without its certificate is reported as it is (and warns), unpolished
    from infpush_cvx.evaluation.rankers import ConvergenceWarning
    methods = importlib.import_module("infpush_cvx.solvers.toppush.methods")
    polish, calls = methods.polish_point, []
    monkeypatch.setattr(methods, "polish_point", lambda *a: calls.append(a) or polish(*a))
    X, y, _ = _check_data()
    assert TopPushRanker().fit(X, y).status_ in CERTIFIED and len(calls) == 1
    monkeypatch.setattr(methods, "certified_status", lambda *a: "max_iter")
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        ranker = TopPushRanker().fit(X, y)
    assert ranker.status_ == "max_iter" and len(calls) == 1


# ---- held-out scores: the weighted AP, and RankerCV's choice of C -------------------------------
def test_weighted_average_precision_is_the_ap_of_the_repeated_items():
    from sklearn.metrics import average_precision_score

    from infpush_cvx.evaluation.metrics import average_precision
    rng = np.random.default_rng(5)
    y = (rng.random(40) < 0.4).astype(int)
    s = np.round(rng.normal(size=40), 1)  # ties
    w = rng.integers(0, 4, size=40)
    w[np.flatnonzero(y)[0]] = 2  # a positive of positive weight
    repeated = average_precision(y.repeat(w), s.repeat(w))
    assert average_precision(y, s, sample_weight=w) == pytest.approx(repeated, rel=1e-14)
    assert average_precision(y, s, sample_weight=w) == pytest.approx(
        average_precision_score(y, s, sample_weight=w), rel=1e-12)
    assert average_precision(y, s, sample_weight=np.ones(40)) == average_precision(y, s)
    with pytest.raises(ValueError, match="sample_weight"):
        average_precision(y, s, sample_weight=np.where(y == 1, 0.0, 1.0))
    with pytest.raises(ValueError, match="sample_weight"):
        average_precision(y, s, sample_weight=-np.ones(40))


def test_ranker_score_takes_sample_weight():
    X, y, sw = _check_data()
    ranker = RankSVMRanker().fit(X, y)
    assert ranker.score(X, y, sample_weight=sw) == pytest.approx(
        ranker.score(X.repeat(sw, axis=0), y.repeat(sw)), rel=1e-14)


def _repeated_folds(sw, folds):
    """The folds of the repeated rows: each row's copies go where the row went."""
    owner = np.repeat(np.arange(sw.size), sw)
    return [(np.flatnonzero(np.isin(owner, train)), np.flatnonzero(np.isin(owner, test)))
            for train, test in folds]


@pytest.mark.parametrize("scoring", [None, "roc_auc", "average_precision"])
def test_ranker_cv_weighted_chooses_c_as_the_repeated_rows(scoring):
    # the held-out scores are weighted too; before, they were unweighted and the scores_ of
    # the weighted fit differed from those of the repeated rows on the same folds
    from infpush_cvx.evaluation.ranker_cv import RankerCV
    rng = np.random.default_rng(7)
    X = rng.normal(size=(45, 4))
    y = (rng.random(45) < 0.45).astype(int)
    X[y == 1, 0] += 0.7
    sw = rng.integers(0, 4, size=45)
    sw[:6] = [1, 1, 2, 3, 1, 2]
    folds = [(np.setdiff1d(np.arange(45), part), part) for part in np.array_split(np.arange(45), 3)]
    Cs = [0.01, 1.0, 100.0]
    weighted = RankerCV(RankSVMRanker(), Cs=Cs, cv=folds, scoring=scoring).fit(
        X, y, sample_weight=sw)
    repeated = RankerCV(RankSVMRanker(), Cs=Cs, cv=_repeated_folds(sw, folds),
                        scoring=scoring).fit(X.repeat(sw, axis=0), y.repeat(sw))
    np.testing.assert_allclose(weighted.scores_, repeated.scores_, rtol=1e-9)
    assert weighted.C_ == repeated.C_


def test_ranker_cv_callable_scoring_gets_the_weights_when_it_takes_them():
    from infpush_cvx.evaluation.ranker_cv import RankerCV
    X, y, sw = _check_data()
    sw = sw + 1
    folds = [(np.arange(15)[::2], np.arange(15)[1::2]), (np.arange(15)[1::2], np.arange(15)[::2])]
    seen = []

    def weighted(est, X_test, y_test, sample_weight=None):
        seen.append(sample_weight)
        return 0.0

    RankerCV(RankSVMRanker(), Cs=[1.0], cv=folds, scoring=weighted).fit(X, y, sample_weight=sw)
    np.testing.assert_array_equal(seen[0], sw[1::2])
    np.testing.assert_array_equal(seen[1], sw[::2])
    plain = RankerCV(RankSVMRanker(), Cs=[1.0], cv=folds,
                     scoring=lambda est, X_test, y_test: 0.5).fit(X, y, sample_weight=sw)
    assert np.all(plain.scores_ == 0.5)
