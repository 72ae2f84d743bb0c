"""Experiments: split protocol, CV selection, result tables, progress bars, plots (tiny sizes)."""

from pathlib import Path

import json

import numpy as np
import pytest

from sklearn.model_selection import StratifiedKFold

from infpush_cvx import _plots, cli
from infpush_cvx.evaluation import metrics
from infpush_cvx.evaluation.ranker_cv import RankerCV
from infpush_cvx.evaluation.rankers import RankSVMRanker
from infpush_cvx.evaluation.experiments import agarwal as A
from infpush_cvx.evaluation.experiments import command
from infpush_cvx.evaluation.experiments import perceptron as P

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


def test_fit_plan_chooses_C_by_ranker_cv_after_the_scaler():
    rng = np.random.default_rng(0)
    y = (rng.random(60) < 0.5).astype(int)
    X = 5 * rng.normal(size=(60, 4)) + 7.5 * y[:, None]
    plan = A.method_plan("ranksvm", "exact", Cs=(1.0, 0.01))
    model, ranker, chosen = A.fit_plan(plan, X, y, n_folds=3, seed=0,
                                       ranker_kw={"solver": "cvxpy"})
    cv = model["rank"]
    assert isinstance(cv, RankerCV) and cv.scores_.shape == (3, 2)
    np.testing.assert_array_equal(cv.Cs_, [0.01, 1.0])  # the path runs from the smallest C
    mean_ap = cv.scores_.mean(axis=0)
    assert np.all((0 < mean_ap) & (mean_ap <= 1))
    assert chosen == {"C": [0.01, 1.0][int(np.argmax(mean_ap))]} and ranker.C == chosen["C"]
    # the training rows are mapped to [0, 1] before the ranker, which is the refitted one
    scaled = model["scale"].transform(X)
    assert scaled.min() == 0 and scaled.max() == 1 and ranker is cv.best_estimator_
    np.testing.assert_allclose(model.decision_function(X), scaled @ ranker.coef_, atol=1e-12)
    # the held-out average precision of each fold is the ranker's score (its own metric)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    assert all(np.mean(y[test]) > 0 for _, test in folds)


def test_paper_table_matches_formulations_section_7():
    t = A.paper_results()
    assert t.loc[("ionosphere", "infinite_push"), "pos_at_top"] == 14.7
    assert t.loc[("spambase", "ranksvm"), "dcg"] == 189.6650
    assert t.loc[("spambase", "svmmap"), "pos_at_top"] == 48.6
    assert t.loc[("ionosphere", "pnorm_push_16"), "auc"] == 0.9070
    assert t.shape == (14, 4)  # seven rankers x two data sets
    assert set(t.index.get_level_values("method")) <= set(A.method_names())


@needs_data
def test_agarwal_experiment_tiny_run(capfd):
    res, scores = A.agarwal_experiment(("ionosphere",), n_splits=1, Cs=(1.0, 100.0), n_folds=2,
                                       methods=("ranksvm", "sparse_infinite_push"), seed=0,
                                       ranker_kw={"solver": "cvxpy"}, return_scores=True,
                                       progress=False)
    assert capfd.readouterr().err == ""  # progress=False: no bar, nothing else either
    y_test, sc = scores[("ionosphere", 0)]
    assert y_test.size == 117 and set(sc) == {"ranksvm", "sparse_infinite_push"}
    assert res["auc"].iloc[0] == pytest.approx(metrics.auc(y_test, sc["ranksvm"]))
    assert len(res) == 2 and set(res["method"]) == {"ranksvm", "sparse_infinite_push"}
    assert res["n_train"].iloc[0] == 234 and res["n_test"].iloc[0] == 117
    assert res["C"].isin([1.0, 100.0]).all()
    assert ((res["auc"] > 0.6) & (res["ap"] <= 1)).all()
    assert (res["n_features_used"] <= 33).all()
    table = A.compare_with_paper(res)
    assert table.loc[("exact", "ionosphere", "ranksvm"), "paper_auc"] == 0.9271
    assert np.isnan(table.loc[("exact", "ionosphere", "sparse_infinite_push"), "paper_auc"])


