"""Reliability of the data side: one binary-label contract, exact metrics, private containers,
honest rankers and overflow-free scaling (issue 15)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from infpush_cvx.evaluation import metrics as M
from infpush_cvx.data import BipartiteData, PairData
from infpush_cvx.data.datasets import MinMaxScaler01, load_libsvm
from infpush_cvx.evaluation.online import perceptron_at_k
from infpush_cvx.evaluation import rankers
from infpush_cvx.evaluation.rankers import (InfinitePushRanker, RankSVMRanker,
                                            SparseInfinitePushRanker)
from infpush_cvx.solvers.result import ConvergenceWarning
from infpush_cvx.solvers.result import CERTIFIED

RANKERS = [InfinitePushRanker, SparseInfinitePushRanker, RankSVMRanker]
BIG = 2 ** 60  # integers above 2**53 are not all representable in float64


def _data(seed=0, N=60, d=4):
    rng = np.random.default_rng(seed)
    y = (rng.random(N) < 0.4).astype(int)
    X = rng.normal(size=(N, d))
    X[:, :2] += 1.2 * y[:, None]
    return X, y


# ---- 1. integer scores are ranked exactly ------------------------------------------------------
@pytest.mark.parametrize("scores", [
    np.array([BIG + 1, BIG], dtype=np.int64),
    np.array([2 ** 64 - 1, 2 ** 64 - 2], dtype=np.uint64),
    [BIG + 1, BIG],  # a list of Python ints
])
def test_integer_scores_are_not_rounded_through_float64(scores):
    y = [1, 0]
    assert M.auc(y, scores) == 1.0
    assert M.average_precision(y, scores) == 1.0
    assert M.positives_at_top(y, scores) == 1
    assert M.r_inf(y, scores) == 0.0
    assert M.dcg(y, scores) == 1.0
    assert M.precision_at_k(y, scores, 1) == 1.0
    np.testing.assert_array_equal(M.ranks(scores), [1, 2])
    fpr, tpr, _ = M.roc_curve_points(y, scores)
    assert np.trapezoid(tpr, fpr) == 1.0
    assert M.ranking_report(y, scores) == {"auc": 1.0, "pos_at_top": 1, "ap": 1.0, "dcg": 1.0}


def test_extreme_integer_and_float_scores():
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    y = [0, 1, 0]
    s = np.array([lo, lo + 1, hi], dtype=np.int64)  # negating lo would overflow
    fpr, tpr, _ = M.roc_curve_points(y, s)
    assert np.trapezoid(tpr, fpr) == M.auc(y, s) == 0.5
    big = np.finfo(np.float64).max
    assert M.auc([1, 0, 0], [big, -big, 0.0]) == 1.0
    assert M.auc([1, 0], np.array([True, False])) == 1.0
    assert M.auc([1, 0], np.array([1e-45, 0.0], dtype=np.float32)) == 1.0  # subnormal float32


# ---- 2. one binary-label contract --------------------------------------------------------------
def test_contract_positive_class_is_the_greater_label_or_pos_label():
    from infpush_cvx.data.labels import binary_labels
    for y, classes in (([0, 1, 1], [0, 1]), ([-1, 1, 1], [-1, 1]), ([1, 2, 2], [1, 2]),
                       ([False, True, True], [False, True]), ([0.0, 1.0, 1.0], [0.0, 1.0])):
        labels = binary_labels(y)
        np.testing.assert_array_equal(labels.positive, [False, True, True])
        np.testing.assert_array_equal(labels.classes, classes)
    np.testing.assert_array_equal(binary_labels([1, 2, 2], pos_label=1).positive,
                                  [True, False, False])
    np.testing.assert_array_equal(binary_labels(["ham", "spam"], pos_label="spam").positive,
                                  [False, True])


@pytest.mark.parametrize("y,match", [
    ([0.0, np.nan, 1.0], "NaN"),
    ([0.0, np.inf, 1.0], "infinite"),
    ([0, 1, 2], "3 distinct"),
    ([1, 1, 1], "one class"),
    (["a", "b"], "pos_label"),
    ([0.5, 1.5], "continuous"),
    ([0, 1j], "complex"),
    (np.array([0, "a"], dtype=object), "one type"),
    (np.array([0, None], dtype=object), "missing"),
    ([[0, 1]], "1-D"),
    ([], "empty"),
])
def test_contract_refusals_name_the_argument(y, match):
    from infpush_cvx.data.labels import binary_labels
    with pytest.raises(ValueError, match=match) as exc:
        binary_labels(y, "y_true")
    assert "y_true" in str(exc.value)


def test_contract_pos_label_and_known_classes():
    from infpush_cvx.data.labels import binary_labels
    with pytest.raises(ValueError, match="pos_label"):
        binary_labels([1, 2], pos_label=3)
    with pytest.raises(TypeError, match="pos_label"):
        binary_labels([1, 2], pos_label=[1])
    # known classes (from a fit): one class alone is read consistently, strangers are refused
    np.testing.assert_array_equal(
        binary_labels([2, 2], classes=[1, 2], require_both=False).positive, [True, True])
    with pytest.raises(ValueError, match="3"):
        binary_labels([1, 3], classes=[1, 2])
    # a single class where one is enough: 1 / True positive, 0 / -1 negative, others ambiguous
    assert binary_labels([1, 1], require_both=False).positive.all()
    assert not binary_labels([-1, -1], require_both=False).positive.any()
    with pytest.raises(ValueError, match="pos_label"):
        binary_labels([2, 2], require_both=False)
    assert binary_labels([2, 2], require_both=False, pos_label=2).positive.all()


def test_from_labels_uses_the_contract():
    X, _ = _data()
    y = np.r_[np.zeros(30), np.ones(30)]
    with pytest.raises(ValueError, match="NaN"):
        BipartiteData.from_labels(X, np.r_[np.nan, y[1:]])
    with pytest.raises(ValueError, match="3 distinct"):
        BipartiteData.from_labels(X, np.r_[2.0, y[1:]])
    data = BipartiteData.from_labels(X, y + 1)  # {1, 2}: 2 is positive
    np.testing.assert_array_equal(data.Xp, X[30:])
    data = BipartiteData.from_labels(X, y + 1, pos_label=1)
    np.testing.assert_array_equal(data.Xp, X[:30])
    names = np.where(y == 1, "spam", "ham")
    with pytest.raises(ValueError, match="pos_label"):
        BipartiteData.from_labels(X, names)
    np.testing.assert_array_equal(BipartiteData.from_labels(X, names, pos_label="spam").Xp, X[30:])


def test_metrics_use_the_contract():
    y, s = np.array([1, 0, 1, 0, 0]), np.array([3.0, 2.5, 2.0, 1.0, 0.0])
    for fn in (M.auc, M.average_precision, M.dcg, M.r_inf, M.positives_at_top):
        assert fn(y + 1, s) == fn(y, s)  # labels {1, 2}
        assert fn(np.where(y == 1, "p", "n"), s, pos_label="p") == fn(y, s)
        assert fn(y + 1, s, pos_label=1) == fn(1 - y, s)
        with pytest.raises(ValueError, match="y_true.*NaN"):
            fn(np.r_[np.nan, y[1:]], s)
        with pytest.raises(ValueError, match="pos_label"):
            fn(np.where(y == 1, "p", "n"), s)
    assert M.precision_at_k(y + 1, s, 2) == M.precision_at_k(y, s, 2)


def test_perceptron_and_libsvm_use_the_contract(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 1).astype(int)
    a = perceptron_at_k(X, y, 3, seed=0)
    b = perceptron_at_k(X, y + 1, 3, seed=0)
    np.testing.assert_array_equal(a.w, b.w)
    with pytest.raises(ValueError, match="y"):
        perceptron_at_k(X, np.arange(200) % 3, 3, seed=0)
    path = tmp_path / "two.svm"
    path.write_text("1 1:1\n2 1:2\n1 2:1\n")
    np.testing.assert_array_equal(load_libsvm(path)[1], [0, 1, 0])


@pytest.mark.parametrize("cls", RANKERS)
def test_rankers_keep_the_real_classes_and_score_with_them(cls):
    X, y = _data(seed=1)
    base = cls(solver="cvxpy").fit(X, y)
    np.testing.assert_array_equal(base.classes_, [0, 1])
    for yy, classes in ((y + 1, [1, 2]), (2 * y - 1, [-1, 1]), (y.astype(bool), [False, True])):
        r = cls(solver="cvxpy").fit(X, yy)
        np.testing.assert_array_equal(r.classes_, classes)
        np.testing.assert_allclose(r.coef_, base.coef_, atol=1e-6)
        assert r.score(X, yy) == pytest.approx(base.score(X, y), abs=1e-12)
    names = np.where(y == 1, "spam", "ham")
    with pytest.raises(ValueError, match="pos_label"):
        cls(solver="cvxpy").fit(X, names)
    r = cls(solver="cvxpy", pos_label="spam").fit(X, names)
    np.testing.assert_array_equal(r.classes_, ["ham", "spam"])
    assert r.score(X, names) == pytest.approx(base.score(X, y), abs=1e-12)
    with pytest.raises(ValueError, match="y"):
        r.score(X, np.where(y == 1, "spam", "eggs"))  # a label not seen in fit
    with pytest.raises(ValueError, match="NaN"):
        cls(solver="cvxpy").fit(X, np.r_[np.nan, y[1:]].astype(float))


def test_stratified_grid_search_on_labels_1_2():
    pytest.importorskip("sklearn")
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    X, y = _data(seed=2, N=90)
    grid = {"C": [0.1, 1.0, 10.0]}

    def search(labels):
        gs = GridSearchCV(RankSVMRanker(solver="cvxpy"), grid, cv=StratifiedKFold(3))
        return gs.fit(X, labels)

    a, b = search(y + 1), search(y)
    assert np.all(np.isfinite(a.cv_results_["mean_test_score"]))
    np.testing.assert_allclose(a.cv_results_["mean_test_score"],
                               b.cv_results_["mean_test_score"], atol=1e-9)
    assert a.best_params_ == b.best_params_


# ---- 3. complex input is refused ---------------------------------------------------------------
def test_complex_input_is_refused_not_truncated():
    A, B = np.ones((3, 2)), np.zeros((4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way
        with pytest.raises(TypeError, match="Xp"):
            BipartiteData(A + 1j, B)
        with pytest.raises(TypeError, match="Xn"):
            BipartiteData(A, sp.csr_matrix(B + 1j))
        with pytest.raises(TypeError, match="wp"):
            BipartiteData(A, B, wp=np.ones(3) + 0j)
        with pytest.raises(TypeError, match="X"):
            PairData(np.ones((3, 2)) + 1j, [0], [1])
        with pytest.raises(TypeError, match="margin"):
            PairData(np.ones((3, 2)), [0], [1], margin=[1 + 1j])
        with pytest.raises(TypeError, match="y_score"):
            M.auc([1, 0], [1 + 1j, 0])


# ---- 4. the containers own their arrays --------------------------------------------------------
def test_bipartite_data_is_not_changed_through_the_callers_arrays():
    Xp, Xn = np.ones((3, 2)), np.zeros((4, 2))
    wp = np.ones(3)
    data = BipartiteData(Xp, Xn, wp=wp)
    fp = data.fingerprint()
    Xp[0, 0] = np.nan
    Xn[0, 0] = 5.0
    wp[0] = -1.0
    assert data.fingerprint() == fp and np.isfinite(data.Xp).all()
    with pytest.raises(ValueError, match="read-only"):
        data.Xp[0, 0] = np.nan
    S = sp.csr_matrix(np.eye(3))
    data = BipartiteData(S, S)
    fp = data.fingerprint()
    S.data[:] = np.nan
    S.indices[0] = 99
    assert data.fingerprint() == fp
    X = np.arange(12.0).reshape(4, 3)
    y = np.array([1, 0, 1, 0])
    data = BipartiteData.from_labels(X, y)
    X[:] = np.nan
    assert np.isfinite(data.Xp).all()


def test_pair_data_is_not_changed_through_the_callers_arrays():
    X = np.arange(12.0).reshape(4, 3)
    i, j = np.array([0, 1]), np.array([2, 3])
    margin, weight = np.ones(2), np.ones(2)
    data = PairData(X, i, j, margin=margin, weight=weight)
    fp = data.fingerprint()
    X[0, 0] = np.nan
    i[0] = 99
    j[0] = 0
    margin[0] = -1.0
    weight[0] = np.nan
    assert data.fingerprint() == fp
    for name in ("X", "i", "j", "margin", "weight"):
        assert not getattr(data, name).flags.writeable, name


def test_sample_weight_sums_must_not_overflow():
    big = np.finfo(np.float64).max
    with pytest.raises(ValueError, match="wp"):
        BipartiteData(np.ones((2, 2)), np.zeros((2, 2)), wp=[big, big])


# ---- 5. unreliable fits are reported -----------------------------------------------------------
def _convergence_warnings(record):
    return [w for w in record if issubclass(w.category, ConvergenceWarning)]


def test_unconverged_native_fit_warns_once_from_the_ranker():
    pytest.importorskip("infpush_cvx.solvers.infinite_push")
    X, y = _data(seed=3)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        r = InfinitePushRanker(method="paper", solver="native").fit(X, y)
    assert r.status_ == "max_iter"
    found = _convergence_warnings(record)
    assert len(found) == 1, [str(w.message) for w in found]
    assert "InfinitePushRanker" in str(found[0].message) and "max_iter" in str(found[0].message)
    assert found[0].filename == __file__  # points at the caller's fit


def test_unconverged_cvxpy_fit_warns(monkeypatch):
    import cvxpy as cp
    unpack_results = cp.Problem.unpack_results  # the backend's last stage

    def inaccurate(self, *args, **kwargs):
        unpack_results(self, *args, **kwargs)
        self._status = cp.OPTIMAL_INACCURATE

    monkeypatch.setattr(cp.Problem, "unpack_results", inaccurate)
    X, y = _data(seed=4)
    with pytest.warns(ConvergenceWarning, match="RankSVMRanker.*optimal_inaccurate"):
        RankSVMRanker(solver="cvxpy").fit(X, y)


@pytest.mark.parametrize("cls", [InfinitePushRanker, RankSVMRanker])
def test_badly_scaled_data_warn(cls):
    # a fit that ends without its certificate says so, naming the ranker (at the time of
    # writing both native solvers stop early on this data: 'failed' and 'max_iter')
    X, y = _data(seed=0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        r = cls().fit(1e9 * X, y)
    ours = [w for w in _convergence_warnings(record) if cls.__name__ in str(w.message)]
    assert len(ours) == (r.status_ not in CERTIFIED)


def test_zero_model_from_a_too_strong_l1_penalty_warns():
    pytest.importorskip("sklearn")
    from sklearn.preprocessing import StandardScaler
    X, y = _data(seed=6)
    Xs = StandardScaler().fit_transform(X)
    with pytest.warns(rankers.ZeroModelWarning, match=r"C=1.0 .*l1"):
        r = SparseInfinitePushRanker().fit(Xs, y)
    assert np.all(r.coef_ == 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rankers.ZeroModelWarning)
        assert np.any(SparseInfinitePushRanker(C=100.0).fit(Xs, y).coef_ != 0)


@pytest.mark.parametrize("cls,why", [(InfinitePushRanker, "convex hull"),
                                     (SparseInfinitePushRanker, "convex hull"),
                                     (RankSVMRanker, "same mean")])
def test_zero_model_from_degenerate_data_warns(cls, why):
    # the mean positive (the origin) is the mean of the negatives and inside their hull
    Xp = np.array([[1.0, 0.0], [-1.0, 0.0]])
    Xn = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    X, y = np.vstack([Xp, Xn]), np.r_[1, 1, 0, 0, 0, 0]
    with pytest.warns(rankers.ZeroModelWarning, match=why):
        cls(C=10.0).fit(X, y)


# ---- 6. every ranker parameter is validated at fit ---------------------------------------------
@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("params,exc,match", [
    ({"cvxpy_solver": "NOPE", "solver": "cvxpy"}, ValueError, "cvxpy_solver.*CLARABEL"),
    ({"cvxpy_solver": "NOPE"}, ValueError, "cvxpy_solver"),
    ({"cvxpy_solver": 3}, TypeError, "cvxpy_solver"),
    ({"method": "nope"}, ValueError, "method.*working_set"),
    ({"method": "nope", "solver": "cvxpy"}, ValueError, "method"),
    ({"method": 1}, TypeError, "method"),
    ({"solver": 3}, TypeError, "solver"),
    ({"solver": "gurobi"}, ValueError, "solver.*cvxpy"),
    ({"C": "1"}, TypeError, "C"),
    ({"C": 0.0}, ValueError, "C"),
    ({"tol": "small"}, TypeError, "tol"),
    ({"tol": -1.0}, ValueError, "tol"),
    ({"sparsity_tol": np.nan}, ValueError, "sparsity_tol"),
    ({"pos_label": [1]}, TypeError, "pos_label"),
    ({"pos_label": 7}, ValueError, "pos_label"),
])
def test_bad_parameters_fail_at_fit_naming_the_parameter(cls, params, exc, match):
    X, y = _data(seed=7)
    r = cls(**params)  # scikit-learn convention: __init__ stores, fit validates
    with pytest.raises(exc, match=match):
        r.fit(X, y)


def test_method_of_another_ranker_is_refused():
    pytest.importorskip("infpush_cvx.solvers.infinite_push")
    X, y = _data(seed=8)
    with pytest.raises(ValueError, match="method.*admm"):
        SparseInfinitePushRanker(method="fista").fit(X, y)  # fista: l2 only
    with pytest.raises(ValueError, match="method.*smoothing_newton"):
        RankSVMRanker(method="admm").fit(X, y)


# ---- 7. the [0, 1] scaler at the ends of the float range ---------------------------------------
def test_min_max_scaler_at_the_extremes():
    big = np.finfo(np.float64).max
    tiny = np.finfo(np.float64).smallest_subnormal
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way
        np.testing.assert_array_equal(MinMaxScaler01().fit_transform([[-1e308], [1e308]]),
                                      [[0.0], [1.0]])
        out = MinMaxScaler01().fit_transform([[-big, 3.0], [0.0, 3.0], [big, 3.0]])
        np.testing.assert_array_equal(out, [[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]])
        for column in ([tiny, 2 * tiny], [0.0, tiny], [-tiny, tiny]):  # subnormal ranges
            np.testing.assert_array_equal(MinMaxScaler01().fit_transform(np.c_[column]),
                                          [[0.0], [1.0]])
        sc = MinMaxScaler01().fit([[-big], [big]])
        np.testing.assert_array_equal(sc.transform([[big / 2], [-big / 2]]), [[0.75], [0.25]])
        sc = MinMaxScaler01().fit([[0.0], [1.0]])
        np.testing.assert_array_equal(sc.transform([[0.25], [2.0]]), [[0.25], [2.0]])
    # the value itself beyond the float range: inf, as any float arithmetic would give
    with np.errstate(over="ignore"):
        assert MinMaxScaler01().fit([[0.0], [1e-300]]).transform([[1e10]])[0, 0] == np.inf


def test_lambda_conversions_refuse_overflow_and_underflow():
    from infpush_cvx.formulations import scaling
    with pytest.raises(ValueError, match="lam"):
        scaling.to_paper_lambda(1e-320, "seed", loss="ranksvm", penalty="l2", m=1e4, n=1e4)
    with pytest.raises(ValueError, match="lam"):
        scaling.from_paper_lambda(1e300, "seed", loss="ranksvm", penalty="l2", m=1e5, n=1e5)
    assert scaling.to_paper_lambda(0.0, "seed", loss="ranksvm", penalty="l2", m=3, n=4) == 0.0
    assert scaling.from_paper_lambda(2.0, "seed", loss="infinite_push", penalty="l1", m=3,
                                     n=4) == 6.0


def test_arrays_a_container_holds_are_shared_not_copied_again():
    # a solver re-wrapping the data, or a row block of it, does not copy the data again
    data = BipartiteData(np.arange(6.0).reshape(3, 2), np.zeros((4, 2)))
    again = BipartiteData(data.Xp, data.Xn)
    assert again.Xp is data.Xp and again.Xn is data.Xn
    assert np.shares_memory(BipartiteData(data.Xp[:2], data.Xn).Xp, data.Xp)
    S = BipartiteData(sp.csr_matrix(np.eye(3)), sp.csr_matrix(np.eye(3)))
    assert np.shares_memory(BipartiteData(S.Xp, S.Xn).Xp.data, S.Xp.data)
    # while a caller's own array is copied once, and a converted one not at all
    mine = np.ones((3, 2))
    assert not np.shares_memory(BipartiteData(mine, mine).Xp, mine)
