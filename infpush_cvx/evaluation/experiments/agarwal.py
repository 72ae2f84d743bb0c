"""The experiments of [Agarwal2011] ("The Infinite Push", SDM 2011), section 6 (linear kernels).

Protocol (docs/mathematics.md, section 7.1; keys as in docs/references.md):

- Ionosphere: 2/3 of the data for training, stratified (train and test keep the class
  proportions); Spambase: 5% for training, a plain random split; 10 splits each.
- Features scaled to [0, 1] by a min-max map fitted on the training split only.
- C in {0.1, 1, 10, 100, 1000} picked by 5-fold stratified cross-validation on the training
  split for the best mean average precision (:func:`fit_plan`: RankerCV, or scikit-learn's
  GridSearchCV for a grid over more than C); the model is then refitted on the whole training
  split.
- Test measures: AUC, positives at the top, average precision, DCG
  (:mod:`infpush_cvx.evaluation.metrics`), plus the number of features used.

Scaling. ``scale="train"`` (default) fits the [0, 1] map on each training split only (RankerCV's
folds share it; GridSearchCV's folds fit their own). ``scale="all"`` fits it once on the whole
data set before splitting, which leaks the test feature ranges but is what a pre-scaled copy of
the data gives; on Spambase it changes *positives at the top* by an order of magnitude
(heavy-tailed features: with train-only scaling a few test negatives get extreme scores), so it
is offered to compare with the paper, which does not say how it scaled.

Two training protocols (``protocol=``, :func:`method_plan`):

- ``"exact"`` (default): every model is solved to its certified optimum by the rankers' backend
  (:mod:`infpush_cvx.evaluation.rankers`), C chosen by cross-validation, so there is no ``eta_0``;
- ``"paper"``: as the paper trained them: the Infinite Push and RankSVM by gradient projection
  with ``t_max = 1000`` and (C, ``eta_0``) chosen by cross-validation, P-Norm Push by Rudin's
  boosting with 100 rounds, SVMMAP with C chosen by cross-validation.

The methods are the seven rows of the paper's Tables 2 and 3 (RankSVM, SVMMAP, P-Norm Push with
p = 1, 4, 16, 64, the Infinite Push), plus the sparse Infinite Push and TopPush, which the paper
did not run. Splits run in joblib's worker processes (``n_jobs``); every split draws from its
own seed, and with ``store`` every finished split is kept on disk, so a long run resumes where
it stopped. :func:`agarwal_experiment` shows a tqdm progress bar on stderr (``progress``).
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import _sklearn  # noqa: F401 - first: without scikit-learn, its ImportError
from sklearn.model_selection import (GridSearchCV, ShuffleSplit, StratifiedKFold,
                                     StratifiedShuffleSplit)
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler

from ..._plots import series_style
from ..._validation import check_choice, check_int
from ...data.datasets import load
from ...files import write_text_atomic
from .. import metrics, rankers
from ..ranker_cv import RankerCV

PAPER_CS = (0.1, 1.0, 10.0, 100.0, 1000.0)
#: The paper's grid of gradient-projection steps eta_0 ([Agarwal2011], section 6).
PAPER_ETA0S = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
#: The paper's iteration count of its gradient projections (t_max) and of P-Norm Push boosting.
PAPER_GRADIENT_STEPS = 1000
PAPER_BOOSTING_ROUNDS = 100
#: dataset -> (training fraction, stratified?)
SPLIT_RULES = {"ionosphere": (2.0 / 3.0, True), "spambase": (0.05, False)}
#: How the rankers are trained: ``"exact"`` solves each model to its certified optimum;
#: ``"paper"`` trains as [Agarwal2011] did (see :func:`method_plan`).
TRAINING_PROTOCOLS = ("exact", "paper")
#: the test measures (columns of :func:`run_split`'s rows), with their axis labels
MEASURE_LABELS = {"auc": "AUC", "pos_at_top": "positives at the top", "ap": "average precision",
                  "dcg": "DCG"}


@dataclass(frozen=True)
class MethodPlan:
    """How one method is trained under a protocol: the ranker class (a name in
    :mod:`infpush_cvx.evaluation.rankers`), its fixed parameters, and the parameters chosen by
    cross-validation (name -> candidate values, tried in order; ties keep the first)."""

    ranker: str
    params: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)

    def ranker_class(self):
        if not hasattr(rankers, self.ranker):
            raise ValueError(f"ranker {self.ranker!r} is not available in "
                             f"infpush_cvx.evaluation.rankers")
        return getattr(rankers, self.ranker)


#: P-Norm Push powers of [Agarwal2011]'s tables (p = 1 is RankBoost).
PNORM_POWERS = (1, 4, 16, 64)

_EXACT_RANKERS = {"ranksvm": "RankSVMRanker", "infinite_push": "InfinitePushRanker",
                  "sparse_infinite_push": "SparseInfinitePushRanker", "svmmap": "SVMMAPRanker",
                  "toppush": "TopPushRanker"}


def method_names() -> tuple:
    """Every method an experiment accepts (``pnorm_push_<p>`` for each p of PNORM_POWERS)."""
    return tuple(_EXACT_RANKERS) + tuple(f"pnorm_push_{p}" for p in PNORM_POWERS)


def method_plan(method: str, protocol: str, Cs=PAPER_CS, eta0s=PAPER_ETA0S) -> MethodPlan:
    """The training plan of ``method`` under ``protocol``.

    exact: every ranker at its certified optimum (P-Norm Push: the regularised convex form),
        C chosen by cross-validation.
    paper ([Agarwal2011], section 6): the Infinite Push and RankSVM by the paper's gradient
        projection (``method="paper"``) with ``t_max = 1000`` steps and both C and ``eta_0``
        chosen by cross-validation; P-Norm Push by Rudin's boosting (coordinate descent over the
        features, 100 rounds, unregularised: nothing to choose); SVMMAP with C chosen by
        cross-validation. Methods the paper did not run (the sparse Infinite Push, TopPush) are
        trained as in the exact protocol.
    """
    check_choice(protocol, "protocol", TRAINING_PROTOCOLS)
    power = method[len("pnorm_push_"):] if method.startswith("pnorm_push_") else ""
    if method not in _EXACT_RANKERS and not (power.isdigit() and int(power) >= 1):
        raise ValueError(f"unknown method {method!r}; expected one of {method_names()}")
    grid = {"C": tuple(Cs)}
    if power:
        if protocol == "paper":
            return MethodPlan("PNormPushRanker", {"p": int(power), "method": "boosting",
                                                  "max_iter": PAPER_BOOSTING_ROUNDS})
        return MethodPlan("PNormPushRanker", {"p": int(power)}, grid)
    if protocol == "paper" and method in ("ranksvm", "infinite_push"):
        return MethodPlan(_EXACT_RANKERS[method],
                          {"method": "paper", "max_iter": PAPER_GRADIENT_STEPS},
                          {**grid, "eta0": tuple(eta0s)})
    return MethodPlan(_EXACT_RANKERS[method], {}, grid)


#: [Agarwal2011], Tables 2 and 3 (all seven rows: P-Norm Push p = 1 is RankBoost), linear
#: kernels, means over 10 splits (docs/mathematics.md, section 7.2), as tuples (dataset, method,
#: auc, pos_at_top, ap, dcg); a DataFrame view is :func:`paper_results`.
PAPER_RESULTS = (
    ("ionosphere", "ranksvm", 0.9271, 12.1, 0.9330, 16.6200),
    ("ionosphere", "svmmap", 0.9207, 16.5, 0.9357, 16.7940),
    ("ionosphere", "pnorm_push_1", 0.9052, 10.7, 0.9086, 16.4462),
    ("ionosphere", "pnorm_push_4", 0.8789, 6.7, 0.8849, 16.2743),
    ("ionosphere", "pnorm_push_16", 0.9070, 13.9, 0.9218, 16.6527),
    ("ionosphere", "pnorm_push_64", 0.8917, 9.9, 0.9064, 16.4970),
    ("ionosphere", "infinite_push", 0.9237, 14.7, 0.9328, 16.6336),
    ("spambase", "ranksvm", 0.9418, 22.2, 0.9010, 189.6650),
    ("spambase", "svmmap", 0.9319, 48.6, 0.8957, 189.6074),
    ("spambase", "pnorm_push_1", 0.9194, 12.5, 0.8714, 188.2330),
    ("spambase", "pnorm_push_4", 0.8024, 5.0, 0.6905, 180.4931),
    ("spambase", "pnorm_push_16", 0.8293, 24.1, 0.7707, 185.4531),
    ("spambase", "pnorm_push_64", 0.8490, 31.4, 0.8143, 187.3132),
    ("spambase", "infinite_push", 0.9388, 49.9, 0.9028, 189.8070),
)


def paper_results():
    """The paper's numbers as a DataFrame indexed by (dataset, method)."""
    import pandas as pd
    return pd.DataFrame(PAPER_RESULTS, columns=["dataset", "method", *MEASURE_LABELS]
                        ).set_index(["dataset", "method"])