@needs_data
def test_scale_all_uses_the_whole_data_range():
    from infpush_cvx.data.datasets import MinMaxScaler01, load_ionosphere
    X, y = load_ionosphere(SHARED)
    Xs = MinMaxScaler01().fit_transform(X)
    tr, te = A.splits(y, train_fraction=2 / 3, stratified=True, n_splits=1, seed=0)[0]
    kw = dict(methods=("ranksvm",), Cs=(10.0,), n_folds=2, seed=1, return_scores=True,
              ranker_kw={"solver": "cvxpy"})
    rows, yt, sc = A.run_split("ionosphere", 0, Xs, y, tr, te, scale="all", **kw)
    w = RankSVMRanker(C=10.0, solver="cvxpy").fit(Xs[tr], y[tr]).coef_
    np.testing.assert_allclose(sc["ranksvm"], Xs[te] @ w, atol=1e-6)
    assert rows[0]["scale"] == "all"
    with pytest.raises(ValueError, match="scale"):
        A.agarwal_experiment(("ionosphere",), scale="test")


def test_perceptron_experiment_table_and_plot():
    pytest.importorskip("matplotlib")
    streams = {"gen": P.generated_stream(3000, 5, positive_fraction=0.1, seed=0)}
    res = P.perceptron_experiment(streams, ks=(20,), schemes=("sequential", "uniform"),
                                  kernels=("linear", "rbf"), n_components=40, seed=0,
                                  progress=False)
    assert set(res["scheme"]) == {"sequential", "uniform"}
    n_batches = round(np.log(3000))
    assert len(res) == 2 * 2 * n_batches
    s = P.summarise(res)
    assert (s["n_points"] == 3000).all()
    fig = P.plot_perceptron_experiment(res, stream="gen")
    assert len(fig.axes) == 4
    again = P.perceptron_experiment(streams, ks=(20,), schemes=("uniform",), kernels=("linear",),
                                    seed=0, progress=False)
    sub = res[(res.scheme == "uniform") & (res.kernel == "linear")].reset_index(drop=True)
    np.testing.assert_array_equal(again["queries"], sub["queries"])


def test_roc_plot_has_full_and_zoomed_panels():
    pytest.importorskip("matplotlib")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 100)
    fig = A.plot_roc_curves(y, {"a": rng.normal(size=100) + y, "b": rng.normal(size=100)},
                            zoom_fpr=0.2)
    assert fig.axes[1].get_xlim() == (0, 0.2)


# -- progress bars ---------------------------------------------------------------------------

def _stream():
    return {"gen": P.generated_stream(2000, 4, positive_fraction=0.1, seed=0)}


def test_perceptron_progress_false_writes_nothing_to_stderr(capfd):
    P.perceptron_experiment(_stream(), ks=(10,), schemes=("sequential", "uniform"),
                            kernels=("linear",), seed=0, progress=False)
    assert capfd.readouterr().err == ""


