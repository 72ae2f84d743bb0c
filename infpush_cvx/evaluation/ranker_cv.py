"""RankerCV: a bipartite ranker whose C is chosen by cross-validation along a warm-started path.

In the style of ``sklearn.linear_model.LassoCV`` and ``LogisticRegressionCV``: for every fold
the ranker is fitted for every C of the grid on the fold's training part, from the smallest C
(strongest regularisation) to the largest, each solve starting from the previous one (see "Along
a path of C values" in :mod:`infpush_cvx.evaluation.rankers`); each fit is scored on the fold's
held-out part; the C with the best mean score wins (ties: the smallest C), and the ranker is
refitted with it on all the data. The folds and scorers are scikit-learn's.

``n_jobs``: the folds run in parallel through joblib (which scikit-learn brings), each fold's
path in one worker, so the warm start along the path is kept. Every fold is computed exactly as
with ``n_jobs=1`` (same data, same solves in the same order, no shared state), hence the same
scores, C and model. The workers return their solves; the ConvergenceWarning of an uncertified
one and the progress lines of RankerCV are then issued here, in fold order, as with
``n_jobs=1``. The solvers' own progress lines (``verbose``) come from the workers as they run.
The workers are processes (joblib's default backend, loky): under
``joblib.parallel_config(backend="threading")`` the results are the same, but warnings may be
lost, since the solves filter their solvers' warnings with ``warnings.catch_warnings``, whose
state is shared by the threads of a process.

Queries (``fit(X, y, groups=qid)``, a query id per row): the folds are scikit-learn's
``GroupKFold``, so no query is split across folds; ``scoring="ndcg@10"`` (any k, or ``"ndcg"``
for the whole list), ``"map"`` or ``"precision@5"`` (any k) scores each held-out fold by the
metric of :mod:`infpush_cvx.evaluation.query_metrics` over its queries, with that module's
defaults. A ranker whose ``fit`` takes ``qid`` (a ranker over queries) gets the query ids of its
training rows as ``qid=``; it is fitted afresh for every C (its ``fit`` is all RankerCV knows of
it: no warm-started path), and its labels are its own (graded relevance): RankerCV reads them
only to split and score.
"""

from __future__ import annotations

import inspect
import logging
import numbers

import numpy as np

from . import _sklearn  # noqa: F401 - first: without scikit-learn, its ImportError
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import GroupKFold, check_cv
from sklearn.utils.parallel import Parallel, delayed
from .._logging import log_progress, verbose_logging
from .._validation import check_bool, check_int, check_vector
from ..data.labels import binary_labels
from ._ranker import (_BipartiteRanker, _read_labels, _sample_weights, _validated_X,
                      binary_ranker_tags, check_fitted, store_params)
from .query_metrics import check_query_ids, query_metric
from .rankers import InfinitePushRanker

__all__ = ["RankerCV", "DEFAULT_C_RANGE"]

#: An int ``Cs = k`` means k values log-spaced over this range: the grid of the papers'
#: experiments, C in {0.1, 1, 10, 100, 1000} (docs/mathematics.md, "Model selection").
DEFAULT_C_RANGE = (0.1, 1000.0)

_log = logging.getLogger(__name__)