def splits(y, *, train_fraction: float, stratified: bool, n_splits: int, seed: int):
    """``n_splits`` (train_idx, test_idx) pairs, each sorted, with ``round(train_fraction * n)``
    training rows: scikit-learn's ``StratifiedShuffleSplit`` (each class split in proportion)
    or ``ShuffleSplit``, seeded by ``seed``."""
    y = np.asarray(y)
    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction must be in (0, 1), got {train_fraction!r}")
    check_int(n_splits, "n_splits", minimum=1)
    n_train = int(round(train_fraction * y.size))
    splitter = (StratifiedShuffleSplit if stratified else ShuffleSplit)(
        n_splits=n_splits, train_size=n_train, test_size=y.size - n_train, random_state=seed)
    return [(np.sort(train), np.sort(test)) for train, test in splitter.split(y, y)]


def fit_plan(plan: MethodPlan, X, y, *, n_folds: int, seed: int, scale: str = "train",
             ranker_kw=None):
    """Fit the ranker of ``plan`` on (X, y), its grid chosen by ``n_folds`` stratified folds
    (shuffled by ``seed``) for the best mean held-out average precision (the ranker's
    ``score``; ties: the first point in grid order, the smallest C).

    The model is a scikit-learn ``Pipeline``: a [0, 1] ``MinMaxScaler`` (``scale="train"``; with
    ``"all"`` X is used as given, already scaled), then the ranker. A grid over C alone goes
    through :class:`~infpush_cvx.evaluation.ranker_cv.RankerCV` (its warm-started path; the
    scaler is fitted on all of X, before the folds); any other grid through ``GridSearchCV``
    over the pipeline (scaled within each fold; every point fitted on every fold); no grid: one
    fit. Returns the fitted model (its ``decision_function`` scores new rows), the fitted
    ranker and the chosen parameters (a dict).
    """
    ranker = plan.ranker_class()(**plan.params, **(ranker_kw or {}))
    folds = StratifiedKFold(n_folds, shuffle=True, random_state=seed)

    def scaled(estimator):
        return Pipeline([("scale", MinMaxScaler() if scale == "train" else "passthrough"),
                         ("rank", estimator)])

    if list(plan.grid) == ["C"]:
        model = _fit_quietly(scaled(RankerCV(ranker, Cs=plan.grid["C"], cv=folds)), X, y)
        return model, model["rank"].best_estimator_, {"C": model["rank"].C_}
    if plan.grid:
        grid = {f"rank__{name}": list(values) for name, values in plan.grid.items()}
        model = _fit_quietly(GridSearchCV(scaled(ranker), grid, cv=folds, error_score="raise"),
                             X, y)
        chosen = {name[len("rank__"):]: value for name, value in model.best_params_.items()}
        return model, model.best_estimator_["rank"], chosen
    model = _fit_quietly(scaled(ranker), X, y)
    return model, model["rank"], {}


