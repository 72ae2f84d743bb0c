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
Splits run in parallel processes (``n_jobs``); every split draws from its own seed. A full run
takes minutes, so :func:`agarwal_experiment` shows a tqdm progress bar on stderr (``progress``).
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from .. import metrics
from ..datasets import MinMaxScaler01, load
from ..rankers import InfinitePushRanker, RankSVMRanker, SparseInfinitePushRanker
from ._plotting import series_style

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
              return_scores=False, ranker_kw=None, scale="train", on_fit=None):
    """Fit every method on one split (with CV for C) and measure it on the test part.

    ``on_fit``, when given, is called with the method's name after each method is measured (the
    progress bars count fits through it).
    """
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
        if on_fit is not None:
            on_fit(name)
    return (rows, y[test], scores) if return_scores else rows


def _run_split_star(args, on_fit=None):
    dataset, split, X, y, train, test, kw = args
    return run_split(dataset, split, X, y, train, test, return_scores=True, on_fit=on_fit, **kw)


def _progress_bar(total: int, desc: str, progress: bool):
    """A tqdm bar on stderr (tqdm's default stream), or a silent one when ``progress`` is false."""
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit="fit", disable=not progress)


def agarwal_experiment(datasets=("ionosphere", "spambase"), *, n_splits: int = 10,
                       Cs=PAPER_CS, n_folds: int = 5,
                       methods=("ranksvm", "infinite_push", "sparse_infinite_push"),
                       seed: int = 0, n_jobs: int = 1, data_dir=None, ranker_kw=None,
                       return_scores: bool = False, scale: str = "train",
                       progress: bool = True):
    """Run the protocol; a tidy DataFrame, one row per (dataset, split, method).

    Columns: dataset, split, method, C (chosen by CV), auc, pos_at_top, ap, dcg,
    n_features_used, n_features, n_train, n_test, status, backend, time_s.
    ``n_jobs > 1`` runs splits in that many processes. With ``return_scores=True`` also returns
    ``{(dataset, split): (y_test, {method: test scores})}`` (for ROC curves). ``scale``: "train"
    (the [0, 1] map fitted on training parts only) or "all" (fitted once on the whole data set;
    see the module docstring).

    ``progress``: a tqdm bar on stderr counting the (split, method) fits, each with its
    cross-validation; with ``n_jobs > 1`` it advances a whole split at a time. ``False`` writes
    nothing to stderr.
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
    with _progress_bar(len(tasks) * len(methods), "agarwal", progress) as bar:
        if n_jobs == 1:
            results = []
            for t in tasks:
                bar.set_postfix_str(f"{t[0]} split {t[1] + 1}/{n_splits}")
                results.append(_run_split_star(t, on_fit=lambda _: bar.update()))
        else:
            with ProcessPoolExecutor(max_workers=n_jobs) as ex:
                futures = [ex.submit(_run_split_star, t) for t in tasks]
                # a callback cannot cross the process boundary: count whole splits as they end
                for done in as_completed(futures):
                    if done.exception() is None:
                        bar.update(len(methods))
                results = [f.result() for f in futures]
    table = pd.DataFrame([row for rows, _, _ in results for row in rows])
    if not return_scores:
        return table
    scores = {(t[0], t[1]): (y_test, sc) for t, (_, y_test, sc) in zip(tasks, results)}
    return table, scores


def compare_with_paper(results):
    """Mean (and std) over splits per dataset and method, beside the paper's numbers."""
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
                      data_dir=None, ranker_kw=None, progress: bool = True):
    """Test labels and scores of every method on one split (for ROC curves).

    ``progress``: a tqdm bar on stderr counting the methods fitted (``False``: silent).
    """
    X, y = load(dataset, data_dir)
    frac, strat = PROTOCOLS[dataset]
    k = 0 if dataset == "ionosphere" else 1
    tr, te = splits(y, train_fraction=frac, stratified=strat, n_splits=max(n_splits, split + 1),
                    seed=seed + 1000 * k)[split]
    with _progress_bar(len(methods), f"{dataset} split {split}", progress) as bar:
        _, y_test, scores = run_split(dataset, split, X, y, tr, te, methods=methods, Cs=Cs,
                                      n_folds=n_folds, seed=seed + 1000 * k + split + 1,
                                      return_scores=True, ranker_kw=ranker_kw,
                                      on_fit=lambda _: bar.update())
    return y_test, scores


#: names of the methods in figure legends
METHOD_LABELS = {"ranksvm": "RankSVM", "infinite_push": "Infinite Push (l2)",
                 "sparse_infinite_push": "sparse Infinite Push (l1)"}


def plot_roc_curves(y_test, scores, *, zoom_fpr: float = 0.1, title: str = ""):
    """ROC curves of every method, whole (left) and zoomed on the top of the list (right).

    ``scores`` maps a method name to its test scores. The right panel shows FPR <= ``zoom_fpr``,
    the part of the curve where the Infinite Push differs from RankSVM; its extent is outlined on
    the left panel. Each method has its own colour, line style and marker, the same on both
    panels, and one legend below the panels gives its AUC and its positives at the top (ranked
    above every negative). Returns a :class:`matplotlib.figure.Figure`, built without pyplot: no
    backend is selected or changed (in a notebook, show it with ``display(fig)``).
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    if not 0 < zoom_fpr <= 1:
        raise ValueError(f"zoom_fpr must be in (0, 1], got {zoom_fpr!r}")
    y_test = np.asarray(y_test)
    n_neg = int(np.count_nonzero(y_test == 0))
    prefix = f"{title}: " if title else ""
    fig = Figure(figsize=(11, 4.9), layout="constrained")
    full, zoom = fig.subplots(1, 2)
    top_tpr = 0.0
    for k, (name, s) in enumerate(scores.items()):
        fpr, tpr, _ = metrics.roc_curve_points(y_test, s)
        label = (f"{METHOD_LABELS.get(name, name)}: AUC {metrics.auc(y_test, s):.3f}, "
                 f"{metrics.positives_at_top(y_test, s)} positives at the top")
        style = series_style(k)
        full.plot(fpr, tpr, lw=1.6, markevery=0.1, ms=5, label=label, **style)
        # the zoomed curve stops at the first point past the zoom, so its markers stay in view
        end = int(np.searchsorted(fpr, zoom_fpr, side="right")) + 1
        zoom.plot(fpr[:end], tpr[:end], lw=1.6, markevery=0.1, ms=5, **style)
        top_tpr = max(top_tpr, float(tpr[fpr <= zoom_fpr].max()))
    full.plot([0, 1], [0, 1], color="0.6", lw=0.8, label="random order (AUC 0.5)",
              gid="reference")
    full.add_patch(Rectangle((0, 0), zoom_fpr, 1, fill=False, ec="0.3", ls=":", lw=1))
    full.set_xlim(0, 1)
    full.set_ylim(0, 1.01)
    full.set_title(f"{prefix}ROC curve\n({y_test.size} test items; dotted: the zoomed part)",
                   fontsize=10)
    zoom.set_xlim(0, zoom_fpr)
    zoom.set_ylim(0, max(0.05, min(1.01, 1.08 * top_tpr)))
    zoom.set_title(f"{prefix}top of the list, FPR <= {zoom_fpr:g}\n"
                   f"(the first {int(zoom_fpr * n_neg)} of {n_neg} test negatives)", fontsize=10)
    for ax in (full, zoom):
        ax.set_xlabel("false positive rate (fraction of negatives ranked above)")
        ax.set_ylabel("true positive rate (fraction of positives)")
        ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", ncol=2, fontsize=9)
    return fig
