"""The experiments of [Agarwal2011] ("The Infinite Push", SDM 2011), section 6 (linear kernels).

Protocol (docs/mathematics.md, section 7.1; keys as in docs/references.md):

- Ionosphere: 2/3 of the data for training, stratified (train and test keep the class
  proportions); Spambase: 5% for training, a plain random split; 10 splits each.
- Features scaled to [0, 1] by a min-max map fitted on the training split only.
- C in {0.1, 1, 10, 100, 1000} picked by 5-fold cross-validation on the training split for the
  best mean average precision; the model is then refitted on the whole training split.
- Test measures: AUC, positives at the top, average precision, DCG (:mod:`infpush_cvx.metrics`),
  plus the number of features used.
- Methods: RankSVM, Infinite Push (l2) and sparse Infinite Push (l1, [Rakotomamonjy2012]; not in
  Agarwal's tables).

Scaling. ``scale="train"`` (default) fits the [0, 1] map on each training split (and each CV
fold) only. ``scale="all"`` fits it once on the whole data set before splitting, which leaks the
test feature ranges but is what a pre-scaled copy of the data gives; on Spambase it changes
*positives at the top* by an order of magnitude (heavy-tailed features: with train-only scaling a
few test negatives get extreme scores), so it is offered to compare with the paper, which does
not say how it scaled.

One difference from the paper (docs/mathematics.md, section 7.3 lists them all): the paper ran
1000 iterations of gradient projection with a step ``eta_0`` chosen by cross-validation; here
every model is solved to optimality (so there is no ``eta_0``), by the rankers' backend
(:mod:`infpush_cvx.rankers`).
Splits run in parallel processes (``n_jobs``); every split draws from its own seed.
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from .. import metrics
from ..datasets import MinMaxScaler01, load
from ..rankers import InfinitePushRanker, RankSVMRanker, SparseInfinitePushRanker

METHODS = {"ranksvm": RankSVMRanker, "infinite_push": InfinitePushRanker,
           "sparse_infinite_push": SparseInfinitePushRanker}
PAPER_CS = (0.1, 1.0, 10.0, 100.0, 1000.0)
#: dataset -> (training fraction, stratified?)
PROTOCOLS = {"ionosphere": (2.0 / 3.0, True), "spambase": (0.05, False)}

#: [Agarwal2011], Tables 2 and 3, linear kernels, means over 10 splits (docs/mathematics.md,
#: section 7.2).
_PAPER_ROWS = [
    ("ionosphere", "ranksvm", 0.9271, 12.1, 0.9330, 16.6200),
    ("ionosphere", "infinite_push", 0.9237, 14.7, 0.9328, 16.6336),
    ("spambase", "ranksvm", 0.9418, 22.2, 0.9010, 189.6650),
    ("spambase", "infinite_push", 0.9388, 49.9, 0.9028, 189.8070),
]


def _paper_frame():
    import pandas as pd
    return pd.DataFrame(_PAPER_ROWS, columns=["dataset", "method", "auc", "pos_at_top", "ap",
                                              "dcg"]).set_index(["dataset", "method"])


#: the paper's rows as tuples (dataset, method, auc, pos_at_top, ap, dcg); a DataFrame view is
#: :func:`paper_results`.
PAPER_RESULTS = tuple(_PAPER_ROWS)


def paper_results():
    """The paper's numbers as a DataFrame indexed by (dataset, method)."""
    return _paper_frame()


