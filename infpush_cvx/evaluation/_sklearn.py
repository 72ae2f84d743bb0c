"""scikit-learn, on which the rankers, RankerCV and the experiments are built (the ``sklearn``
extra).

Importing this module without scikit-learn raises the one ImportError that says which extra to
install; the rankers, :mod:`.ranker_cv` and the experiments import it before scikit-learn.
``import infpush_cvx`` and :mod:`infpush_cvx.evaluation.metrics` do not import it.
"""

from __future__ import annotations

try:
    import sklearn  # noqa: F401
except ImportError as error:
    raise ImportError("the rankers, RankerCV and the experiments of infpush_cvx.evaluation are "
                      "scikit-learn estimators: pip install 'infpush_cvx[sklearn]'",
                      name="sklearn") from error
