"""Evaluation: how good a ranking is, and the estimators and experiments that produce one.

- :mod:`.metrics`: ranking metrics (AUC, positives at the top, precision@k, AP, DCG...).
- :mod:`.query_metrics`: metrics over queries (NDCG@k, MAP, precision@k, positives at the
  top), each averaged over the queries of graded-relevance data.
- :mod:`.rankers`: scikit-learn estimators, one per model of the solvers' registry, each the one
  ranker class of :mod:`._ranker` given its model (they need the extra ``sklearn``);
  :mod:`.query_rankers`: the rankers over queries (``fit(X, y, qid=...)``: RankSVM and the
  Infinite Push over queries); :mod:`.ranker_cv`: ``RankerCV``, cross-validation along a path
  of C (``groups=``: whole queries in each fold, scored by NDCG@k).
- :mod:`.online`: Perceptron@K and its active variant.
- :mod:`.experiments`: the papers' experiments and the LETOR one (``infpush-cvx experiments``).

Nothing is imported here, so ``import infpush_cvx.evaluation.metrics`` does not load
scikit-learn.
"""
