"""Learning to rank on the LETOR set: every model over queries, certified, beside CVXPY.

The set is LightGBM's LambdaRank example (:func:`infpush_cvx.data.datasets.load_letor`): 3,005
training documents in 201 queries and 768 test documents in 50, graded labels 0 to 4, 300
features in [0, 1]. The protocol, for each model of :data:`MODELS`:

1. ``C`` (``lam = 1/C``, paper scaling) is chosen on the training queries by
   :class:`~infpush_cvx.evaluation.ranker_cv.RankerCV`: ``n_folds``-fold ``GroupKFold`` over the
   queries (no query split across folds), scored by NDCG@10 with gains ``2^y - 1``.
2. The model is refitted on every training query at that ``C`` by its certified method
   (relative duality gap ``tol``); with ``check_cvxpy`` the same problem is solved by CVXPY +
   Clarabel and the relative difference of the two objective values reported.
3. On the test queries: NDCG@1, @5 and @10 (gains ``2^y - 1``) and MAP (relevant: label at least
   1), each the mean over the queries that have a relevant document
   (:mod:`infpush_cvx.evaluation.query_metrics`).

The baseline ``ranksvm_ignoring_queries`` is the bipartite RankSVM on every document of label at
least 1 against every other, across queries (what a package without queries offers); its CVXPY
problem (1.5 million pairs) is not solved.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from infpush_cvx.data.queries import QueryData, QueryWarning
from infpush_cvx.evaluation.query_rankers import (QueryInfinitePushRanker, QueryRanker,
                                                  QueryRankSVMRanker)

#: The grid of C (lam = 1/C, paper scaling) searched by cross-validation.
CS = (1.0, 10.0, 100.0, 1000.0, 10000.0)
#: The test measures, in the order of the table: NDCG@k by k, then MAP.
NDCG_KS = (1, 5, 10)


class RankSVMIgnoringQueries(QueryRanker):
    """The bipartite RankSVM (:func:`infpush_cvx.solvers.ranksvm`) fitted on the documents of
    label at least ``threshold`` against all the others, every query pooled: the baseline of a
    ranker that does not know the queries (``qid`` is taken, for the same interface, and only
    the scoring uses it)."""

    def __init__(self, C=1.0, *, threshold=1.0, tol=1e-6, time_limit=None):
        self.C, self.threshold, self.tol, self.time_limit = C, threshold, tol, time_limit

    def _solve(self, data: QueryData):
        from infpush_cvx.data.containers import BipartiteData
        from infpush_cvx.solvers import ranksvm

        relevant = data.relevant(self.threshold)
        pooled = BipartiteData(data.X[relevant], data.X[~relevant])
        return ranksvm(pooled, self._lam(), tol=self.tol, time_limit=self.time_limit)


#: The models compared: name -> the ranker (C set by the search).
MODELS = {
    "query_ranksvm": QueryRankSVMRanker(loss="hinge"),
    "query_ranksvm_squared_hinge": QueryRankSVMRanker(loss="squared_hinge"),
    "query_ranksvm_all_pairs": QueryRankSVMRanker(loss="hinge", normalization="pairs"),
    "query_ranksvm_label_difference": QueryRankSVMRanker(loss="hinge",
                                                         pair_weight="label_difference"),
    "query_infinite_push": QueryInfinitePushRanker(penalty="l2"),
    "query_infinite_push_l1": QueryInfinitePushRanker(penalty="l1"),
    "query_infinite_push_top_labels": QueryInfinitePushRanker(penalty="l2", threshold=2.0),
    "ranksvm_ignoring_queries": RankSVMIgnoringQueries(),
}


def _cvxpy_check(ranker: QueryRanker, data: QueryData) -> tuple[float, float]:
    """``(relative objective difference, CVXPY seconds)`` of ``ranker``'s fitted weights against
    CVXPY + Clarabel on the same problem; NaNs where the model has no check."""
    if isinstance(ranker, RankSVMIgnoringQueries):
        return np.nan, np.nan
    problem = ranker.problem(data)
    cvx = problem.cvxpy_problem()
    start = time.perf_counter()
    cvx.solve(solver="CLARABEL")
    seconds = time.perf_counter() - start
    ours = problem.objective(ranker.coef_)
    return abs(ours - cvx.value) / max(abs(cvx.value), 1e-12), seconds


def held_out_measures(y, scores, qid) -> dict:
    """NDCG@k for k in :data:`NDCG_KS` and MAP of ``scores`` over the queries ``qid``."""
    from infpush_cvx.evaluation.query_metrics import mean_average_precision, ndcg_at_k
    out = {f"ndcg@{k}": ndcg_at_k(y, scores, qid, k=k) for k in NDCG_KS}
    out["map"] = mean_average_precision(y, scores, qid)
    return out


def letor_experiment(models=tuple(MODELS), *, Cs=CS, n_folds: int = 5, tol: float = 1e-6,
                     check_cvxpy: bool = True, data_dir=None, train=None, test=None,
                     progress: bool = False):
    """The protocol of the module docstring; returns a pandas table, one row per model.

    ``train``/``test``: QueryData to use instead of the letor set's splits (``data_dir`` is
    where the letor files are, :func:`~infpush_cvx.data.datasets.load_letor`). Columns:
    ``model``, ``C`` (chosen), ``cv_ndcg@10`` (its cross-validated score), the test measures,
    ``status`` and ``gap`` of the refit, ``fit_s`` (its seconds), ``cvxpy_objective_diff`` and
    ``cvxpy_s``.
    """
    import pandas as pd

    unknown = [m for m in models if m not in MODELS]
    if unknown:
        raise ValueError(f"models: unknown {unknown}; expected some of {list(MODELS)}")
    with warnings.catch_warnings():
        # every fold repeats the whole set's news (6 training queries of one label; 27 without
        # labels on both sides of 2): said once by the loader, not once a fit
        warnings.simplefilter("ignore", QueryWarning)
        return pd.DataFrame(_rows(models, Cs, n_folds, tol, check_cvxpy, data_dir, train, test,
                                  progress))


def _rows(models, Cs, n_folds, tol, check_cvxpy, data_dir, train, test, progress) -> list:
    """The rows of :func:`letor_experiment`, one per model."""
    from sklearn.base import clone

    from infpush_cvx.data.datasets import load_letor
    from infpush_cvx.evaluation.ranker_cv import RankerCV

    train = load_letor("train", data_dir) if train is None else train
    test = load_letor("test", data_dir) if test is None else test
    rows = []
    for name in models:
        base = clone(MODELS[name]).set_params(tol=tol)
        search = RankerCV(base, Cs=list(Cs), cv=n_folds, scoring="ndcg@10")
        search.fit(train.X, train.y, groups=train.qid)
        start = time.perf_counter()
        fitted = clone(base).set_params(C=search.C_).fit(train.X, train.y, qid=train.qid)
        fit_s = time.perf_counter() - start
        diff, cvxpy_s = _cvxpy_check(fitted, train) if check_cvxpy else (np.nan, np.nan)
        scores = fitted.decision_function(test.X)
        rows.append({"model": name, "C": search.C_, "cv_ndcg@10": float(search.best_score_),
                     **held_out_measures(test.y, scores, test.qid), "status": fitted.status_,
                     "gap": fitted.dual_gap_, "fit_s": fit_s,
                     "cvxpy_objective_diff": diff, "cvxpy_s": cvxpy_s})
        if progress:
            line = rows[-1]
            print(f"{name}: C={line['C']:g} ndcg@10={line['ndcg@10']:.4f} "
                  f"{line['status']} {fit_s:.2f} s", flush=True)
    return rows


def plot_letor_results(results):
    """A grouped bar chart of the test measures by model; returns a
    :class:`matplotlib.figure.Figure`, built without pyplot (no display needed)."""
    from matplotlib.figure import Figure

    from infpush_cvx._plots import COLOURS
    measures = [f"ndcg@{k}" for k in NDCG_KS] + ["map"]
    fig = Figure(figsize=(9, 4))
    ax = fig.subplots()
    width = 0.8 / len(results)
    for i, (_, line) in enumerate(results.iterrows()):
        ax.bar(np.arange(len(measures)) + i * width, [line[m] for m in measures], width,
               label=line["model"], color=COLOURS[i % len(COLOURS)])
    ax.set_xticks(np.arange(len(measures)) + 0.4 - width / 2, measures)
    ax.set_ylim(0.4, 0.95)
    ax.set_ylabel("mean over the test queries")
    ax.set_title("LETOR (LightGBM's LambdaRank example): test queries, C chosen by NDCG@10")
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    fig.tight_layout()
    return fig