def splits(y, *, train_fraction: float, stratified: bool, n_splits: int, seed: int):
    """``n_splits`` (train_idx, test_idx) pairs. Stratified: each class split in proportion."""
    y = np.asarray(y)
    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction must be in (0, 1), got {train_fraction!r}")
    if n_splits < 1:
        raise ValueError(f"n_splits must be a positive integer, got {n_splits!r}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_splits):
        if stratified:
            train = []
            for c in np.unique(y):
                idx = rng.permutation(np.flatnonzero(y == c))
                train.append(idx[:int(round(train_fraction * idx.size))])
            train = np.sort(np.concatenate(train))
        else:
            perm = rng.permutation(y.size)
            train = np.sort(perm[:int(round(train_fraction * y.size))])
        test = np.setdiff1d(np.arange(y.size), train)
        out.append((train, test))
    return out


def _cv_folds(y, n_folds: int, rng):
    """Stratified fold labels (each fold gets its share of positives and negatives)."""
    fold = np.empty(y.size, dtype=np.int64)
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        fold[idx] = np.arange(idx.size) % n_folds
    return fold


def _identity_scaler(X):
    class _Id:
        def transform(self, Z):
            return Z
    return _Id()


def _fit_scaler(X, scale: str):
    return MinMaxScaler01().fit(X) if scale == "train" else _identity_scaler(X)


def select_C(cls, X, y, Cs, *, n_folds: int, seed: int, scale: str = "train", **ranker_kw):
    """C with the best mean validation average precision over stratified folds (ties: smallest C).

    With ``scale="train"`` each fold is scaled by a min-max map fitted on its own training part
    (``"all"``: X is used as given, already scaled). Returns (best C, mean AP per C).
    """
    rng = np.random.default_rng(seed)
    fold = _cv_folds(y, n_folds, rng)
    ap = np.zeros((n_folds, len(Cs)))
    for f in range(n_folds):
        tr, va = fold != f, fold == f
        sc = _fit_scaler(X[tr], scale)
        path = cls(**ranker_kw)._fit_path(sc.transform(X[tr]), y[tr], Cs)
        Xva = sc.transform(X[va])
        ap[f] = [metrics.average_precision(y[va], Xva @ w) for w, _ in path]
    mean = ap.mean(axis=0)
    return float(Cs[int(np.argmax(mean))]), mean


def run_split(dataset, split, X, y, train, test, *, methods, Cs, n_folds, seed,
              return_scores=False, ranker_kw=None, scale="train"):
    """Fit every method on one split (with CV for C) and measure it on the test part."""
    ranker_kw = ranker_kw or {}
    rows, scores = [], {}
    sc = _fit_scaler(X[train], scale)
    Xtr, Xte = sc.transform(X[train]), sc.transform(X[test])
    for name in methods:
        cls = METHODS[name]
        t0 = time.perf_counter()
        C, _ = select_C(cls, X[train], y[train], list(Cs), n_folds=n_folds, seed=seed,
                        scale=scale, **ranker_kw)
        model = cls(C=C, **ranker_kw).fit(Xtr, y[train])
        elapsed = time.perf_counter() - t0
        s = model.decision_function(Xte)
        rows.append({"dataset": dataset, "split": split, "method": name, "C": C,
                     **metrics.ranking_report(y[test], s),
                     "n_features_used": model.n_features_used_,
                     "n_features": X.shape[1], "n_train": int(train.size),
                     "n_test": int(test.size), "status": model.status_,
                     "backend": model.backend_, "scale": scale, "time_s": elapsed})
        scores[name] = s
    return (rows, y[test], scores) if return_scores else rows


def _run_split_star(args):
    dataset, split, X, y, train, test, kw = args
    return run_split(dataset, split, X, y, train, test, return_scores=True, **kw)


def agarwal_experiment(datasets=("ionosphere", "spambase"), *, n_splits: int = 10,
                       Cs=PAPER_CS, n_folds: int = 5,
                       methods=("ranksvm", "infinite_push", "sparse_infinite_push"),
                       seed: int = 0, n_jobs: int = 1, data_dir=None, ranker_kw=None,
                       return_scores: bool = False, scale: str = "train"):
    """Run the protocol; a tidy DataFrame, one row per (dataset, split, method).

    Columns: dataset, split, method, C (chosen by CV), auc, pos_at_top, ap, dcg,
    n_features_used, n_features, n_train, n_test, status, backend, time_s.
    ``n_jobs > 1`` runs splits in that many processes. With ``return_scores=True`` also returns
    ``{(dataset, split): (y_test, {method: test scores})}`` (for ROC curves). ``scale``: "train"
    (the [0, 1] map fitted on training parts only) or "all" (fitted once on the whole data set;
    see the module docstring).
    """
    import pandas as pd
    if scale not in ("train", "all"):
        raise ValueError(f"unknown scale {scale!r}; expected 'train' or 'all'")
    for name in methods:
        if name not in METHODS:
            raise ValueError(f"unknown method {name!r}; expected one of {sorted(METHODS)}")
    tasks = []
    for k, ds in enumerate(datasets):
        if ds not in PROTOCOLS:
            raise ValueError(f"unknown dataset {ds!r}; expected one of {sorted(PROTOCOLS)}")
        X, y = load(ds, data_dir)
        if scale == "all":
            X = MinMaxScaler01().fit_transform(X)
        frac, strat = PROTOCOLS[ds]
        for i, (tr, te) in enumerate(splits(y, train_fraction=frac, stratified=strat,
                                            n_splits=n_splits, seed=seed + 1000 * k)):
            kw = dict(methods=methods, Cs=Cs, n_folds=n_folds, seed=seed + 1000 * k + i + 1,
                      ranker_kw=ranker_kw, scale=scale)
            tasks.append((ds, i, X, y, tr, te, kw))
    if n_jobs == 1:
        results = [_run_split_star(t) for t in tasks]
    else:
        with ProcessPoolExecutor(max_workers=n_jobs) as ex:
            results = list(ex.map(_run_split_star, tasks))
    table = pd.DataFrame([row for rows, _, _ in results for row in rows])
    if not return_scores:
        return table
    scores = {(t[0], t[1]): (y_test, sc) for t, (_, y_test, sc) in zip(tasks, results)}
    return table, scores


def compare_with_paper(results):
    """Mean (and std) over splits per dataset and method, beside the paper's numbers."""
    import pandas as pd
    measures = ["auc", "pos_at_top", "ap", "dcg"]
    g = results.groupby(["dataset", "method"])
    ours = g[measures + ["n_features_used"]].mean()
    std = g[measures].std().add_suffix("_std")
    paper = _paper_frame().add_prefix("paper_")
    table = ours.join(std).join(paper, how="left")
    table["n_splits"] = g.size()
    cols = []
    for m in measures:
        cols += [m, f"{m}_std", f"paper_{m}"]
    return table[cols + ["n_features_used", "n_splits"]]


def sample_run_scores(dataset: str, *, split: int = 0, n_splits: int = 1, Cs=PAPER_CS,
                      n_folds: int = 5, methods=("ranksvm", "infinite_push"), seed: int = 0,
                      data_dir=None, ranker_kw=None):
    """Test labels and scores of every method on one split (for ROC curves)."""
    X, y = load(dataset, data_dir)
    frac, strat = PROTOCOLS[dataset]
    k = 0 if dataset == "ionosphere" else 1
    tr, te = splits(y, train_fraction=frac, stratified=strat, n_splits=max(n_splits, split + 1),
                    seed=seed + 1000 * k)[split]
    _, y_test, scores = run_split(dataset, split, X, y, tr, te, methods=methods, Cs=Cs,
                                  n_folds=n_folds, seed=seed + 1000 * k + split + 1,
                                  return_scores=True, ranker_kw=ranker_kw)
    return y_test, scores


def plot_roc_curves(y_test, scores, *, zoom_fpr: float = 0.1, title: str = ""):
    """ROC curves, full and zoomed on the top of the list (FPR <= zoom_fpr); a matplotlib Figure."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for name, s in scores.items():
        fpr, tpr, _ = metrics.roc_curve_points(y_test, s)
        label = f"{name} (AUC {metrics.auc(y_test, s):.3f})"
        for ax in axes:
            ax.plot(fpr, tpr, drawstyle="default", label=label)
    axes[0].plot([0, 1], [0, 1], color="grey", lw=0.5)
    axes[0].set_title(f"{title} ROC")
    axes[1].set_xlim(0, zoom_fpr)
    axes[1].set_title(f"{title} ROC, top of the list (FPR <= {zoom_fpr})")
    for ax in axes:
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
    axes[1].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig
