"""Experiments: split protocol, CV selection, result tables, plots (tiny sizes)."""

from pathlib import Path

import numpy as np
import pytest

from infpush_cvx import metrics
from infpush_cvx.experiments import agarwal as A
from infpush_cvx.experiments import perceptron as P

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "uci"
needs_data = pytest.mark.skipif(not (SHARED / "ionosphere.data").is_file(),
                                reason="shared UCI data folder not present")


def test_stratified_splits_keep_proportions_and_are_seeded():
    y = np.r_[np.ones(225, int), np.zeros(126, int)]
    sp = A.splits(y, train_fraction=2 / 3, stratified=True, n_splits=3, seed=0)
    for tr, te in sp:
        assert np.intersect1d(tr, te).size == 0 and tr.size + te.size == y.size
        assert y[tr].sum() == 150 and (1 - y[tr]).sum() == 84
    again = A.splits(y, train_fraction=2 / 3, stratified=True, n_splits=3, seed=0)
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(sp, again))
    assert not np.array_equal(sp[0][0], sp[1][0])
    tr, te = A.splits(y, train_fraction=0.05, stratified=False, n_splits=1, seed=1)[0]
    assert tr.size == round(0.05 * y.size)
    with pytest.raises(ValueError, match="train_fraction"):
        A.splits(y, train_fraction=1.5, stratified=True, n_splits=1, seed=0)


def test_select_C_picks_the_best_cv_average_precision():
    rng = np.random.default_rng(0)
    y = (rng.random(60) < 0.5).astype(int)
    X = rng.normal(size=(60, 4)) + 1.5 * y[:, None]
    C, mean_ap = A.select_C(A.RankSVMRanker, X, y, [0.01, 1.0], n_folds=3, seed=0,
                            solver="cvxpy")
    assert C == [0.01, 1.0][int(np.argmax(mean_ap))]
    assert np.all((0 < mean_ap) & (mean_ap <= 1))


def test_paper_table_matches_formulations_section_7():
    t = A.paper_results()
    assert t.loc[("ionosphere", "infinite_push"), "pos_at_top"] == 14.7
    assert t.loc[("spambase", "ranksvm"), "dcg"] == 189.6650
    assert t.shape == (4, 4)


@needs_data
def test_agarwal_experiment_tiny_run():
    res, scores = A.agarwal_experiment(("ionosphere",), n_splits=1, Cs=(1.0, 100.0), n_folds=2,
                                       methods=("ranksvm", "sparse_infinite_push"), seed=0,
                                       ranker_kw={"solver": "cvxpy"}, return_scores=True)
    y_test, sc = scores[("ionosphere", 0)]
    assert y_test.size == 117 and set(sc) == {"ranksvm", "sparse_infinite_push"}
    assert res["auc"].iloc[0] == pytest.approx(metrics.auc(y_test, sc["ranksvm"]))
    assert len(res) == 2 and set(res["method"]) == {"ranksvm", "sparse_infinite_push"}
    assert res["n_train"].iloc[0] == 234 and res["n_test"].iloc[0] == 117
    assert res["C"].isin([1.0, 100.0]).all()
    assert ((res["auc"] > 0.6) & (res["ap"] <= 1)).all()
    assert (res["n_features_used"] <= 33).all()
    table = A.compare_with_paper(res)
    assert table.loc[("ionosphere", "ranksvm"), "paper_auc"] == 0.9271
    assert np.isnan(table.loc[("ionosphere", "sparse_infinite_push"), "paper_auc"])


@needs_data
def test_scale_all_uses_the_whole_data_range():
    from infpush_cvx.datasets import MinMaxScaler01, load_ionosphere
    X, y = load_ionosphere(SHARED)
    Xs = MinMaxScaler01().fit_transform(X)
    tr, te = A.splits(y, train_fraction=2 / 3, stratified=True, n_splits=1, seed=0)[0]
    kw = dict(methods=("ranksvm",), Cs=(10.0,), n_folds=2, seed=1, return_scores=True,
              ranker_kw={"solver": "cvxpy"})
    rows, yt, sc = A.run_split("ionosphere", 0, Xs, y, tr, te, scale="all", **kw)
    w = A.RankSVMRanker(C=10.0, solver="cvxpy").fit(Xs[tr], y[tr]).coef_
    np.testing.assert_allclose(sc["ranksvm"], Xs[te] @ w, atol=1e-6)
    assert rows[0]["scale"] == "all"
    with pytest.raises(ValueError, match="scale"):
        A.agarwal_experiment(("ionosphere",), scale="test")


def test_perceptron_experiment_table_and_plot():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    streams = {"gen": P.generated_stream(3000, 5, positive_fraction=0.1, seed=0)}
    res = P.perceptron_experiment(streams, ks=(20,), schemes=("sequential", "uniform"),
                                  kernels=("linear", "rbf"), n_components=40, seed=0)
    assert set(res["scheme"]) == {"sequential", "uniform"}
    n_batches = round(np.log(3000))
    assert len(res) == 2 * 2 * n_batches
    s = P.summarise(res)
    assert (s["n_points"] == 3000).all()
    fig = P.plot_perceptron_experiment(res, stream="gen")
    assert len(fig.axes) == 4
    again = P.perceptron_experiment(streams, ks=(20,), schemes=("uniform",), kernels=("linear",),
                                    seed=0)
    sub = res[(res.scheme == "uniform") & (res.kernel == "linear")].reset_index(drop=True)
    np.testing.assert_array_equal(again["queries"], sub["queries"])


def test_roc_plot_has_full_and_zoomed_panels():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 100)
    fig = A.plot_roc_curves(y, {"a": rng.normal(size=100) + y, "b": rng.normal(size=100)},
                            zoom_fpr=0.2)
    assert fig.axes[1].get_xlim() == (0, 0.2)
