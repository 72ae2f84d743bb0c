"""scikit-learn as an optional extra: the estimator base classes and the input-feature checks.

With scikit-learn installed, :data:`BaseEstimator` and :data:`ClassifierMixin` are scikit-learn's
own, and :func:`check_features` uses scikit-learn's checks (``validate_data(...,
skip_check_array=True)`` from version 1.6, the ``BaseEstimator`` methods before). Without it, small
stand-ins keep the same contract, so the package imports and the rankers fit without it:

- ``get_params`` / ``set_params`` read the parameters from the ``__init__`` signature;
- ``n_features_in_`` is the number of columns seen in ``fit``, and ``feature_names_in_`` their
  names when X has string column names (a pandas DataFrame); at prediction time X must have the
  same number of columns (ValueError naming X) and, when fitted with names, the same names in the
  same order (ValueError listing the unseen and missing names); a UserWarning when only one of
  the two has names.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

try:  # scikit-learn is optional
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
    from sklearn.exceptions import DataConversionWarning, NotFittedError
    HAVE_SKLEARN = True
except ImportError:  # pragma: no cover - exercised only without sklearn
    HAVE_SKLEARN = False

    class BaseEstimator:
        """get_params / set_params from the __init__ signature (the sklearn contract)."""

        @classmethod
        def _get_param_names(cls):
            sig = inspect.signature(cls.__init__)
            return sorted(p for p in sig.parameters if p != "self")

        def get_params(self, deep=True):
            return {k: getattr(self, k) for k in self._get_param_names()}

        def set_params(self, **params):
            valid = self._get_param_names()
            for k, v in params.items():
                if k not in valid:
                    raise ValueError(f"invalid parameter {k!r} for {type(self).__name__}")
                setattr(self, k, v)
            return self

    class ClassifierMixin:
        """Marks a classifier for scikit-learn versions that read ``_estimator_type``."""

        _estimator_type = "classifier"

    class NotFittedError(ValueError, AttributeError):
        """An estimator used before ``fit`` (scikit-learn's exception, without scikit-learn)."""

    class DataConversionWarning(UserWarning):
        """Input converted to the expected shape (scikit-learn's warning, without it)."""

    class SklearnConvergenceWarning(UserWarning):
        """scikit-learn's ConvergenceWarning, without scikit-learn."""

try:  # scikit-learn >= 1.6: the public checks of X against the fitted estimator
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # older scikit-learn, or none
    _validate_data = None

__all__ = ["HAVE_SKLEARN", "BaseEstimator", "ClassifierMixin", "DataConversionWarning",
           "NotFittedError", "SklearnConvergenceWarning", "check_features",
           "string_column_names"]


def string_column_names(X):
    """The column names of a DataFrame-like ``X`` as an object array, when all are strings.

    None when ``X`` has no ``columns`` or some name is not a string (scikit-learn then records no
    names either, and raises TypeError for a mix of string and other names).
    """
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = np.asarray(list(columns), dtype=object)
    if names.ndim != 1 or names.size == 0 or not all(isinstance(n, str) for n in names):
        return None
    return names


def check_features(estimator, X, *, reset: bool) -> None:
    """Record (``reset=True``, in ``fit``) or check ``n_features_in_`` and ``feature_names_in_``.

    ``X``: a DataFrame-like (its column names are read) or a validated 2-D array. ValueError when
    the number of columns or the names differ from those seen in ``fit``. Call it on a DataFrame
    before checking its values, as scikit-learn does (a frame with other columns is reported as
    such, not as the NaN entries pandas fills them with).
    """
    if _validate_data is not None:
        _validate_data(estimator, X, reset=reset, skip_check_array=True)
    elif HAVE_SKLEARN:  # pragma: no cover - scikit-learn 1.3 to 1.5
        estimator._check_feature_names(X, reset=reset)
        estimator._check_n_features(X, reset=reset)
    else:  # pragma: no cover - without scikit-learn
        _check_features_without_sklearn(estimator, X, reset=reset)


def _check_features_without_sklearn(estimator, X, *, reset: bool) -> None:
    """scikit-learn's feature checks (same messages), for use without scikit-learn."""
    names = string_column_names(X)
    n_features = X.shape[1]
    owner = type(estimator).__name__
    if reset:
        estimator.n_features_in_ = n_features
        if names is not None:
            estimator.feature_names_in_ = names
        elif hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_  # refitted on data without names
        return
    fitted = getattr(estimator, "feature_names_in_", None)
    if names is not None and fitted is None:
        warnings.warn(f"X has feature names, but {owner} was fitted without feature names",
                      UserWarning, stacklevel=3)
    elif names is None and fitted is not None:
        warnings.warn(f"X does not have valid feature names, but {owner} was fitted with "
                      f"feature names", UserWarning, stacklevel=3)
    elif names is not None and (len(names) != len(fitted) or np.any(names != fitted)):
        unseen = sorted(set(names) - set(fitted))
        missing = sorted(set(fitted) - set(names))
        message = "The feature names should match those that were passed during fit.\n"
        if unseen:
            message += "Feature names unseen at fit time:\n" + _listed(unseen)
        if missing:
            message += "Feature names seen at fit time, yet now missing:\n" + _listed(missing)
        if not unseen and not missing:
            message += "Feature names must be in the same order as they were in fit.\n"
        raise ValueError(message)
    if n_features != estimator.n_features_in_:
        raise ValueError(f"X has {n_features} features, but {owner} is expecting "
                         f"{estimator.n_features_in_} features as input.")


def _listed(names, limit: int = 5) -> str:
    shown = [f"- {n}\n" for n in names[:limit]]
    return "".join(shown) + ("- ...\n" if len(names) > limit else "")