def _fit_quietly(model, X, y):
    """Fit, without the convergence warnings that a fixed iteration budget (the paper's
    protocol) is expected to give; the ranker's ``status_`` still says how each fit ended."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankers.ConvergenceWarning)
        warnings.simplefilter("ignore", rankers.ZeroModelWarning)
        return model.fit(X, y)


def run_split(dataset, split, X, y, train, test, *, methods, Cs, n_folds, seed,
              return_scores=False, ranker_kw=None, scale="train", on_fit=None,
              protocol="exact", eta0s=PAPER_ETA0S):
    """Fit every method on one split (its parameters chosen by cross-validation, see
    :func:`method_plan`) and measure it on the test part.

    ``on_fit``, when given, is called with the method's name after each method is measured (the
    progress bars count fits through it).
    """
    rows, scores = [], {}
    for name in methods:
        t0 = time.perf_counter()
        model, ranker, chosen = fit_plan(method_plan(name, protocol, Cs, eta0s), X[train],
                                         y[train], n_folds=n_folds, seed=seed, scale=scale,
                                         ranker_kw=ranker_kw)
        elapsed = time.perf_counter() - t0
        s = model.decision_function(X[test])
        rows.append({"dataset": dataset, "split": split, "method": name,
                     "C": chosen.get("C", np.nan), "eta0": chosen.get("eta0", np.nan),
                     **metrics.ranking_report(y[test], s),
                     "n_features_used": ranker.n_features_used_,
                     "n_features": X.shape[1], "n_train": int(train.size),
                     "n_test": int(test.size), "status": ranker.status_,
                     "backend": ranker.backend_, "scale": scale, "protocol": protocol,
                     "time_s": elapsed})
        scores[name] = s
        if on_fit is not None:
            on_fit(name)
    return (rows, y[test], scores) if return_scores else rows


def _split_tasks(dataset, k, X, y, n_splits, seed, settings):
    """The tasks ``(dataset, split, X, y, train, test, settings)`` of the k-th data set of a run:
    its splits drawn from seed ``seed + 1000 k`` (:data:`SPLIT_RULES`), split i cross-validated
    with seed ``seed + 1000 k + i + 1``."""
    frac, strat = SPLIT_RULES[dataset]
    parts = splits(y, train_fraction=frac, stratified=strat, n_splits=n_splits,
                   seed=seed + 1000 * k)
    return [(dataset, i, X, y, tr, te, {**settings, "seed": seed + 1000 * k + i + 1})
            for i, (tr, te) in enumerate(parts)]


def _run_split_task(args, on_fit=None):
    """One split (here or in a joblib worker): the rows, and the test labels and scores as
    lists (what the store keeps)."""
    rows, y_test, scores = run_split(*args[:-1], return_scores=True, on_fit=on_fit, **args[-1])
    return {"rows": rows, "y_test": np.asarray(y_test).tolist(),
            "scores": {k: np.asarray(v).tolist() for k, v in scores.items()}}


def _split_or_error(j: int, task_args):
    """``(j, the split's result, None)``, or ``(j, None, the error in one line)``: a failed
    split does not stop the others, which finish and are stored."""
    try:
        return j, _run_split_task(task_args), None
    except Exception as exc:  # reported with the split's name once every split has ended
        return j, None, f"{type(exc).__name__}: {exc}"


def _progress_bar(total: int, desc: str, progress: bool):
    """A tqdm bar on stderr (tqdm's default stream), or a silent one when ``progress`` is false."""
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit="fit", disable=not progress)


# ---- the store of finished splits ---------------------------------------------------------------

def _store_path(store, task_args) -> Path:
    """Where a split's result is kept: a file named by its data set, protocol and split, and by
    a fingerprint of everything that decides the result (data set, split indices, methods,
    protocol, grids, folds, seeds, scaling, ranker options and the package version)."""
    from ... import __version__
    dataset, split, X, y, train, test, settings = task_args
    digest = hashlib.sha256()  # (JSON writes the settings' tuples as lists)
    digest.update(json.dumps({"dataset": dataset, "split": split, "settings": settings,
                              "version": __version__}, sort_keys=True, default=repr).encode())
    for a in (X, y, train, test):
        digest.update(np.ascontiguousarray(a).tobytes())
    name = f"{dataset}_{settings['protocol']}_split{split}_{digest.hexdigest()[:16]}.json"
    return Path(store) / name


def _load_stored(path):
    """A stored split's result, or None when it is missing or unreadable (it is then rerun)."""
    try:
        out = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(out, dict) or not {"rows", "y_test", "scores"} <= set(out):
            raise ValueError("missing keys")
        return out
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        warnings.warn(f"stored split {path} is unreadable ({exc}); it is run again",
                      RuntimeWarning, stacklevel=3)
        return None


def agarwal_experiment(datasets=("ionosphere", "spambase"), *, n_splits: int = 10,
                       Cs=PAPER_CS, n_folds: int = 5,
                       methods=("ranksvm", "infinite_push", "sparse_infinite_push"),
                       seed: int = 0, n_jobs: int = 1, data_dir=None, ranker_kw=None,
                       return_scores: bool = False, scale: str = "train",
                       progress: bool = True, protocol: str = "exact", eta0s=PAPER_ETA0S,
                       store=None):
    """Run the protocol; a tidy DataFrame, one row per (dataset, split, method).

    Columns: dataset, split, method, C and eta0 (chosen by CV; NaN when not a parameter),
    auc, pos_at_top, ap, dcg, n_features_used, n_features, n_train, n_test, status, backend,
    scale, protocol, time_s. ``protocol``: "exact" (every model at its certified optimum) or
    "paper" (trained as [Agarwal2011] did; :func:`method_plan`). ``methods``: names from
    :func:`method_names`.

    ``n_jobs > 1`` runs the splits in that many joblib workers (processes, whose BLAS threads
    joblib limits to share the cores; a ``joblib.parallel_config`` context chooses another
    backend, e.g. dask's); ``n_jobs=1`` runs in this process. ``store``: a
    folder where every finished split is written (atomically) as soon as it ends, keyed by a
    fingerprint of its data and settings; a later run with the same settings reuses it instead
    of refitting, so an interrupted run resumes where it stopped.

    With ``return_scores=True`` also returns ``{(dataset, split): (y_test, {method: test
    scores})}`` (for ROC curves). ``scale``: "train" (the [0, 1] map fitted on training parts
    only) or "all" (fitted once on the whole data set; see the module docstring).

    ``progress``: a tqdm bar on stderr counting the (split, method) fits, each with its
    cross-validation; in worker processes it advances a whole split at a time. ``False``
    writes nothing to stderr.
    """
    import pandas as pd
    check_choice(scale, "scale", ("train", "all"))
    for name in methods:
        method_plan(name, protocol, Cs, eta0s)  # an unknown method or protocol: a ValueError now
    settings = dict(methods=tuple(methods), Cs=tuple(Cs), n_folds=n_folds, ranker_kw=ranker_kw,
                    scale=scale, protocol=protocol, eta0s=tuple(eta0s))
    tasks = []
    for k, ds in enumerate(datasets):
        check_choice(ds, "dataset", SPLIT_RULES)
        X, y = load(ds, data_dir)
        if scale == "all":
            X = MinMaxScaler().fit_transform(X)
        tasks += _split_tasks(ds, k, X, y, n_splits, seed, settings)
    if store is not None:
        Path(store).mkdir(parents=True, exist_ok=True)
    paths = [None if store is None else _store_path(store, t) for t in tasks]
    results = [None if path is None else _load_stored(path) for path in paths]
    todo = [j for j, r in enumerate(results) if r is None]

    def finished(j, result):
        results[j] = result
        if paths[j] is not None:  # NumPy scalars (a chosen C, a count) as Python numbers
            write_text_atomic(paths[j], json.dumps(result, default=np.generic.item))

    with _progress_bar(len(tasks) * len(methods), f"agarwal ({protocol})", progress) as bar:
        bar.update((len(tasks) - len(todo)) * len(methods))  # reused from the store
        if n_jobs == 1:
            for j in todo:
                bar.set_postfix_str(f"{tasks[j][0]} split {tasks[j][1] + 1}/{n_splits}")
                finished(j, _run_split_task(tasks[j], on_fit=lambda _: bar.update()))
        elif todo:
            from joblib import Parallel, delayed
            failures = []
            for j, result, error in Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
                    delayed(_split_or_error)(j, tasks[j]) for j in todo):
                if error is None:
                    finished(j, result)
                    bar.update(len(methods))
                else:
                    failures.append(f"{tasks[j][0]} split {tasks[j][1]}: {error}")
            if failures:  # the finished splits are stored; a rerun resumes from them
                raise RuntimeError("splits failed: " + "; ".join(failures))
    table = pd.DataFrame([row for r in results for row in r["rows"]])
    if not return_scores:
        return table
    scores = {(t[0], t[1]): (np.asarray(r["y_test"]),
                             {m: np.asarray(v) for m, v in r["scores"].items()})
              for t, r in zip(tasks, results)}
    return table, scores


