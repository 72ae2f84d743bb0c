"""Input checks shared by every public entry point.

Validate at the boundary, trust inside (the scikit-learn way): each check names the argument and
what is wrong with it, and raises ``ValueError`` (bad values) or ``TypeError`` (bad types).
"""

from __future__ import annotations

import numbers
import os

import numpy as np
import scipy.sparse as sp


def check_matrix(X, name: str, *, allow_sparse: bool = True, allow_empty: bool = False):
    """Return ``X`` as a float64 2-D array (or CSR matrix) after checking shape and finiteness."""
    if sp.issparse(X):
        check_real_numbers(X, name)
        if not allow_sparse:
            raise TypeError(f"{name} must be a dense array, got a scipy.sparse matrix")
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = _numeric_array(X, name, "2-D array")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got an array with shape {X.shape}")
    if not allow_empty and (X.shape[0] == 0 or X.shape[1] == 0):
        raise ValueError(f"{name} must be non-empty, got shape {X.shape}")
    if not np.all(np.isfinite(X.data if sp.issparse(X) else X)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return X


def _numeric_array(x, name: str, kind: str, dtype=np.float64) -> np.ndarray:
    """``x`` as an array of ``dtype``; TypeError naming ``name``, a numeric ``kind``, for
    complex numbers, strings (:func:`check_real_numbers`) or anything NumPy cannot convert."""
    check_real_numbers(x, name, kind)
    try:
        return np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric {kind}: {exc}") from None


def check_fitted_matrix(estimator, X, fitted: str, fit_call: str):
    """``X`` for a fitted transformer's ``transform``: a dense matrix (:func:`check_matrix`) with
    the number of features the estimator was fitted on, the first dimension of its attribute
    ``fitted``. ValueError naming the estimator when that attribute is missing (not fitted; the
    message tells to call ``fit_call`` first) or the numbers differ."""
    what = type(estimator).__name__
    if not hasattr(estimator, fitted):
        raise ValueError(f"{what} is not fitted; call {fit_call} first")
    X = check_matrix(X, "X", allow_sparse=False)
    n_features = getattr(estimator, fitted).shape[0]
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, {what} was fitted on {n_features}")
    return X


def check_vector(v, name: str, *, length: int | None = None, dtype=np.float64,
                 nonnegative: bool = False):
    """Return ``v`` as a 1-D array of ``dtype`` after checking length, finiteness and sign."""
    v = _numeric_array(v, name, "1-D array", dtype)
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {v.shape}")
    if length is not None and v.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {v.shape[0]}")
    if np.issubdtype(v.dtype, np.floating) and not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    if nonnegative and np.any(v < 0):
        raise ValueError(f"{name} must be nonnegative; its smallest entry is {v.min()!r}")
    return v


def check_index_vector(idx, name: str, *, upper: int):
    """Return integer indices in ``[0, upper)`` as an int64 array."""
    arr = np.asarray(idx)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of indices, got shape {arr.shape}")
    whole = np.issubdtype(arr.dtype, np.integer) or (  # floats with whole values pass too
        np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr))
        and np.all(arr == np.round(arr)))
    if arr.size and not whole:
        raise TypeError(f"{name} must hold integer indices, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and (arr.min() < 0 or arr.max() >= upper):
        bad = arr[(arr < 0) | (arr >= upper)][0]
        raise ValueError(f"{name} has index {bad} outside [0, {upper})")
    return arr


def _real_scalar(x, name: str, expected: str) -> float:
    """``x`` as a float when it is a real number (not a bool, nor an array but a 0-d one);
    TypeError "``name`` must be ``expected``" otherwise."""
    if isinstance(x, bool) or not isinstance(x, (numbers.Real, np.ndarray)) \
            or (isinstance(x, np.ndarray) and x.ndim != 0):
        raise TypeError(f"{name} must be {expected}, got {type(x).__name__}")
    return float(x)


def check_scalar(x, name: str, *, nonnegative: bool = False, positive: bool = False) -> float:
    """Return a finite real scalar as float, optionally requiring ``>= 0`` or ``> 0``."""
    x = _real_scalar(x, name, "a real number")
    if not np.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x!r}")
    if positive and x <= 0:
        raise ValueError(f"{name} must be positive, got {x!r}")
    if nonnegative and x < 0:
        raise ValueError(f"{name} must be nonnegative, got {x!r}")
    return x


def check_choice(value, name: str, choices) -> str:
    """Return ``value`` if it is one of ``choices``; otherwise a ValueError listing them."""
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; expected one of {sorted(choices)}")
    return value


def check_int(x, name: str, *, minimum: int | None = None) -> int:
    """Return an integer (Python or NumPy, never bool or float) as ``int``, at least ``minimum``."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__} {x!r}")
    x = int(x)
    if minimum is not None and x < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {x}")
    return x


def check_bool(x, name: str) -> bool:
    """Return a real boolean (Python or NumPy); strings such as ``"no"`` are refused, not truthy."""
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(x).__name__} {x!r}")
    return bool(x)


def check_time_limit(x, name: str = "time_limit") -> float | None:
    """Return ``None`` (no limit) or a positive float; NaN, zero and negatives are refused.

    ``math.inf`` is accepted and means no limit, as in scipy and HiGHS.
    """
    if x is None:
        return None
    x = _real_scalar(x, name, "a positive number of seconds or None")
    if np.isnan(x) or x <= 0:
        raise ValueError(f"{name} must be a positive number of seconds or None, got {x!r}")
    return None if np.isinf(x) else x


def check_options(options: dict, name: str, allowed) -> dict:
    """Refuse option names outside ``allowed`` (a typo must not be silently ignored)."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(f"{name} got unexpected option(s) {unknown}; allowed: {sorted(allowed)}")
    return options


def check_real_numbers(x, name: str, kind: str = "array") -> None:
    """Refuse, with a TypeError, complex input (casting it to float would drop the imaginary
    part; NumPy only warns) and strings (``"{name} must be a numeric {kind}, got strings"``, the
    wording of the other array checks: NumPy would parse numeric strings such as ``"1"`` as
    numbers, so text read without conversion would pass for data)."""
    if not (sp.issparse(x) or isinstance(x, (numbers.Number, np.number))):  # not a scalar
        try:
            x = x if isinstance(x, np.ndarray) else np.asarray(x)
        except (TypeError, ValueError):
            return  # not array-like at all: the conversion that follows reports it
        if x.dtype.kind in "SU" or (
                x.dtype.kind == "O" and any(isinstance(v, (str, bytes)) for v in x.flat)):
            raise TypeError(f"{name} must be a numeric {kind}, got strings (dtype {x.dtype})")
    if np.iscomplexobj(x):
        raise TypeError(f"{name} must be real, got complex numbers")


def _dataclass_init(code) -> bool:
    """True for the ``__init__`` a dataclass generates (compiled from a string), which calls a
    container's ``__post_init__`` on the package's behalf."""
    return code.co_filename == "<string>" and code.co_name == "__init__"


def caller_stacklevel() -> int:
    """The ``stacklevel`` of a warning that points at the first caller outside this package, so
    a warning names the user's line however deep the package's call chain (decorators included)
    is, as pandas' ``find_stack_level`` does; use ``warnings.warn(..., stacklevel=
    caller_stacklevel())``."""
    import inspect
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = inspect.currentframe(), 0
    while frame is not None and (frame.f_code.co_filename.startswith(package) or
                                 _dataclass_init(frame.f_code)):
        frame, level = frame.f_back, level + 1
    return max(level, 1)

