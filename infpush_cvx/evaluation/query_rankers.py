"""Rankers over queries: scikit-learn estimators fitted on documents grouped by query.

``fit(X, y, qid=None, sample_weight=None)``: features, graded labels and the query of every
document (``qid`` required: pairs are taken within a query only; rows in any order, grouped
here by a stable sort of ``qid``), with optional per-document weights. ``decision_function(X)``
and ``predict(X)`` give the scores ``X w``; ``score(X, y, qid)`` is NDCG@10 averaged over the
queries (:func:`infpush_cvx.evaluation.query_metrics.ndcg_at_k`). A subclass names its
hyper-parameters in ``__init__`` (``C`` first: ``lam = 1/C`` in paper scaling, the grid of
:class:`~infpush_cvx.evaluation.ranker_cv.RankerCV`, whose ``groups=`` keeps each query in one
fold) and its model's problem (:meth:`QueryRanker.problem`), which the model's certified method
solves.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from .._validation import check_scalar, check_time_limit, check_vector
from ..data.queries import QueryData
from ._ranker import _validated_X, check_fitted, store_params


class QueryRanker(BaseEstimator):
    """Base of the rankers over queries (module docstring). Fitted attributes: ``coef_``
    (the weights), ``status_``, ``n_iter_``, ``dual_gap_`` (the certified relative gap),
    ``result_`` (the solver's :class:`~infpush_cvx.solvers.result.SolverResult`) and
    ``n_features_in_``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True
        return tags

    #: The registered model this ranker fits (:mod:`infpush_cvx.solvers.registry`).
    _model = None

    def problem(self, data: QueryData):
        """The model's problem (the solvers' contract) on ``data`` at ``lam = 1/C``, with this
        ranker's options: what :meth:`fit` solves (a subclass's model)."""
        raise NotImplementedError

    def _solve(self, data: QueryData):
        """The certified method's result on :meth:`problem`, within ``time_limit`` seconds
        counted before the problem is built."""
        from ..solvers import registry
        from ..solvers.engines.deadline import Deadline

        deadline = Deadline(check_time_limit(self.time_limit))  # started before the set-up
        problem = self.problem(data)
        model = registry.model(self._model)
        return model.solve(model.certified.name, problem, None, deadline, tol=self.tol,
                           max_iter=self.max_iter, verbose=self.verbose)

    def _lam(self) -> float:
        """lambda in paper scaling: ``1/C`` (``C`` the weight of the loss, as the bipartite
        rankers and :class:`~infpush_cvx.evaluation.ranker_cv.RankerCV`'s grid have it)."""
        return 1.0 / check_scalar(self.C, "C", positive=True)

    def fit(self, X, y, qid=None, sample_weight=None):
        """Fit on the documents X (N x d), their graded labels y and query ids ``qid``."""
        if qid is None:
            raise ValueError(f"qid is required: {type(self).__name__} compares documents "
                             f"within a query only (one query id per row of X)")
        X = _validated_X(self, X, reset=True)
        y = check_vector(y, "y", length=X.shape[0])
        qid = np.asarray(qid)
        if qid.shape != (X.shape[0],):
            raise ValueError(f"qid must have one query id per row of X ({X.shape[0]}), got "
                             f"shape {qid.shape}")
        order = np.argsort(qid, kind="stable")  # a query's documents consecutive
        sw = None if sample_weight is None else \
            check_vector(sample_weight, "sample_weight", length=X.shape[0])[order]
        data = QueryData(X[order], y[order], qid[order], sw)
        result = self._solve(data)
        self.coef_ = np.asarray(result.w, dtype=float)
        self.status_ = result.status
        self.n_iter_ = result.iterations
        self.dual_gap_ = result.gap
        self.result_ = result
        return self

    def decision_function(self, X) -> np.ndarray:
        """The scores ``X w`` (higher: ranked first within a query)."""
        check_fitted(self, "coef_")
        X = _validated_X(self, X, reset=False)
        return np.asarray(X @ self.coef_, dtype=float).ravel()

    def predict(self, X) -> np.ndarray:
        """The scores ``X w``, as :meth:`decision_function`."""
        return self.decision_function(X)

    def score(self, X, y, qid=None, sample_weight=None) -> float:
        """NDCG@10 (gains ``2^y - 1``) averaged over the queries of ``qid``."""
        if qid is None:
            raise ValueError("qid is required: NDCG is averaged over queries")
        if sample_weight is not None:
            raise ValueError("sample_weight is not taken by score (NDCG averages queries)")
        from .query_metrics import ndcg_at_k

        return float(ndcg_at_k(np.asarray(y), self.decision_function(X), np.asarray(qid),
                               k=10))


class QueryRankSVMRanker(QueryRanker):
    """RankSVM over queries (:func:`infpush_cvx.solvers.query_ranksvm`), ``lam = 1/C``::

        (1/(2C)) ||w||^2 + sum_q sum_{(i,j) in q} c_ij l(1 - w.(x_i - x_j))

    ``loss`` "hinge" or "squared_hinge", ``normalization`` "query" (per-query means, queries
    averaged) or "pairs" (one mean over all pairs), ``pair_weight`` "none" or
    "label_difference"; the certified Newton method to relative gap ``tol`` within
    ``time_limit`` seconds (None: none)."""

    _model = "query_ranksvm"

    def __init__(self, C=1.0, *, loss="hinge", normalization="query", pair_weight="none",
                 tol=1e-6, max_iter=None, time_limit=None, verbose=False):
        store_params(self, locals())

    def problem(self, data: QueryData):
        from ..solvers import QueryRankSVMProblem

        return QueryRankSVMProblem(data, self._lam(), loss=self.loss,
                                   normalization=self.normalization,
                                   pair_weight=self.pair_weight)


class QueryInfinitePushRanker(QueryRanker):
    """The Infinite Push over queries (:func:`infpush_cvx.solvers.query_infinite_push`): the push
    at the top of every query's list, ``lam = 1/C``::

        (1/C) pen(w) + sum_q omega_q max_{j in N_q} (1/M_q) sum_{i in R_q} p_i
                       max(0, 1 - w.(x_i - x_j))

    ``pen`` ``||w||^2 / 2`` (``penalty="l2"``) or ``||w||_1`` ("l1"); ``R_q`` the documents of
    query q with label at least ``threshold`` and ``N_q`` the others (``threshold="each"``: the
    mean over every label level of the query as the threshold); the certified working set to
    relative gap ``tol`` within ``time_limit`` seconds (None: none)."""

    _model = "query_infinite_push"

    def __init__(self, C=1.0, *, penalty="l2", threshold=1.0, tol=1e-6, max_iter=None,
                 time_limit=None, verbose=False):
        store_params(self, locals())

    def problem(self, data: QueryData):
        from ..solvers import QueryInfinitePushProblem

        return QueryInfinitePushProblem(data, self._lam(), penalty=self.penalty,
                                        threshold=self.threshold)