def compare_with_paper(results):
    """Mean and standard error over splits per (protocol,) dataset and method, beside the paper's
    means.

    For each measure: the mean, ``<measure>_se`` (standard deviation / sqrt(splits)),
    ``paper_<measure>`` and ``<measure>_z``, the difference from the paper in standard errors
    (``|z| > 2``: a difference the split-to-split noise does not explain). A ``protocol``
    column in ``results`` becomes the first index level.
    """
    measures = list(MEASURE_LABELS)
    keys = (["protocol"] if "protocol" in results.columns else []) + ["dataset", "method"]
    g = results.groupby(keys)
    ours = g[measures + ["n_features_used"]].mean()
    n = g.size()
    se = g[measures].std().div(np.sqrt(n), axis=0).add_suffix("_se")
    paper = paper_results().add_prefix("paper_")
    table = ours.join(se).join(paper, how="left", on=["dataset", "method"])
    table["n_splits"] = n
    for m in measures:
        # a zero standard error (every split the same) makes any difference infinitely many
        table[f"{m}_z"] = (table[m] - table[f"paper_{m}"]) / table[f"{m}_se"]
    columns = [c for m in measures for c in (m, f"{m}_se", f"paper_{m}", f"{m}_z")]
    return table[columns + ["n_features_used", "n_splits"]]


