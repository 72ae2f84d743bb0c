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

from sklearn.utils.validation import validate_data

__all__ = ["check_features"]


def check_features(estimator, X, *, reset: bool) -> None:
    """Record (``reset=True``, in ``fit``) or check ``n_features_in_`` and ``feature_names_in_``
    of ``estimator`` against ``X`` (scikit-learn's checks and messages, its values unchecked).

    Call it on a DataFrame before checking its values, as scikit-learn does (a frame with other
    columns is reported as such, not as the NaN entries pandas fills them with).
    """
    validate_data(estimator, X, reset=reset, skip_check_array=True)
