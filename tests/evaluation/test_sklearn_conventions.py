"""scikit-learn conventions of the rankers and of RankerCV (issue 16, item 5): feature names,
n_iter_ / dual_gap_, the classifier type (stratified folds, decision_function in
cross_val_predict, the roc_auc scorer), predict, the warm-started C path, and the README example.
"""

import inspect
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import sklearn

from infpush_cvx.evaluation import metrics
from infpush_cvx.data import BipartiteData
from infpush_cvx.evaluation.ranker_cv import RankerCV
from infpush_cvx.evaluation.rankers import (InfinitePushRanker, RankSVMRanker,
                                            SparseInfinitePushRanker, SquaredHingeRankSVMRanker,
                                            ZeroModelWarning)
from infpush_cvx.solvers.result import SolverResult
from infpush_cvx.solvers.result import CERTIFIED

pd = pytest.importorskip("pandas")

from sklearn.base import clone, is_classifier  # noqa: E402
from sklearn.model_selection import (KFold, StratifiedKFold, check_cv,  # noqa: E402
                                     cross_val_predict, cross_val_score)

RANKERS = [InfinitePushRanker, SparseInfinitePushRanker, RankSVMRanker,
           SquaredHingeRankSVMRanker]


def _data(seed=0, N=90, d=5, informative=3, shift=1.2):
    rng = np.random.default_rng(seed)
    y = (rng.random(N) < 0.4).astype(int)
    X = rng.normal(size=(N, d))
    X[:, :informative] += shift * y[:, None]
    return X, y


def _fitting(cls, **kwargs):
    """A ranker with a C that uses features on these data (C=1 zeroes the l1 model here)."""
    return cls(C=100.0 if cls is SparseInfinitePushRanker else 10.0, **kwargs)


def _frame(X, names=None):
    names = names or [f"f{k}" for k in range(X.shape[1])]
    return pd.DataFrame(X, columns=names)


# ---- 1. feature_names_in_ and n_features_in_ ---------------------------------------------------
@pytest.mark.parametrize("cls", RANKERS)
def test_feature_names_are_recorded_and_checked(cls):
    X, y = _data()
    r = _fitting(cls).fit(_frame(X), y)
    np.testing.assert_array_equal(r.feature_names_in_, ["f0", "f1", "f2", "f3", "f4"])
    assert r.feature_names_in_.dtype == object and r.n_features_in_ == 5
    np.testing.assert_allclose(r.decision_function(_frame(X)), X @ r.coef_,
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="feature names should match.*\n.*unseen.*\n- g0"):
        r.decision_function(_frame(X, ["g0", "f1", "f2", "f3", "f4"]))
    with pytest.raises(ValueError, match="same order"):
        r.predict(_frame(X[:, ::-1], ["f4", "f3", "f2", "f1", "f0"]))
    with pytest.raises(ValueError, match="X has 4 features, but .* is expecting 5"), \
            pytest.warns(UserWarning, match="X does not have valid feature names"):
        r.decision_function(X[:, :4])
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        r.decision_function(X)
    # refitted on an array: the names are gone; a DataFrame at predict time then warns
    r.fit(X, y)
    assert not hasattr(r, "feature_names_in_") and r.n_features_in_ == 5
    with pytest.warns(UserWarning, match="X has feature names, but"):
        r.decision_function(_frame(X))


def test_non_string_column_names_record_no_names():
    X, y = _data()
    r = RankSVMRanker().fit(pd.DataFrame(X), y)  # integer column names, as scikit-learn
    assert not hasattr(r, "feature_names_in_") and r.n_features_in_ == 5