def sample_run_scores(dataset: str, *, split: int = 0, n_splits: int = 1, Cs=PAPER_CS,
                      n_folds: int = 5, methods=("ranksvm", "infinite_push"), seed: int = 0,
                      data_dir=None, ranker_kw=None, progress: bool = True):
    """Test labels and scores of every method on one split (for ROC curves).

    ``progress``: a tqdm bar on stderr counting the methods fitted (``False``: silent).
    """
    X, y = load(dataset, data_dir)
    k = 0 if dataset == "ionosphere" else 1  # its place in agarwal_experiment's default
    task = _split_tasks(dataset, k, X, y, max(n_splits, split + 1), seed,
                        dict(methods=methods, Cs=Cs, n_folds=n_folds, ranker_kw=ranker_kw))[split]
    with _progress_bar(len(methods), f"{dataset} split {split}", progress) as bar:
        _, y_test, scores = run_split(*task[:-1], return_scores=True,
                                      on_fit=lambda _: bar.update(), **task[-1])
    return y_test, scores


#: names of the methods in figure legends
METHOD_LABELS = {"ranksvm": "RankSVM", "infinite_push": "Infinite Push (l2)",
                 "sparse_infinite_push": "sparse Infinite Push (l1)", "svmmap": "SVMMAP",
                 "toppush": "TopPush", "pnorm_push_1": "P-Norm Push, p = 1 (RankBoost)",
                 **{f"pnorm_push_{p}": f"P-Norm Push, p = {p}" for p in PNORM_POWERS[1:]}}


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
    full.set(xlim=(0, 1), ylim=(0, 1.01))
    full.set_title(f"{prefix}ROC curve\n({y_test.size} test items; dotted: the zoomed part)",
                   fontsize=10)
    zoom.set(xlim=(0, zoom_fpr), ylim=(0, max(0.05, min(1.01, 1.08 * top_tpr))))
    zoom.set_title(f"{prefix}top of the list, FPR <= {zoom_fpr:g}\n"
                   f"(the first {int(zoom_fpr * n_neg)} of {n_neg} test negatives)", fontsize=10)
    for ax in (full, zoom):
        ax.set_xlabel("false positive rate (fraction of negatives ranked above)")
        ax.set_ylabel("true positive rate (fraction of positives)")
        ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", ncol=2, fontsize=9)
    return fig


