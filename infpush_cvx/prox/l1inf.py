"""The mixed l1,inf norm, its dual the l_inf,1 norm, their projections and proxes.

Groups run along ``axis``: with ``axis=0`` every column is a group (the Infinite Push dual variable
alpha, m x n, has groups = negatives j = columns, max over positives i).

    ||V||_{1,inf} = sum_g max_i |v_ig|          (l1inf_norm)
    ||V||_{inf,1} = max_g sum_i |v_ig|          (linf1_norm, the dual norm of l1,inf)

Projection onto ``{P : ||P||_{1,inf} <= r}`` (Quattoni et al., ICML 2009): the solution caps
every group, ``P_ig = sign(v_ig) min(|v_ig|, mu_g)``, where the caps ``mu_g >= 0`` sum to r and
share one threshold ``theta = sum_i max(|v_ig| - mu_g, 0)`` over the groups with ``mu_g > 0``
(groups with ``sum_i |v_ig| <= theta`` get ``mu_g = 0``). Only the caps depend on the method:

- ``method="ssn"`` (the default): a semismooth Newton iteration on all caps at once (Chu et al.,
  ICML 2020), :mod:`._l1inf_ssn`; if it gives up, the sort method with a ``RuntimeWarning``.
- ``method="sort"``: Quattoni et al. (ICML 2009), sorting every group, :mod:`._l1inf_sort`.

``project_l1inf(..., return_info=True)`` also returns an :class:`L1InfInfo`: the caps, theta,
the method that computed them and the number of counting passes over V.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import check_bool
from ._checks import (check_axis, check_choice, check_float_array, check_radius, check_scalar,
                      floor_in_dtype)
from . import _l1inf_ssn as _ssn
from ._l1inf_sort import caps_sort
from .l1ball import project_l1ball

METHODS = ("ssn", "sort")


@dataclass(frozen=True)
class L1InfInfo:
    """How :func:`project_l1inf` computed its projection ``P = sign(V) min(|V|, caps)``.

    - ``caps``: the group caps ``mu_g`` (float64, one per group; the group maxima of ``|V|``,
      or of ``max(V, 0)``, when V lies in the ball, zeros when the radius is 0). The projection
      applies them rounded toward zero in V's dtype.
    - ``theta``: the threshold the caps share, ``sum_i max(|v_ig| - mu_g, 0) = theta`` for every
      group with a positive cap (0 when V lies in the ball; the largest group sum when the
      radius is 0).
    - ``method``: the method that computed the caps, ``"ssn"`` or ``"sort"``.
    - ``passes``: counting passes over V made by the semismooth Newton kernel (its statistics
      pass and output pass not counted; 0 when it did not iterate).
    - ``fallback``: True when the kernel gave up after ``MAX_PASSES`` passes and the sort method
      computed the caps (a ``RuntimeWarning`` was issued).
    """

    caps: np.ndarray
    theta: float
    method: str
    passes: int = 0
    fallback: bool = False


def l1inf_norm(V, axis=0) -> float:
    """``sum_g max_i |v_ig|``, groups along ``axis`` (``np.abs(V).max(axis=axis).sum()``)."""
    V, axis = check_float_array(V, "V", ndim=2), check_axis(axis)
    return float(np.abs(V).max(axis=axis).astype(np.float64).sum()) if V.size else 0.0


def linf1_norm(V, axis=0) -> float:
    """``max_g sum_i |v_ig|``, groups along ``axis``: the dual norm of :func:`l1inf_norm`."""
    V, axis = check_float_array(V, "V", ndim=2), check_axis(axis)
    return float(np.abs(V).astype(np.float64).sum(axis=axis).max()) if V.size else 0.0


def _magnitudes(V: np.ndarray, axis: int, nonneg: bool) -> np.ndarray:
    """``|V|`` (or ``max(V, 0)``) with the groups as columns."""
    G = V if axis == 0 else V.T
    return np.maximum(G, 0) if nonneg else np.abs(G)


def _apply_caps(V: np.ndarray, mu: np.ndarray, axis: int, nonneg: bool) -> np.ndarray:
    """``sign(v) min(|v|, mu_g)`` (or ``min(max(v, 0), mu_g)``) in V's dtype and memory order.

    The caps (nonnegative) are rounded down in V's dtype so that float32 results stay inside
    the ball.
    """
    mu_t = floor_in_dtype(mu, V.dtype)
    cap = mu_t[None, :] if axis == 0 else mu_t[:, None]
    lower = np.zeros_like(cap) if nonneg else -cap
    return np.clip(V, lower, cap)


def project_l1inf(V, radius, axis=0, nonneg=False, method="ssn", return_info=False):
    """Euclidean projection of V onto ``{P : ||P||_{1,inf} <= radius}`` (groups along ``axis``).

    With ``nonneg=True`` the set is intersected with ``{P >= 0}``; the result equals the plain
    projection of ``max(V, 0)``. This is the feasible set of the Infinite Push dual (Agarwal,
    SDM 2011, eq. 3.9: alpha >= 0, sum_j max_i alpha_ij <= C/m) with ``axis=0``.

    ``method="ssn"`` (default): sort-free semismooth Newton iteration on all group caps at
    once (Chu et al., ICML 2020), one vectorized counting pass over V per step (see
    :mod:`._l1inf_ssn`); numba-compiled, single-threaded. If it gives up after
    ``MAX_PASSES`` passes (never seen on tested inputs), the caps come from the sort method
    and a ``RuntimeWarning`` says so.
    ``method="sort"``: Quattoni et al. (ICML 2009), sorting every group, O(N log N); the clear
    reference.

    Returns a new array with V's dtype (float32 or float64; other numbers become float64), and
    with ``return_info=True`` the pair ``(P, info)``, ``info`` an :class:`L1InfInfo` (caps,
    theta, method, counting passes, fallback). Entries are rescaled by a power of two
    internally, so magnitudes up to the float range are handled without overflow.
    """
    method = check_choice(method, "method", METHODS)
    # The ssn method detects NaN/inf in the pass it makes over V anyway.
    V = check_float_array(V, "V", ndim=2, check_finite=(method != "ssn"))
    radius = check_radius(radius)
    axis = check_axis(axis)
    nonneg = check_bool(nonneg, "nonneg")
    passes, fallback = 0, False
    if V.size == 0:
        P, mu, theta = V.copy(), np.zeros(V.shape[1 - axis]), 0.0
    elif radius == 0:
        if not np.isfinite(V).all():
            raise ValueError("V contains NaN or infinite entries")
        P, mu, theta = np.zeros_like(V), None, None
    elif method == "ssn":
        P, mu, theta, passes, fallback = _project_ssn(V, radius, axis, nonneg)
    else:
        P, mu, theta = _project_sort(V, radius, axis, nonneg)
    if not return_info:
        return P
    if theta is None:                 # radius 0: every cap is 0 from the largest group sum on
        mu = np.zeros(V.shape[1 - axis])
        theta = float(_magnitudes(V, axis, nonneg).astype(np.float64).sum(axis=0).max())
    elif mu is None:                  # V lies in the ball: the caps are the group maxima
        mu = _magnitudes(V, axis, nonneg).max(axis=0).astype(np.float64)
    method = "sort" if fallback else method
    return P, L1InfInfo(caps=mu, theta=theta, method=method, passes=passes, fallback=fallback)


def _scaled_radius(radius: float, e: int) -> float:
    """``radius * 2**-e``, or ``inf`` when that overflows: a radius so much larger than every
    rescaled entry (all below 1) that the ball contains the input (its norms are at most the
    number of entries).

    Multiplying by ``2**-e`` changes no significand, so an input scaled to a largest magnitude
    in [0.5, 1) is solved exactly as given and the result scaled back: the projection is
    positively homogeneous, ``P_{c B}(c V) = c P_B(V)`` for ``c > 0``.
    """
    try:
        return math.ldexp(radius, -e)
    except OverflowError:
        return math.inf


def _project_sort(V, radius, axis, nonneg):
    """The sort method: (projection, caps or None when V lies in the ball, theta), for
    nonempty finite V and ``radius > 0``.

    The magnitudes are scaled by ``2**-e`` (exact; largest entry in [0.5, 1)) for
    :func:`._l1inf_sort.caps_sort`, and the caps and theta scaled back.
    """
    Gp = _magnitudes(V, axis, nonneg)
    vmax = float(Gp.max())
    if vmax == 0:
        return np.zeros_like(V), None, 0.0
    e = int(np.frexp(vmax)[1])
    A = np.ldexp(Gp.astype(np.float64), -e)
    r = _scaled_radius(radius, e)
    if A.max(axis=0).sum() <= r:
        return (np.maximum(V, 0) if nonneg else V.copy()), None, 0.0
    mu, theta = caps_sort(A, r)
    return _apply_caps(V, np.ldexp(mu, e), axis, nonneg), np.ldexp(mu, e), math.ldexp(theta, e)


def _project_ssn(V, radius, axis, nonneg):
    """The default method: (projection, caps or None when V lies in the ball, theta, passes,
    fallback), for nonempty V and ``radius > 0``.

    :func:`._l1inf_ssn.project` computes the caps and :func:`._l1inf_ssn.apply_caps` writes the
    projection, both reading V in place (no copy, no transpose). The kernels take a C-ordered
    matrix: an F-ordered V is passed as its transpose (a view). Magnitudes outside
    ``[2**-900, 2**900]`` are solved on a copy rescaled by a power of two (exact). If the
    iteration gives up (NO_CONVERGENCE after MAX_PASSES passes), the sort method computes the
    projection, with a RuntimeWarning.
    """
    if not V.flags.c_contiguous and not V.flags.f_contiguous:
        V = np.ascontiguousarray(V)
    transposed = not V.flags.c_contiguous
    X = V.T if transposed else V
    groups_are_rows = (axis == 0) == transposed
    mu = np.empty(X.shape[0] if groups_are_rows else X.shape[1])
    info = np.zeros(3)
    status = _ssn.project(X, groups_are_rows, nonneg, radius, mu, info)
    if status == _ssn.NOT_FINITE:
        raise ValueError("V contains NaN or infinite entries")
    e = 0
    if status == _ssn.RESCALE:
        # Solve on a copy scaled by 2**-e (exact; largest magnitude in [0.5, 1)), apply the
        # caps scaled back to V itself. With nonneg the copy is of max(X, 0): e comes from the
        # largest positive entry, and a negative entry scaled by 2**-e could overflow.
        e = int(info[2])
        Y = np.ldexp((np.maximum(X, 0) if nonneg else X).astype(np.float64), -e)
        status = _ssn.project(Y, groups_are_rows, nonneg, _scaled_radius(radius, e), mu, info)
    if status == _ssn.SOLVED:
        mu = np.ldexp(mu, e)
        out = np.empty_like(V)
        _ssn.apply_caps(X, floor_in_dtype(mu, V.dtype), groups_are_rows, nonneg,
                        out.T if transposed else out)
        return out, mu, math.ldexp(info[1], e), int(info[0]), False
    if status == _ssn.INSIDE:
        return (np.maximum(V, 0) if nonneg else V.copy()), None, 0.0, int(info[0]), False
    warnings.warn(f"project_l1inf: the semismooth Newton kernel did not converge in "
                  f"{_ssn.MAX_PASSES} passes; the projection was computed by the exact sort "
                  f"method instead", RuntimeWarning, stacklevel=3)
    return _project_sort(V, radius, axis, nonneg) + (int(info[0]), True)


def project_linf1(V, radius, axis=0):
    """Projection onto ``{P : ||P||_{inf,1} <= radius}``: every group onto the l1 ball,
    separately."""
    V = check_float_array(V, "V", ndim=2)
    radius = check_radius(radius)
    axis = check_axis(axis)
    out = np.empty_like(V)
    G, O = (V, out) if axis == 0 else (V.T, out.T)
    for g in range(G.shape[1]):
        O[:, g] = project_l1ball(G[:, g], radius)
    return out


def prox_linf1(V, tau, axis=0, method="ssn"):
    """Prox of ``tau ||.||_{inf,1}`` (``tau max_g sum_i |v_ig|``), groups along ``axis``.

    A norm's prox is the identity minus the projection onto the dual-norm ball (Moreau):
    ``prox_{tau ||.||_{inf,1}}(V) = V - P_{||.||_{1,inf} <= tau}(V)``; ``method`` is that of
    :func:`project_l1inf`.
    """
    V = check_float_array(V, "V", ndim=2)
    tau = check_scalar(tau, "tau", nonnegative=True)
    return V - project_l1inf(V, tau, axis=axis, method=method)


def prox_l1inf(V, tau, axis=0):
    """Prox of ``tau ||.||_{1,inf}`` (``tau sum_g max_i |v_ig|``), groups along ``axis``.

    By Moreau: ``prox_{tau ||.||_{1,inf}}(V) = V - P_{||.||_{inf,1} <= tau}(V)``, a per-group
    l1-ball projection.
    """
    V = check_float_array(V, "V", ndim=2)
    tau = check_scalar(tau, "tau", nonnegative=True)
    return V - project_linf1(V, tau, axis=axis)