class RankerCV(ClassifierMixin, BaseEstimator):
    """A ranker of :mod:`infpush_cvx.evaluation.rankers` with C chosen by (stratified)
    cross-validation.

    Parameters
    ----------
    ranker : a ranker instance or class (InfinitePushRanker, SparseInfinitePushRanker,
        RankSVMRanker, or a ranker over queries: one whose ``fit`` takes ``qid``); None:
        ``InfinitePushRanker()``. Its parameters other than C (solver, method, tol, pos_label,
        ...) are used for every fit; its C is ignored.
    Cs : int or sequence of floats > 0, default 10. An int k: k values of C log-spaced over
        :data:`DEFAULT_C_RANGE`; a sequence: those values (sorted, duplicates dropped).
    cv : None (5 folds), an int (that many folds), a scikit-learn splitter or an iterable of
        (train, test) index arrays. Without ``groups``: what
        ``sklearn.model_selection.check_cv(cv, y, classifier=True)`` accepts (None and an int:
        stratified folds; ``classifier=False``, plain folds, for a ranker over queries). With
        ``groups``: None and an int are ``GroupKFold`` folds, and a splitter gets the groups
        (``StratifiedGroupKFold`` keeps the queries whole and balances the classes).
    scoring : None (the ranker's ``score``: average precision; ``"ndcg@10"`` for a ranker over
        queries), a metric over queries (``"ndcg@k"``, ``"ndcg"``, ``"map"``,
        ``"precision@k"``: module docstring), a scikit-learn scorer name (``"roc_auc"``,
        ``"average_precision"``, ...) or a callable ``scorer(estimator, X, y)``.
        Higher is better. scikit-learn's scorers read ``decision_function`` as the score of
        ``classes_[1]``: a scorer name with a ``pos_label`` naming ``classes_[0]`` is refused
        (ValueError), since it would rank the wrong class; a callable gets the fitted ranker
        as it is. A metric over queries reads a bipartite ranker's labels as relevance 1 (the
        positive class, ``pos_label``) and 0, a query ranker's as they are; without
        ``groups`` the held-out rows of a fold are one query.
    verbose : bool, default False. True prints the progress to stderr (through the logger
        ``infpush_cvx.evaluation.ranker_cv`` at INFO): one line per fold and C (held-out score,
        status, iterations), the C chosen, and the progress of every solve (it sets the ranker's
        ``verbose``). False leaves the ranker's own ``verbose`` as it is.
    n_jobs : int or None, default None. Folds fitted in parallel, joblib's convention: None is 1
        (unless a ``joblib.parallel_config`` context says otherwise), -1 every core, -2 all but
        one. The results are those of ``n_jobs=1`` (module docstring). Each worker process
        starts by importing the package (a few seconds): worth it for folds that take longer.

    Attributes
    ----------
    Cs_ : the grid, increasing. ``scores_`` : (n_folds, n_Cs) held-out scores.
    C_ : the C of the best mean score (ties: the smallest). ``best_score_`` : that mean.
    best_estimator_ : the ranker refitted on all the data with ``C_``; its ``coef_``,
        ``classes_``, ``n_iter_`` (iterations of that refit, as in LassoCV) and
        ``dual_gap_`` are repeated here, as are ``n_features_in_`` and ``feature_names_in_``.
    n_iter_path_ : (n_folds, n_Cs) iterations of every path solve (NaN where the solver reports
        none): the warm start shows as fewer iterations after the first C.

    ``fit(X, y, sample_weight=None, groups=None)``: the weights enter every fit (each fold's
    training rows) and every held-out score (the scorer's ``sample_weight``; a callable
    ``scoring`` gets them when it takes a ``sample_weight`` argument, else scores unweighted;
    a metric over queries scores unweighted), so integer weights choose C as the repeated rows
    would on the same folds. ``groups``: a query id per row (module docstring). Fold fits that
    end without their certificate warn (ConvergenceWarning); a zero model on a fold (a C too
    small for the l1 penalty) does not warn: it scores as a constant ranking. The refit warns
    as the ranker's ``fit`` does. A ranker over queries warns as its ``fit`` does, in the
    worker process (lost with ``n_jobs`` > 1).

    Scaling: in ``Pipeline([("scale", MinMaxScaler()), ("rank", RankerCV(...))])`` the scaler is
    fitted on all the rows the pipeline gets, the held-out folds of RankerCV included (a small
    leak, as for any ``*CV`` estimator after a scaler). ``GridSearchCV`` over a pipeline scales
    inside every fold, without the warm-started path.
    """

    def __init__(self, ranker=None, *, Cs=10, cv=None, scoring=None, verbose=False,
                 n_jobs=None):
        store_params(self, locals())

    # ---- validation -------------------------------------------------------------------------
    def _base_ranker(self):
        ranker = InfinitePushRanker() if self.ranker is None else self.ranker
        if isinstance(ranker, type) and (issubclass(ranker, _BipartiteRanker)
                                         or _takes_qid(ranker)):
            ranker = ranker()
        if not (isinstance(ranker, _BipartiteRanker)
                or (isinstance(ranker, BaseEstimator) and _takes_qid(type(ranker)))):
            raise TypeError(f"ranker must be a ranker of infpush_cvx.evaluation.rankers "
                            f"(InfinitePushRanker, SparseInfinitePushRanker, RankSVMRanker) or "
                            f"a ranker over queries (its fit takes qid), an instance or the "
                            f"class; got {type(ranker).__name__} {ranker!r}")
        return ranker

    def _grid(self) -> np.ndarray:
        """The C values, increasing; ValueError/TypeError naming Cs."""
        Cs = self.Cs
        if isinstance(Cs, numbers.Integral) and not isinstance(Cs, bool):
            if Cs < 1:
                raise ValueError(f"Cs must be a positive int or a sequence of C values, got {Cs}")
            low, high = np.log10(DEFAULT_C_RANGE)
            return np.logspace(low, high, int(Cs))
        if isinstance(Cs, (str, bytes, bool)) or np.ndim(Cs) != 1:
            raise TypeError(f"Cs must be an int or a 1-D sequence of C values, got "
                            f"{type(Cs).__name__} {Cs!r}")
        grid = check_vector(Cs, "Cs")  # numbers (TypeError otherwise), finite
        if grid.size == 0 or np.any(grid <= 0):
            raise ValueError(f"Cs must be an int or a nonempty sequence of positive C values, "
                             f"got {grid.tolist()}")
        return np.unique(grid)

    # ---- fitting ----------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None, groups=None):
        """Cross-validate every C of the grid, then refit the ranker with the best one.

        ``groups``: None, or a query id per row (GroupKFold folds; module docstring)."""
        Cs = self._grid()
        verbose = check_bool(self.verbose, "verbose")
        if self.n_jobs is not None and check_int(self.n_jobs, "n_jobs") == 0:
            raise ValueError("n_jobs must be a nonzero int or None (joblib's convention: -1 "
                             "every core), got 0")
        base = clone(self._base_ranker()).set_params(C=float(Cs[0]))
        if verbose and "verbose" in base.get_params():
            base.set_params(verbose=True)
        if _takes_qid(type(base)):
            return self._fit_queries(base, Cs, X, y, sample_weight, groups, verbose)
        base._check_params()
        X_array = _validated_X(self, X, reset=True)
        labels = _read_labels(y, X_array.shape[0], type(self).__name__,
                              pos_label=base.pos_label)
        y_array = np.asarray(y).reshape(X_array.shape[0])  # a column vector read as 1-D
        qid = None if groups is None else check_query_ids(groups, X_array.shape[0], "groups")
        metric = query_metric(self.scoring)
        positive_is_first = binary_labels(labels.classes, "classes_",
                                          pos_label=base.pos_label).positive[0]
        if isinstance(self.scoring, str) and metric is None and positive_is_first:
            raise ValueError(
                f"scoring={self.scoring!r} reads decision_function as the score of classes_[1] "
                f"= {labels.classes[1].item()!r} (scikit-learn's convention), but the ranker's "
                f"pos_label={base.pos_label!r} is classes_[0], so it would score the reversed "
                f"ranking; use scoring=None (the ranker's average precision, which reads "
                f"pos_label) or encode y so that the positive class is the greater label")
        weights = _sample_weights(sample_weight, X_array.shape[0], labels.positive)
        folds = _folds(self.cv, X_array, y_array, qid, classifier=True)
        if metric is None:
            scorer = check_scoring(base, scoring=self.scoring)
            targets = y_array
            weigh_scores = weights is not None and _takes_sample_weight(self.scoring)
        else:  # relevance 1 for the positive class, 0 for the other
            scorer, targets, weigh_scores = _QueryScorer(metric), labels.positive * 1.0, False

        jobs = (delayed(_fold_path)(base, X_array[train], y_array[train],
                                    None if weights is None else weights[train], labels.classes,
                                    X_array[test], targets[test],
                                    _score_params(test, weights if weigh_scores else None,
                                                  qid, metric is not None), Cs, scorer)
                for train, test in folds)
        results = Parallel(n_jobs=self.n_jobs)(jobs)

        self.scores_ = np.array([scores for scores, _ in results])
        self.n_iter_path_ = np.array([[np.nan if s.n_iter is None else s.n_iter for s in path]
                                      for _, path in results], dtype=float)
        with verbose_logging(_log, verbose):
            for k, (scores, path) in enumerate(results):
                for C, score, solve in zip(Cs, scores, path):
                    base._warn_if_unreliable(None, float(C), solve, stacklevel=3,
                                             zero_model=False)
                    _log_fold(k, len(folds), C, score, solve.status, solve.n_iter)
            self._choose_C(Cs)
            # SVMMAPRanker.fit takes no sample_weight: pass it only when there are weights
            weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
            self.best_estimator_ = clone(base).set_params(C=self.C_).fit(X, y, **weighted)
        self._copy_fitted()
        return self

    def _fit_queries(self, base, Cs, X, y, sample_weight, groups, verbose):
        """``fit`` for a ranker over queries: every C fitted afresh on every fold's training
        rows with their query ids (``qid=``); the labels are the ranker's to check."""
        X_array = _validated_X(self, X, reset=True)
        n_rows = X_array.shape[0]
        y_array = np.asarray(y)
        if y_array.ndim != 1 or y_array.shape[0] != n_rows:
            raise ValueError(f"y must be 1-D with one label per row of X ({n_rows}), "
                             f"got shape {y_array.shape}")
        qid = None if groups is None else check_query_ids(groups, n_rows, "groups")
        weights = None
        if sample_weight is not None:  # indexed by fold here; the ranker's fit checks the rest
            weights = np.asarray(sample_weight)
            weights = check_vector(np.full(n_rows, weights) if weights.ndim == 0 else weights,
                                   "sample_weight", length=n_rows, nonnegative=True)
        metric = query_metric("ndcg@10" if self.scoring is None else self.scoring)
        scorer = check_scoring(base, scoring=self.scoring) if metric is None \
            else _QueryScorer(metric)
        weigh_scores = metric is None and weights is not None and \
            _takes_sample_weight(self.scoring)
        folds = _folds(self.cv, X_array, y_array, qid, classifier=False)

        jobs = (delayed(_fold_fits)(base, X_array[train], y_array[train],
                                    None if qid is None else qid[train],
                                    None if weights is None else weights[train],
                                    X_array[test], y_array[test],
                                    _score_params(test, weights if weigh_scores else None,
                                                  qid, metric is not None), Cs, scorer)
                for train, test in folds)
        results = Parallel(n_jobs=self.n_jobs)(jobs)
        self.scores_ = np.array([scores for scores, _ in results])
        self.n_iter_path_ = np.array([[np.nan if n is None else n for n in n_iter]
                                      for _, n_iter in results], dtype=float)
        with verbose_logging(_log, verbose):
            for k, (scores, n_iter) in enumerate(results):
                for C, score, n in zip(Cs, scores, n_iter):
                    _log_fold(k, len(folds), C, score, None, n)
            self._choose_C(Cs)
            weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
            self.best_estimator_ = clone(base).set_params(C=self.C_).fit(
                X, y, qid=groups, **weighted)
        self._copy_fitted()
        return self

    def _choose_C(self, Cs) -> None:
        """``Cs_``, ``C_`` and ``best_score_`` from ``scores_``: the best mean (ties: the
        smallest C)."""
        mean = self.scores_.mean(axis=0)
        if np.all(np.isnan(mean)):
            raise ValueError(f"every cross-validation score is NaN "
                             f"(scoring={self.scoring!r})")
        best = int(np.nanargmax(mean))  # the first maximum: the smallest C among ties
        self.Cs_ = Cs
        self.C_ = float(Cs[best])
        self.best_score_ = float(mean[best])
        log_progress(f"RankerCV: C={self.C_:.4g} chosen (mean held-out score "
                     f"{self.best_score_:.6g}); refitting on all the data", _log)

    def _copy_fitted(self) -> None:
        """The refitted ranker's attributes repeated here (those it has: a ranker over queries
        may have no ``classes_``)."""
        for name in ("coef_", "classes_", "n_iter_", "dual_gap_"):
            if hasattr(self.best_estimator_, name):
                setattr(self, name, getattr(self.best_estimator_, name))

    # ---- prediction: the refitted ranker's ----------------------------------------------------
    def _fitted(self):
        """``best_estimator_``; NotFittedError before ``fit``."""
        check_fitted(self, "best_estimator_")
        return self.best_estimator_

    def decision_function(self, X):
        """``best_estimator_.decision_function(X)``: ranking scores, higher = nearer the top."""
        return self._fitted().decision_function(X)

    def predict(self, X):
        """``best_estimator_.predict(X)``: the positive class where the score is above 0."""
        return self._fitted().predict(X)

    def score(self, X, y, sample_weight=None):
        """``best_estimator_.score(X, y, sample_weight)``: average precision of the ranking of
        X (weighted by ``sample_weight``)."""
        return self._fitted().score(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        return binary_ranker_tags(super().__sklearn_tags__())


def _fold_path(base, X_train, y_train, w_train, classes, X_test, y_test, test_weights, Cs,
               scorer):
    """One fold: the warm-started path of ``base`` over ``Cs`` on the training part, each fit
    scored on the held-out part. Runs in a joblib worker (or here, with ``n_jobs=1``).

    Returns the held-out scores and the solves (:class:`~infpush_cvx.evaluation._ranker._PathFit`:
    weights, status, iterations), one per C. The caller reports the uncertified solves: a worker
    process's warnings would be lost.
    """
    ranker = clone(base)
    training = ranker._training_set(X_train, y_train, w_train, classes=classes)
    path = ranker._solve_path(training, list(Cs))
    scores = []
    for C, solve in zip(Cs, path):
        fitted = clone(base).set_params(C=float(C))
        fitted._set_fitted(training, float(C), solve)
        fitted.n_features_in_ = X_train.shape[1]
        scores.append(float(scorer(fitted, X_test, y_test, **test_weights)))
    return scores, path


def _fold_fits(base, X_train, y_train, qid_train, w_train, X_test, y_test, score_params, Cs,
               scorer):
    """One fold of a ranker over queries: ``base`` fitted for every C of ``Cs`` on the training
    rows (``qid=`` their query ids), each fit scored on the held-out rows. Returns the scores
    and the fits' ``n_iter_`` (None where there is none)."""
    weighted = {} if w_train is None else {"sample_weight": w_train}
    scores, n_iter = [], []
    for C in Cs:
        fitted = clone(base).set_params(C=float(C)).fit(X_train, y_train, qid=qid_train,
                                                        **weighted)
        scores.append(float(scorer(fitted, X_test, y_test, **score_params)))
        n_iter.append(getattr(fitted, "n_iter_", None))
    return scores, n_iter


def _folds(cv, X, y, qid, *, classifier: bool) -> list:
    """The (train, test) index arrays: ``check_cv``'s folds without query ids; with them,
    ``GroupKFold`` for None or an int (no query split across folds) and the splitter's own
    folds, given the groups, otherwise."""
    cv = 5 if cv is None else cv
    if qid is None:
        return list(check_cv(cv, y, classifier=classifier).split(X, y))
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        cv = GroupKFold(n_splits=cv)
    return list(check_cv(cv, y, classifier=classifier).split(X, y, groups=qid))


def _score_params(test, weights, qid, by_query: bool) -> dict:
    """The scorer's keyword arguments for the held-out rows ``test``: their ``sample_weight``
    (when ``weights`` is given) and, for a metric over queries, their query ids ``qid`` (one
    query without ``groups``)."""
    params = {} if weights is None else {"sample_weight": weights[test]}
    if by_query:
        params["qid"] = np.zeros(len(test), dtype=np.int64) if qid is None else qid[test]
    return params


class _QueryScorer:
    """A metric over queries as a scorer ``scorer(estimator, X, y, qid)``: the metric of
    ``estimator.decision_function(X)`` with the relevance labels ``y``."""

    def __init__(self, metric):
        self.metric = metric

    def __call__(self, estimator, X, y, qid):
        return self.metric(y, estimator.decision_function(X), qid)


def _log_fold(k: int, n_folds: int, C, score: float, status, n_iter) -> None:
    """The progress line of one fold and C."""
    status = "" if status is None else f", status {status}"
    log_progress(f"RankerCV fold {k + 1}/{n_folds}, C={C:.4g}: held-out score {score:.6g}"
                 f"{status}, iterations {n_iter}", _log)


def _takes_qid(ranker_class) -> bool:
    """Whether a ranker class's ``fit`` takes query ids (``qid``): a ranker over queries."""
    try:
        return "qid" in inspect.signature(ranker_class.fit).parameters
    except (AttributeError, TypeError, ValueError):
        return False


def _takes_sample_weight(scoring) -> bool:
    """Whether the held-out scores get the fold's sample weights: scikit-learn's scorers do, a
    callable ``scoring`` when it has a ``sample_weight`` argument."""
    if not callable(scoring):
        return True
    try:
        return "sample_weight" in inspect.signature(scoring).parameters
    except (TypeError, ValueError):  # no signature to read: called as documented
        return False