def plot_agarwal_results(results):
    """The experiment's table as a figure: one row of panels per data set (and protocol), one
    panel per measure (:data:`MEASURE_LABELS`), each method's mean over the splits with a bar
    of one standard error either side (none with one split), and the paper's value as a hollow
    diamond where it reported one. Returns a :class:`matplotlib.figure.Figure`, built without
    pyplot (no backend is selected or changed)."""
    from matplotlib.figure import Figure

    table = compare_with_paper(results).reset_index()
    keys = [k for k in ("protocol", "dataset") if k in table.columns]
    groups = list(table.groupby(keys, sort=False))
    methods = list(dict.fromkeys(table["method"]))
    table = table.set_index("method")
    fig = Figure(figsize=(3.1 * len(MEASURE_LABELS), 0.9 + 2.2 * len(groups)),
                 layout="constrained")
    axes = fig.subplots(len(groups), len(MEASURE_LABELS), squeeze=False)
    for row, (key, group) in zip(axes, groups):  # (a list of keys: each key is a tuple)
        for ax, (measure, label) in zip(row, MEASURE_LABELS.items()):
            for k, method in enumerate(methods):
                if method not in group.index:
                    continue
                line = group.loc[method]
                style = series_style(k)
                se = line[f"{measure}_se"]
                ax.errorbar([line[measure]], [k], xerr=None if np.isnan(se) else [[se], [se]],
                            color=style["color"], marker=style["marker"], ms=7, capsize=3,
                            ls="none", label=METHOD_LABELS.get(method, method))
                if not np.isnan(line[f"paper_{measure}"]):
                    ax.plot([line[f"paper_{measure}"]], [k], marker="D", ms=7, mfc="none",
                            mec="0.2", ls="none", label="the paper's value")
            ax.set_yticks(range(len(methods)), [METHOD_LABELS.get(m, m) for m in methods]
                          if ax is row[0] else [])
            ax.set(ylim=(len(methods) - 0.4, -0.6), xlabel=label)  # the first method on top
            ax.grid(alpha=0.3, axis="x")
        n = int(group["n_splits"].max())
        row[0].set_title(", ".join(map(str, key)) + f" ({n} split{'' if n == 1 else 's'})",
                         loc="left", fontsize=10)
    entries = {}
    for ax in axes.flat:  # a method or the paper's marker may be absent from the first panel
        handles, labels = ax.get_legend_handles_labels()
        entries.update(zip(labels, handles))
    if "the paper's value" in entries:  # last, after the methods
        entries["the paper's value"] = entries.pop("the paper's value")
    fig.legend(entries.values(), entries.keys(), loc="outside lower center", ncol=4, fontsize=9)
    fig.suptitle("Agarwal (2011) section 6 protocol: test measures, mean and one standard "
                 "error over the splits", fontsize=11)
    return fig
