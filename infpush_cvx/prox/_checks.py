"""Boundary checks for the prox core: arrays keep float32/float64, anything else becomes float64.

The project-wide checks in :mod:`infpush_cvx._validation` convert to float64; the prox operators
must return the input dtype instead, so arrays are checked here and scalars reuse ``check_scalar``.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice, check_scalar

FLOAT_DTYPES = (np.float32, np.float64)


def check_float_array(V, name: str, *, ndim: int | None = None,
                      check_finite: bool = True) -> np.ndarray:
    """Return ``V`` as a finite float32/float64 array (other numeric dtypes become float64).

    No copy is made when ``V`` already is a float32/float64 ndarray. ``ndim=None`` accepts any
    number of dimensions. ``check_finite=False`` leaves the NaN/inf check to a caller that
    detects them in a pass it makes anyway.
    """
    try:
        arr = np.asarray(V)  # (V itself when it is an ndarray)
        if arr.dtype not in FLOAT_DTYPES:
            if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
                raise TypeError(f"dtype {arr.dtype}")
            if np.iscomplexobj(arr):
                raise TypeError("complex values")
            arr = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a real numeric array: {exc}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got an array with shape {arr.shape}")
    if check_finite and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arr


def floor_in_dtype(x, dtype) -> np.ndarray:
    """The largest values of ``dtype`` at most ``x`` (entrywise): ``x`` rounded down, so that a
    bound or a cap converted to float32 never lets a result out of its set."""
    x_t = np.asarray(x).astype(dtype)
    return np.where(x_t > x, np.nextafter(x_t, dtype.type(-np.inf)), x_t)


def check_axis(axis, name: str = "axis") -> int:
    """Return ``axis`` as 0 or 1 (negative values count from the end, as in NumPy)."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{name} must be an integer (0 or 1), got {type(axis).__name__}")
    axis = int(axis)
    if axis not in (0, 1, -1, -2):
        raise ValueError(f"{name} must be 0 or 1 for a 2-D array, got {axis}")
    return axis % 2


def check_radius(radius, name: str = "radius") -> float:
    """A finite, nonnegative real number."""
    if type(radius) is float and 0.0 <= radius < np.inf:  # the common case, without the checks
        return radius
    return check_scalar(radius, name, nonnegative=True)


__all__ = ["check_float_array", "check_axis", "check_radius", "check_choice", "check_scalar",
           "floor_in_dtype"]