def test_perceptron_progress_counts_runs_on_stderr(capsys):
    P.perceptron_experiment(_stream(), ks=(10, 20), schemes=("sequential", "uniform"),
                            kernels=("linear",), seed=0, progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    assert "perceptron" in err and "4/4" in err  # 2 ks x 1 kernel x 2 schemes


@pytest.fixture
def fake_split(monkeypatch):
    """agarwal_experiment on synthetic data with a split runner that fits nothing."""
    rng = np.random.default_rng(0)
    X, y = rng.random((30, 3)), np.r_[np.ones(20, int), np.zeros(10, int)]
    monkeypatch.setattr(A, "load", lambda name, data_dir=None: (X, y))

    def run_split(dataset, split, X, y, train, test, *, methods, on_fit=None, **kw):
        rows = []
        for name in methods:
            rows.append({"dataset": dataset, "split": split, "method": name})
            if on_fit is not None:
                on_fit(name)
        return rows, y[test], {name: np.zeros(test.size) for name in methods}

    monkeypatch.setattr(A, "run_split", run_split)


def test_agarwal_progress_counts_split_method_fits(fake_split, capsys):
    res = A.agarwal_experiment(("ionosphere",), n_splits=3, methods=("ranksvm", "infinite_push"),
                               n_jobs=1, progress=True)
    assert len(res) == 6
    err = capsys.readouterr().err
    assert "agarwal" in err and "6/6" in err  # 3 splits x 2 methods


class _StoredOnly:
    """A split runner that must not be called: every split comes from the store."""

    def __call__(self, *args, **kwargs):
        raise AssertionError("a stored split was fitted again")


def test_store_keeps_finished_splits_and_a_rerun_reuses_them(fake_split, tmp_path,
                                                            monkeypatch):
    kw = dict(n_splits=3, methods=("ranksvm",), progress=False, store=tmp_path,
              return_scores=True)
    first, scores = A.agarwal_experiment(("ionosphere",), **kw)
    files = sorted(tmp_path.glob("ionosphere_exact_split*.json"))
    assert len(files) == 3
    monkeypatch.setattr(A, "run_split", _StoredOnly())
    again, scores_again = A.agarwal_experiment(("ionosphere",), **kw)
    assert again.equals(first)
    np.testing.assert_array_equal(scores_again[("ionosphere", 2)][0], scores[("ionosphere", 2)][0])
    # other settings are other splits: the store is not reused for them
    with pytest.raises(AssertionError, match="fitted again"):
        A.agarwal_experiment(("ionosphere",), **{**kw, "seed": 1})


def test_store_reruns_an_unreadable_split(fake_split, tmp_path):
    kw = dict(n_splits=2, methods=("ranksvm",), progress=False, store=tmp_path)
    A.agarwal_experiment(("ionosphere",), **kw)
    broken = sorted(tmp_path.glob("*.json"))[0]
    broken.write_text("{not json")
    with pytest.warns(RuntimeWarning, match="unreadable"):
        res = A.agarwal_experiment(("ionosphere",), **kw)
    assert len(res) == 2
    assert json.loads(broken.read_text())["rows"][0]["method"] == "ranksvm"  # rewritten


@needs_data
@pytest.mark.slow  # two worker processes importing the package and scikit-learn: 10-15 s
def test_splits_run_in_joblib_worker_processes(capsys):
    kw = dict(n_splits=2, Cs=(1.0,), n_folds=2, methods=("ranksvm",),
              ranker_kw={"solver": "cvxpy"}, seed=0)
    serial = A.agarwal_experiment(("ionosphere",), n_jobs=1, progress=False, **kw)
    parallel = A.agarwal_experiment(("ionosphere",), n_jobs=2, progress=True, **kw)
    assert "2/2" in capsys.readouterr().err
    cols = ["split", "method", "C", "auc", "pos_at_top", "ap"]
    pd_testing = pytest.importorskip("pandas").testing
    pd_testing.assert_frame_equal(serial[cols], parallel[cols], rtol=1e-6)


def test_a_failed_split_is_reported_not_raised_so_the_others_finish():
    bad = ("ionosphere", 4, np.zeros((4, 2)), np.array([0, 1, 0, 1]), np.array([0, 1]),
           np.array([2, 3]), dict(methods=("ranksvm",), Cs=(1.0,), n_folds=5, seed=0))
    j, result, error = A._split_or_error(7, bad)
    assert (j, result) == (7, None) and error.startswith("ValueError: ")


def test_method_plans_of_the_two_protocols():
    plan = A.method_plan("infinite_push", "paper")
    assert plan.params == {"method": "paper", "max_iter": 1000}
    assert plan.grid == {"C": A.PAPER_CS, "eta0": A.PAPER_ETA0S}
    assert A.method_plan("infinite_push", "exact").grid == {"C": A.PAPER_CS}
    boosting = A.method_plan("pnorm_push_16", "paper")
    assert boosting.params["p"] == 16 and boosting.params["max_iter"] == 100 and not boosting.grid
    assert A.method_plan("pnorm_push_4", "exact").params == {"p": 4}
    for bad, match in [(("svm", "exact"), "unknown method"),
                       (("pnorm_push_x", "exact"), "unknown method"),
                       (("ranksvm", "fast"), "unknown protocol")]:
        with pytest.raises(ValueError, match=match):
            A.method_plan(*bad)


def test_fit_plan_searches_a_grid_over_more_than_C_with_grid_search_cv():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    plan = A.MethodPlan("RankSVMRanker", {"method": "paper", "max_iter": 50},
                        {"C": (1.0, 10.0), "eta0": (1e-3, 1e-1)})
    model, ranker, chosen = A.fit_plan(plan, X, y, n_folds=2, seed=0, scale="all")
    mean_ap = model.cv_results_["mean_test_score"]
    assert mean_ap.shape == (4,) and np.all((0 < mean_ap) & (mean_ap <= 1))
    best = int(np.argmax(mean_ap))  # the first best point, in grid order
    assert chosen == dict(zip(("C", "eta0"), [(1.0, 1e-3), (1.0, 1e-1), (10.0, 1e-3),
                                              (10.0, 1e-1)][best]))
    assert (ranker.C, ranker.eta0, ranker.max_iter) == (chosen["C"], chosen["eta0"], 50)
    assert model.best_estimator_["scale"] == "passthrough"  # scale="all": X as given
    np.testing.assert_allclose(model.decision_function(X), X @ ranker.coef_, atol=1e-12)


def test_agarwal_progress_false_writes_nothing_to_stderr(fake_split, capfd):
    A.agarwal_experiment(("ionosphere",), n_splits=2, methods=("ranksvm",), progress=False)
    assert capfd.readouterr().err == ""


def test_sample_run_scores_progress(fake_split, capsys):
    A.sample_run_scores("ionosphere", methods=("ranksvm", "infinite_push"), progress=True)
    assert "2/2" in capsys.readouterr().err
    A.sample_run_scores("ionosphere", methods=("ranksvm",), progress=False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("argv", [["perceptron"], ["perceptron", "--no-progress"],
                                  ["--no-progress", "perceptron"],
                                  ["agarwal", "--no-progress"], ["agarwal"]])
def test_cli_no_progress_turns_the_bar_off(monkeypatch, tmp_path, capsys, argv):
    import pandas as pd
    monkeypatch.chdir(tmp_path)  # the table goes to the default --out, results/experiments/
    monkeypatch.setattr(_plots, "matplotlib_available", lambda: False)  # no figure of the fakes
    seen = {}

    def fake_experiment(*args, progress, **kw):
        seen["progress"] = progress
        return pd.DataFrame({"a": [1]})

    monkeypatch.setattr(P, "spambase_stream", lambda *a, **k: None)
    monkeypatch.setattr(P, "generated_stream", lambda *a, **k: None)
    monkeypatch.setattr(P, "perceptron_experiment", fake_experiment)
    monkeypatch.setattr(P, "summarise", lambda res: res)
    monkeypatch.setattr(A, "agarwal_experiment", fake_experiment)
    monkeypatch.setattr(A, "compare_with_paper", lambda res: res)
    monkeypatch.setattr(command, "format_agarwal", lambda table: table.to_string())
    assert cli.main(["experiments", *argv]) == 0
    assert seen["progress"] is ("--no-progress" not in argv)


def test_cli_help_lists_no_progress(capsys):
    for which in ("agarwal", "perceptron"):
        with pytest.raises(SystemExit):
            cli.main(["experiments", which, "--help"])
        assert "--no-progress" in capsys.readouterr().out


# -- figures ---------------------------------------------------------------------------------

def _line_styles(ax):
    """(colour, line style) of every data line of ``ax``; reference lines (gid "reference":
    the ROC diagonal, the stream size) left out."""
    from matplotlib.colors import to_hex
    return [(to_hex(line.get_color()), line.get_linestyle()) for line in ax.get_lines()
            if line.get_gid() != "reference"]


def _assert_readable_legends(fig):
    legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert legends
    for legend in legends:
        assert all(t.get_fontsize() >= 8 for t in legend.get_texts())


def test_roc_plot_styles_labels_and_legend():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    scores = {m: rng.normal(size=200) + y for m in ("ranksvm", "infinite_push",
                                                   "sparse_infinite_push", "other")}
    fig = A.plot_roc_curves(y, scores, zoom_fpr=0.1, title="t")
    assert isinstance(fig, Figure)
    full, zoom = fig.axes
    for ax in (full, zoom):
        styles = _line_styles(ax)
        assert len(styles) == 4 and len(set(styles)) == 4          # colour and line style
        assert len({c for c, _ in styles}) == 4 and len({ls for _, ls in styles}) == 4
        assert "false positive rate" in ax.get_xlabel()
        assert "true positive rate" in ax.get_ylabel()
    assert _line_styles(full) == _line_styles(zoom)                # same method, same style
    assert zoom.get_xlim() == (0, 0.1)
    _assert_readable_legends(fig)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(lab.startswith("RankSVM: AUC") for lab in labels)
    assert any(lab.startswith("other: AUC") for lab in labels)
    with pytest.raises(ValueError, match="zoom_fpr"):
        A.plot_roc_curves(y, scores, zoom_fpr=0)


def test_perceptron_plot_styles_log_queries_and_labels():
    pytest.importorskip("matplotlib")
    res = P.perceptron_experiment(_stream(), ks=(10, 20), kernels=("linear",), seed=0,
                                  progress=False)
    fig = P.plot_perceptron_experiment(res, stream="gen")
    axes = np.array(fig.axes).reshape(2, 2)
    schemes = len(P.DEFAULT_SCHEMES)
    for left, right in axes:
        assert len(set(_line_styles(left))) == schemes
        assert _line_styles(left) == _line_styles(right) == _line_styles(axes[0, 0])
        assert left.get_yscale() == "linear" and right.get_yscale() == "log"
        assert "prec@" in left.get_ylabel() and "fraction" in left.get_ylabel()
        assert "queried" in right.get_ylabel() and "count" in right.get_ylabel()
    assert all("mini-batch" in ax.get_xlabel() for ax in axes[-1])
    _assert_readable_legends(fig)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == list(P.DEFAULT_SCHEMES)
    with pytest.raises(ValueError, match="no results for stream"):
        P.plot_perceptron_experiment(res, stream="missing")


def test_fit_plan_chooses_C_of_a_kernel_ranker_from_its_kernel_scores():
    """A kernel ranker's fits along the path are scored as kernel models, not as weights on the
    features (which would rank the disc no better than chance)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 3))
    y = (np.linalg.norm(X, axis=1) < 1.5).astype(int)  # not linearly rankable
    plan = A.method_plan("ranksvm", "exact", Cs=(0.1, 10.0))
    model, ranker, chosen = A.fit_plan(plan, X, y, n_folds=2, seed=0, scale="all",
                                       ranker_kw={"kernel": "rbf", "gamma": 1.0})
    mean_ap = model["rank"].scores_.mean(axis=0)
    assert chosen["C"] in (0.1, 10.0) and mean_ap.shape == (2,)
    assert mean_ap.max() > 0.8  # the RBF ranker ranks the inner disc first
    assert ranker.kernel == "rbf"