def test_without_sklearn_metrics_import_and_rankers_name_the_extra():
    # scikit-learn is the rankers' dependency (the ``sklearn`` extra): the package and its
    # metrics import without it; the rankers, RankerCV and the experiments say what to install
    code = textwrap.dedent("""
        import sys
        sys.modules["sklearn"] = None  # every "import sklearn..." raises ImportError
        import infpush_cvx, infpush_cvx.evaluation.metrics as m
        assert m.auc([0, 1], [0.0, 1.0]) == 1.0
        for name in ("rankers", "ranker_cv", "experiments.agarwal"):
            try:
                __import__(f"infpush_cvx.evaluation.{name}")
            except ImportError as exc:
                assert "pip install 'infpush_cvx[sklearn]'" in str(exc), (name, exc)
                assert exc.name == "sklearn", (name, exc.name)
            else:
                raise AssertionError(f"{name} imported without scikit-learn")
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


@pytest.mark.parametrize("cls", RANKERS)
def test_sklearn_dataframe_column_names_check(cls):
    from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroModelWarning)
        check_dataframe_column_names_consistency(cls.__name__, _fitting(cls))


# ---- 2. n_iter_ and dual_gap_ ------------------------------------------------------------------
@pytest.mark.parametrize("cls", [InfinitePushRanker, RankSVMRanker])
def test_native_fit_reports_the_solver_iterations_and_certified_gap(cls):
    X, y = _data(seed=1)
    r = cls(C=3.0, solver="native", tol=1e-7).fit(X, y)
    data = BipartiteData.from_labels(X, y)
    if cls is RankSVMRanker:
        from infpush_cvx.solvers.ranksvm import ranksvm
        res = ranksvm(data.Xp, data.Xn, 1 / 3.0, scaling="paper", tol=1e-7)
    else:
        from infpush_cvx.solvers.infinite_push import infinite_push
        res = infinite_push(data.Xp, data.Xn, 1 / 3.0, scaling="paper", tol=1e-7)
    assert r.status_ in CERTIFIED
    assert isinstance(r.n_iter_, int) and r.n_iter_ == res.iterations >= 1
    assert r.dual_gap_ == pytest.approx(res.gap) and 0 <= r.dual_gap_ <= 1e-7


@pytest.mark.parametrize("cls", RANKERS)
def test_cvxpy_fit_reports_iterations_and_no_certificate(cls):
    X, y = _data(seed=2)
    r = cls(C=10.0, solver="cvxpy").fit(X, y)
    assert isinstance(r.n_iter_, int) and r.n_iter_ >= 1  # Clarabel reports its iterations
    assert np.isnan(r.dual_gap_)


@pytest.mark.parametrize("gap,expected", [(3e-9, 3e-9), (None, np.nan)])
def test_n_iter_and_gap_come_from_the_solver_result(monkeypatch, gap, expected):
    from infpush_cvx.solvers import registry
    monkeypatch.setattr(registry.model("ranksvm").default, "_solve",
                        lambda self, problem, warm_start, deadline: SolverResult(
                            w=np.ones(problem.data.d), objective=0.0, gap=gap,
                            status="optimal", iterations=17, time=0.0))
    X, y = _data()
    r = RankSVMRanker(solver="native").fit(X, y)
    assert r.n_iter_ == 17
    np.testing.assert_equal(r.dual_gap_, expected)


# ---- 3. the classifier type: stratified folds, decision_function, roc_auc, predict -------------
@pytest.mark.parametrize("cls", RANKERS)
def test_rankers_are_binary_classifiers_to_sklearn(cls):
    X, y = _data()
    est = cls()
    assert is_classifier(est) and is_classifier(RankerCV(est))
    assert isinstance(check_cv(5, y, classifier=is_classifier(est)), StratifiedKFold)
    assert not isinstance(check_cv(5, y, classifier=False), StratifiedKFold)  # the alternative
    tags = sklearn.utils.get_tags(est)
    assert tags.estimator_type == "classifier" and not tags.classifier_tags.multi_class


@pytest.mark.parametrize("cls", RANKERS)
def test_cross_val_predict_decision_function_is_1d_and_matches_fold_fits(cls):
    X, y = _data(seed=3)
    est = _fitting(cls)
    s = cross_val_predict(est, X, y, method="decision_function", cv=4)
    assert s.shape == (len(y),) and np.all(np.isfinite(s))
    for train, test in StratifiedKFold(4).split(X, y):
        fold = clone(est).fit(X[train], y[train])
        np.testing.assert_allclose(s[test], fold.decision_function(X[test]), rtol=1e-9)


@pytest.mark.parametrize("cls", RANKERS)
def test_roc_auc_cross_validation_on_any_two_labels(cls):
    # well separated: on small folds of weaker data the Infinite Push is often degenerate
    # (w = 0 optimal, a constant ranking of AUC 0.5; see infpush_cvx/data/degeneracy.py)
    X, y = _data(seed=4, shift=2.5)
    est = _fitting(cls)
    auc = {}
    for name, labels in (("01", y), ("-1,1", 2 * y - 1), ("1,2", y + 1)):
        auc[name] = cross_val_score(est, X, labels, scoring="roc_auc")
        assert auc[name].shape == (5,) and np.all(np.isfinite(auc[name]))
        assert np.all(auc[name] > 0.6)
    np.testing.assert_allclose(auc["-1,1"], auc["01"], atol=1e-9)
    np.testing.assert_allclose(auc["1,2"], auc["01"], atol=1e-9)
    # the scorer reads decision_function on stratified folds: the project's AUC, fold by fold
    for k, (train, test) in enumerate(StratifiedKFold(5).split(X, y)):
        fold = clone(est).fit(X[train], y[train])
        assert auc["01"][k] == pytest.approx(metrics.auc(y[test],
                                                         fold.decision_function(X[test])))


def test_stratified_folds_where_plain_kfold_would_fail():
    # sorted labels: unshuffled KFold folds hold one class; the stratified default does not
    X, y = _data(seed=5)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    assert any(len(set(y[test])) == 1 for _, test in KFold(5).split(X))
    scores = cross_val_score(RankSVMRanker(C=10.0), X, y, scoring="roc_auc")
    assert np.all(np.isfinite(scores))


@pytest.mark.parametrize("cls", RANKERS)
def test_predict_is_the_positive_class_above_zero(cls):
    X, y = _data(seed=7)
    for labels, pos_label, positive, negative in ((y, None, 1, 0), (y + 1, None, 2, 1),
                                                  (2 * y - 1, None, 1, -1),
                                                  (np.where(y == 1, "spam", "ham"), "spam",
                                                   "spam", "ham"),
                                                  # pos_label naming the smaller label
                                                  (1 - y, 0, 0, 1)):
        r = _fitting(cls, pos_label=pos_label).fit(X, labels)
        s = r.decision_function(X)
        np.testing.assert_array_equal(s, X @ r.coef_)  # no intercept
        pred = r.predict(X)
        assert pred.dtype == r.classes_.dtype and pred.shape == (len(y),)
        np.testing.assert_array_equal(pred, np.where(s > 0, positive, negative))
        # the positives are ranked at the top whatever the encoding
        assert r.score(X, labels) == pytest.approx(
            metrics.average_precision(labels == positive, s))


def test_predict_threshold_is_not_fitted():
    # the threshold 0 depends on the origin of the features: shifting X changes no ranking but
    # moves every score (documented in predict's docstring)
    X, y = _data(seed=8)
    r = RankSVMRanker(C=10.0).fit(X, y)
    shifted = RankSVMRanker(C=10.0).fit(X - X.min(axis=0), y)
    np.testing.assert_allclose(shifted.coef_, r.coef_, rtol=1e-6, atol=1e-9)
    assert shifted.score(X - X.min(axis=0), y) == pytest.approx(r.score(X, y))
    assert np.mean(shifted.predict(X - X.min(axis=0)) == shifted.classes_[1]) > \
        np.mean(r.predict(X) == r.classes_[1])


@pytest.mark.parametrize("cls", RANKERS)
def test_the_parts_of_check_classifiers_classes_that_apply(cls):
    # scikit-learn's check fits 'one'/'two' without pos_label (refused by the label contract);
    # with pos_label, and on labels {-1, 1}, the rankers predict the labels they were given
    from sklearn.datasets import make_blobs
    from sklearn.preprocessing import StandardScaler
    X, y = make_blobs(n_samples=30, random_state=0, cluster_std=0.1)
    X = StandardScaler().fit_transform(X)
    X, y = X[y != 2], y[y != 2]
    for labels, pos_label in ((np.take(["one", "two"], y), "two"),
                              (np.take(["one", "two"], y).astype(object), "two"),
                              (np.take([-1, 1], y), None)):
        r = _fitting(cls, pos_label=pos_label).fit(X, labels)
        np.testing.assert_array_equal(r.classes_, np.unique(labels))
        np.testing.assert_array_equal(r.predict(X), labels)


def test_fitting_refuses_targets_with_sklearns_wording():
    X, y = _data()
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        RankSVMRanker().fit(X, y + 0.5)
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        RankSVMRanker().fit(X, np.arange(len(y)) % 3)
    with pytest.warns(sklearn.exceptions.DataConversionWarning, match="column-vector y"):
        r = RankSVMRanker(C=10.0).fit(X, y[:, None])
    np.testing.assert_allclose(r.coef_, RankSVMRanker(C=10.0).fit(X, y).coef_)


# ---- 4. RankerCV --------------------------------------------------------------------------------
def test_ranker_cv_attributes_and_refit():
    X, y = _data(seed=8, N=120)
    Cs = [10.0, 0.1, 1.0, 10.0]  # unsorted, with a duplicate
    cv = RankerCV(RankSVMRanker(), Cs=Cs, cv=4).fit(_frame(X), y)
    np.testing.assert_array_equal(cv.Cs_, [0.1, 1.0, 10.0])
    assert cv.scores_.shape == cv.n_iter_path_.shape == (4, 3)
    assert cv.C_ in cv.Cs_ and cv.best_score_ == pytest.approx(cv.scores_.mean(axis=0).max())
    assert isinstance(cv.best_estimator_, RankSVMRanker) and cv.best_estimator_.C == cv.C_
    ref = RankSVMRanker(C=cv.C_).fit(X, y)
    np.testing.assert_allclose(cv.coef_, ref.coef_, rtol=1e-5, atol=1e-8)
    assert cv.n_iter_ == cv.best_estimator_.n_iter_ and cv.dual_gap_ == cv.best_estimator_.dual_gap_
    np.testing.assert_array_equal(cv.feature_names_in_, [f"f{k}" for k in range(5)])
    assert cv.n_features_in_ == 5
    np.testing.assert_array_equal(cv.decision_function(_frame(X)),
                                  cv.best_estimator_.decision_function(_frame(X)))
    np.testing.assert_array_equal(cv.predict(_frame(X)), cv.best_estimator_.predict(_frame(X)))
    assert cv.score(_frame(X), y) == cv.best_estimator_.score(_frame(X), y)
    with pytest.raises(ValueError, match="feature names should match"):
        cv.decision_function(_frame(X, ["a", "b", "c", "d", "e"]))


@pytest.mark.parametrize("cls", RANKERS)
def test_ranker_cv_scores_are_the_fold_fits_scores(cls):
    # CVXPY solves each C from scratch (Clarabel does not use a starting point), so every entry
    # of scores_ is the held-out score of an ordinary fit with that C
    X, y = _data(seed=9)
    Cs = [0.3, 3.0, 30.0]
    cv = RankerCV(cls(solver="cvxpy"), Cs=Cs, cv=3, scoring="roc_auc").fit(X, y)
    for k, (train, test) in enumerate(StratifiedKFold(3).split(X, y)):
        for j, C in enumerate(Cs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ZeroModelWarning)
                fold = cls(C=C, solver="cvxpy").fit(X[train], y[train])
            assert cv.scores_[k, j] == pytest.approx(
                metrics.auc(y[test], fold.decision_function(X[test])), abs=1e-6)


def test_ranker_cv_default_scoring_is_average_precision_and_ties_take_the_smallest_C():
    X, y = _data(seed=10)
    cv = RankerCV(InfinitePushRanker, Cs=[1.0, 10.0], cv=3).fit(X, y)
    for k, (train, test) in enumerate(StratifiedKFold(3).split(X, y)):
        fold = InfinitePushRanker(C=10.0).fit(X[train], y[train])
        assert cv.scores_[k, 1] == pytest.approx(fold.score(X[test], y[test]), abs=1e-6)
    flat = RankerCV(RankSVMRanker(), Cs=[5.0, 0.5, 50.0], cv=3,
                    scoring=lambda est, X, y: 1.0).fit(X, y)
    assert flat.C_ == 0.5


def test_ranker_cv_grid_from_an_int_and_default_cv():
    from infpush_cvx.evaluation.ranker_cv import DEFAULT_C_RANGE
    X, y = _data(seed=11)
    cv = RankerCV(RankSVMRanker(), Cs=3).fit(X, y)
    np.testing.assert_allclose(cv.Cs_, np.geomspace(*DEFAULT_C_RANGE, 3))
    assert cv.scores_.shape == (5, 3)  # 5 stratified folds by default


def test_ranker_cv_default_folds_are_stratified():
    X, y = _data(seed=12)
    order = np.argsort(y, kind="stable")  # unshuffled KFold would give one-class folds
    cv = RankerCV(RankSVMRanker(), Cs=[1.0, 10.0], scoring="roc_auc").fit(X[order], y[order])
    assert np.all(np.isfinite(cv.scores_))


def test_ranker_cv_on_labels_1_2_and_strings():
    X, y = _data(seed=13)
    base = RankerCV(RankSVMRanker(), Cs=[0.5, 5.0], cv=3, scoring="roc_auc").fit(X, y)
    for labels, pos_label in ((y + 1, None), (np.where(y == 1, "spam", "ham"), "spam")):
        cv = RankerCV(RankSVMRanker(pos_label=pos_label), Cs=[0.5, 5.0], cv=3,
                      scoring="roc_auc").fit(X, labels)
        np.testing.assert_allclose(cv.scores_, base.scores_, atol=1e-9)
        np.testing.assert_array_equal(cv.classes_, np.unique(labels))
        assert set(cv.predict(X)) <= set(np.unique(labels))


def test_ranker_cv_refuses_sklearn_scorers_when_the_positive_class_is_the_smaller_label():
    # scikit-learn's scorers read decision_function as the score of classes_[1]; with
    # pos_label = classes_[0] they would pick C by the reversed ranking
    X, y = _data(seed=13)
    with pytest.raises(ValueError, match="scoring='roc_auc'.*pos_label=0 is classes_"):
        RankerCV(RankSVMRanker(pos_label=0), Cs=[1.0], cv=3, scoring="roc_auc").fit(X, 1 - y)
    own = RankerCV(RankSVMRanker(pos_label=0), Cs=[0.5, 5.0], cv=3).fit(X, 1 - y)
    ref = RankerCV(RankSVMRanker(), Cs=[0.5, 5.0], cv=3).fit(X, y)
    np.testing.assert_allclose(own.scores_, ref.scores_, atol=1e-9)  # the ranker's own AP


def test_ranker_cv_with_sample_weights_equals_repeated_rows_in_the_refit():
    X, y = _data(seed=14)
    sw = np.random.default_rng(1).integers(1, 3, size=len(y))
    cv = RankerCV(RankSVMRanker(), Cs=[1.0, 10.0], cv=3).fit(X, y, sample_weight=sw)
    ref = RankSVMRanker(C=cv.C_).fit(X.repeat(sw, axis=0), y.repeat(sw))
    np.testing.assert_allclose(cv.coef_, ref.coef_, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("kwargs,match,error", [
    ({"Cs": 0}, "Cs", ValueError), ({"Cs": []}, "Cs", ValueError),
    ({"Cs": [1.0, -1.0]}, "Cs", ValueError), ({"Cs": [1.0, np.nan]}, "Cs", ValueError),
    ({"Cs": "10"}, "Cs", TypeError), ({"Cs": True}, "Cs", TypeError),
    ({"Cs": [[1.0]]}, "Cs", TypeError), ({"Cs": ["a"]}, "Cs", TypeError),
    ({"ranker": "svm"}, "ranker", TypeError), ({"ranker": KFold}, "ranker", TypeError),
    ({"ranker": RankSVMRanker(solver="gurobi")}, "solver", ValueError),
])
def test_ranker_cv_bad_parameters_are_named(kwargs, match, error):
    X, y = _data()
    with pytest.raises(error, match=match):
        RankerCV(**kwargs).fit(X, y)


def test_ranker_cv_is_a_well_behaved_estimator():
    X, y = _data()
    cv = RankerCV(RankSVMRanker(), Cs=[1.0], cv=3)
    assert clone(cv).get_params()["Cs"] == [1.0]
    with pytest.raises(sklearn.exceptions.NotFittedError):
        cv.decision_function(X)
    assert cross_val_score(cv, X, y, cv=3, scoring="roc_auc").shape == (3,)


try:
    from sklearn.utils.estimator_checks import parametrize_with_checks
except ImportError:  # pragma: no cover
    parametrize_with_checks = None

if parametrize_with_checks is not None and "expected_failed_checks" in \
        inspect.signature(parametrize_with_checks).parameters:
    # scikit-learn's estimator checks on a small RankerCV (about 5 s); the default RankerCV()
    # also fails check_fit2d_1feature: its 10 rows cannot fill 5 stratified folds with both
    # classes in every training part
    @parametrize_with_checks(
        [RankerCV(RankSVMRanker(), Cs=[1.0, 10.0], cv=3)],
        expected_failed_checks=lambda est: {"check_classifiers_classes": (
            "string labels need pos_label under the binary-label contract "
            "(infpush_cvx/data/labels.py); see "
            "test_the_parts_of_check_classifiers_classes_that_apply")},
        xfail_strict=True)
    def test_ranker_cv_sklearn_estimator_checks(estimator, check):
        check(estimator)


# ---- 5. the warm-started path ------------------------------------------------------------------
def _recording_solver(monkeypatch, model):
    """Replace the model's default method by one that records (lam, warm_start) and returns
    w = 1/lam."""
    from infpush_cvx.solvers import registry
    calls = []

    def fake(self, problem, warm_start, deadline):
        calls.append((problem.lam, warm_start))
        return SolverResult(w=np.full(problem.data.d, 1.0 / problem.lam), objective=0.0, gap=0.0,
                            status="optimal", iterations=len(calls), time=0.0)

    monkeypatch.setattr(registry.model(model).default, "_solve", fake)
    return calls


@pytest.mark.parametrize("cls,model", [(InfinitePushRanker, "infinite_push"),
                                       (RankSVMRanker, "ranksvm")])
def test_ranker_cv_native_path_runs_from_small_C_warm_started(monkeypatch, cls, model):
    calls = _recording_solver(monkeypatch, model)
    X, y = _data()
    Cs = [100.0, 0.1, 10.0, 1.0]
    cv = RankerCV(cls(solver="native"), Cs=Cs, cv=3).fit(X, y)
    assert len(calls) == 3 * 4 + 1  # a path per fold, then the refit
    for k in range(3):
        fold = calls[4 * k: 4 * k + 4]
        assert [lam for lam, _ in fold] == pytest.approx([10.0, 1.0, 0.1, 0.01])
        assert fold[0][1] is None  # the first C of a fold starts cold
        for (_, warm), (prev_lam, _) in zip(fold[1:], fold[:-1]):
            # each solve starts from the previous C's result
            assert isinstance(warm, SolverResult) and warm.w[0] == pytest.approx(1 / prev_lam)
    np.testing.assert_array_equal(cv.n_iter_path_[0], [1, 2, 3, 4])


def test_ranker_cv_cvxpy_path_compiles_once_per_fold_and_warm_starts(monkeypatch):
    from cvxpy.reductions.solvers.solving_chain import SolvingChain

    from infpush_cvx import formulations
    built, solves = [], []
    factory, solve = formulations.ranksvm_problem, SolvingChain.solve_via_data

    def counting_factory(*args, **kwargs):
        built.append(args[1])
        return factory(*args, **kwargs)

    def recording_solve(self, problem, data, warm_start, *args, **kwargs):
        solves.append((problem.param_dict["lam"].value, warm_start))
        return solve(self, problem, data, warm_start, *args, **kwargs)

    monkeypatch.setattr(formulations, "ranksvm_problem", counting_factory)
    monkeypatch.setattr(SolvingChain, "solve_via_data", recording_solve)
    X, y = _data()
    RankerCV(RankSVMRanker(solver="cvxpy"), Cs=[10.0, 0.1, 1.0], cv=3).fit(X, y)
    assert len(built) == 3 + 1  # one compiled problem per fold, and the refit's
    assert all(warm is True for _, warm in solves)
    for k in range(3):  # lambda = 1/C decreasing along every fold's path
        assert [lam for lam, _ in solves[3 * k: 3 * k + 3]] == pytest.approx([10.0, 1.0, 0.1])


def test_warm_started_native_path_needs_fewer_iterations_than_cold_fits():
    X, y = _data(seed=15, N=200, d=8)
    Cs = [0.1, 1.0, 10.0, 100.0]
    cv = RankerCV(RankSVMRanker(solver="native"), Cs=Cs, cv=3).fit(X, y)
    cold = np.zeros_like(cv.n_iter_path_)
    for k, (train, _) in enumerate(StratifiedKFold(3).split(X, y)):
        cold[k] = [RankSVMRanker(C=C).fit(X[train], y[train]).n_iter_ for C in Cs]
    assert cv.n_iter_path_.sum() < cold.sum()


# ---- 6. the README example ---------------------------------------------------------------------
README_EXAMPLE = '''\
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from infpush_cvx.data import datasets
from infpush_cvx.evaluation import metrics
from infpush_cvx.evaluation.ranker_cv import RankerCV
from infpush_cvx.evaluation.rankers import InfinitePushRanker

X, y = datasets.load_spambase()  # 4601 e-mails, 57 features; y = 1 for spam
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                    random_state=0)

# features scaled to [0, 1] on the training split only, then ranked by the Infinite Push
model = make_pipeline(MinMaxScaler(), InfinitePushRanker(C=10.0)).fit(X_train, y_train)
scores = model.decision_function(X_test)
print(f"InfinitePushRanker(C=10): test AUC {metrics.auc(y_test, scores):.3f}, "
      f"spam above every legitimate e-mail {metrics.positives_at_top(y_test, scores)}")

# C chosen by 5-fold stratified cross-validation (average precision) along a warm-started path
search = make_pipeline(MinMaxScaler(), RankerCV(InfinitePushRanker(), Cs=[0.1, 1, 10, 100, 1000]))
search.fit(X_train, y_train)
ranker_cv = search[-1]
scores = search.decision_function(X_test)
print(f"RankerCV: C_={ranker_cv.C_:g} (mean held-out AP {ranker_cv.best_score_:.3f}), "
      f"test AUC {metrics.auc(y_test, scores):.3f}, "
      f"spam above every legitimate e-mail {metrics.positives_at_top(y_test, scores)}")
'''


def test_readme_example_runs_on_a_subset(monkeypatch, capsys):
    from sklearn.model_selection import train_test_split

    from infpush_cvx.data import datasets
    try:
        X, y = datasets.load_spambase()
    except (FileNotFoundError, OSError) as exc:
        pytest.skip(f"Spambase not available: {exc}")
    X_small, _, y_small, _ = train_test_split(X, y, train_size=500, stratify=y, random_state=0)
    monkeypatch.setattr(datasets, "load_spambase", lambda *a, **k: (X_small, y_small))
    exec(compile(README_EXAMPLE, "README example", "exec"), {})
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("InfinitePushRanker(C=10): test AUC 0.")
    assert second.startswith("RankerCV: C_=") and "test AUC 0." in second
    aucs = [float(line.split("test AUC ")[1].split(",")[0]) for line in (first, second)]
    assert all(a > 0.8 for a in aucs)  # spam is well ranked even from 350 training e-mails


def test_a_ranker_convergence_warning_is_also_scikit_learns():
    """``warnings.filterwarnings("ignore", category=sklearn.exceptions.ConvergenceWarning)``, as
    grid-search users write it, reaches the rankers' warning; so does the solvers' class."""
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    from infpush_cvx.data.generators import planted_bipartite
    from infpush_cvx.evaluation.rankers import ConvergenceWarning, InfinitePushRanker
    from infpush_cvx.solvers import ConvergenceWarning as SolverConvergenceWarning

    assert issubclass(ConvergenceWarning, SklearnConvergenceWarning)
    assert issubclass(ConvergenceWarning, SolverConvergenceWarning)
    data = planted_bipartite(30, 30, 5, seed=0)
    X, y = np.vstack([data.Xp, data.Xn]), np.r_[np.ones(30), np.zeros(30)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=SklearnConvergenceWarning)
        InfinitePushRanker(C=10, method="paper", solver="native").fit(X, y)
    assert not caught
