"""The mixed l1,inf norm, its dual the l_inf,1 norm, their projections and proxes.

Groups run along ``axis``: with ``axis=0`` every column is a group (the Infinite Push dual variable
alpha, m x n, has groups = negatives j = columns, max over positives i).

    ||V||_{1,inf} = sum_g max_i |v_ig|          (l1inf_norm)
    ||V||_{inf,1} = max_g sum_i |v_ig|          (linf1_norm, the dual norm of l1,inf)

Projection onto ``{P : ||P||_{1,inf} <= r}`` (Quattoni et al., ICML 2009): the solution caps
every group, ``P_ig = sign(v_ig) min(|v_ig|, mu_g)``, where the caps ``mu_g >= 0`` sum to r and
share one threshold ``theta = sum_i max(|v_ig| - mu_g, 0)`` over the groups with ``mu_g > 0``
(groups with ``sum_i |v_ig| <= theta`` get ``mu_g = 0``). Only the caps depend on the method.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_axis, check_choice, check_float_array, check_radius, check_scalar
from . import _l1inf_ssn as _ssn
from ._l1inf_newton import _SIGN_MASK, apply_caps, caps_newton
from ._l1inf_sort import caps_sort
from ._pow2 import scaled_radius
from .l1ball import project_l1ball

METHODS = ("newton", "sort")


def l1inf_norm(V, axis=0) -> float:
    """``sum_g max_i |v_ig|``, groups along ``axis`` (``np.abs(V).max(axis=axis).sum()``)."""
    V = check_float_array(V, "V", ndim=2)
    axis = check_axis(axis)
    if V.size == 0:
        return 0.0
    return float(np.abs(V).max(axis=axis).astype(np.float64).sum())


def linf1_norm(V, axis=0) -> float:
    """``max_g sum_i |v_ig|``, groups along ``axis``: the dual norm of :func:`l1inf_norm`."""
    V = check_float_array(V, "V", ndim=2)
    axis = check_axis(axis)
    if V.size == 0:
        return 0.0
    return float(np.abs(V).astype(np.float64).sum(axis=axis).max())


def _groups_as_columns(V: np.ndarray, axis: int) -> np.ndarray:
    """A view of V whose columns are the groups (no copy)."""
    return V if axis == 0 else V.T


def _caps_in_dtype(mu: np.ndarray, dtype) -> np.ndarray:
    """Caps rounded toward zero in ``dtype``, so that float32 results stay inside the ball."""
    mu_t = mu.astype(dtype)
    too_big = mu_t > mu
    if np.any(too_big):
        mu_t[too_big] = np.nextafter(mu_t[too_big], dtype.type(0))
    return mu_t


def _apply_caps(V: np.ndarray, mu: np.ndarray, axis: int, nonneg: bool) -> np.ndarray:
    """``sign(v) min(|v|, mu_g)`` (or ``min(max(v, 0), mu_g)``) in V's dtype and memory order.

    The caps are rounded toward zero in V's dtype so that float32 results stay inside the ball.
    """
    mu_t = _caps_in_dtype(mu, V.dtype)
    cap = mu_t[None, :] if axis == 0 else mu_t[:, None]
    lower = np.zeros_like(cap) if nonneg else -cap
    return np.clip(V, lower, cap)


def project_l1inf(V, radius, axis=0, nonneg=False, method="newton"):
    """Euclidean projection of V onto ``{P : ||P||_{1,inf} <= radius}`` (groups along ``axis``).

    With ``nonneg=True`` the set is intersected with ``{P >= 0}``; the result equals the plain
    projection of ``max(V, 0)``. This is the feasible set of the Infinite Push dual (Agarwal,
    SDM 2011, eq. 3.9: alpha >= 0, sum_j max_i alpha_ij <= C/m) with ``axis=0``.

    ``method="newton"`` (default): sort-free semismooth Newton iteration on all group caps at
    once, one vectorized counting pass over V per step (see :mod:`._l1inf_ssn`), with the
    bracketed Newton/secant search of :mod:`._l1inf_newton` as its fallback; numba-compiled,
    single-threaded.
    ``method="sort"``: Quattoni et al. (ICML 2009), sorting every group, O(N log N); the clear
    reference.

    Returns a new array with V's dtype (float32 or float64; other numbers become float64).
    Entries are rescaled by a power of two internally, so magnitudes up to the float range are
    handled without overflow.
    """
    # The newton method detects NaN/inf in the pass it makes over V anyway.
    V = check_float_array(V, "V", ndim=2, check_finite=(method != "newton"))
    radius = check_radius(radius)
    axis = check_axis(axis)
    if not isinstance(nonneg, (bool, np.bool_)):
        raise TypeError(f"nonneg must be a bool, got {type(nonneg).__name__}")
    check_choice(method, "method", METHODS)
    if V.size == 0:
        return V.copy()
    if radius == 0:
        if not np.isfinite(V).all():
            raise ValueError("V contains NaN or infinite entries")
        return np.zeros_like(V)
    if method == "newton":
        return _project_newton(V, radius, axis, bool(nonneg))
    G = _groups_as_columns(V, axis)
    Gp = np.maximum(G, 0) if nonneg else np.abs(G)
    vmax = float(Gp.max())
    if radius == 0 or vmax == 0:
        return np.zeros_like(V)
    e = int(np.frexp(vmax)[1])                 # scale by 2**-e: exact, largest entry in [0.5, 1)
    A = np.ldexp(Gp.astype(np.float64), -e)
    r = scaled_radius(radius, e)
    if A.max(axis=0).sum() <= r:
        return np.maximum(V, 0) if nonneg else V.copy()
    mu = np.ldexp(caps_sort(A, r), e)
    return _apply_caps(V, mu, axis, bool(nonneg))


def _project_newton(V, radius, axis, nonneg):
    """The default method: :func:`._l1inf_ssn.project_ssn` computes the caps and writes the
    projection in one call, reading V in place (no copy, no transpose).

    The kernels take a C-ordered matrix: an F-ordered V is passed as its transpose (a view).
    Magnitudes outside ``[2**-900, 2**900]`` are solved on a copy rescaled by a power of two
    (exact); if the iteration gives up (MAX_PASSES), the caps come from
    :func:`._l1inf_newton.caps_newton`.
    """
    if not V.flags.c_contiguous and not V.flags.f_contiguous:
        V = np.ascontiguousarray(V)
    transposed = not V.flags.c_contiguous
    X = V.T if transposed else V
    groups_are_rows = (axis == 0) == transposed
    itype, mask = _SIGN_MASK[X.dtype]
    out = np.empty_like(V)
    Xout = out.T if transposed else out
    mu = np.empty(X.shape[0] if groups_are_rows else X.shape[1])
    info = np.zeros(3)
    status = _ssn.project_ssn(X, X.view(itype), mask, groups_are_rows, nonneg, radius, mu,
                              Xout, info)
    if status == _ssn.SOLVED:
        return out
    if status == _ssn.NOT_FINITE:
        raise ValueError("V contains NaN or infinite entries")
    if status == _ssn.RESCALE:
        # Solve on a copy scaled by 2**-e (exact; largest magnitude in [0.5, 1)), apply the
        # caps scaled back to V itself.
        e = int(info[2])
        Y = np.ldexp(X.astype(np.float64), -e)
        status = _ssn.project_ssn(Y, Y.view(np.int64), _SIGN_MASK[Y.dtype][1],
                                  groups_are_rows, nonneg, scaled_radius(radius, e), mu,
                                  np.empty((0, 0)), info)
        if status == _ssn.SOLVED:
            mu = np.ldexp(mu, e)
    if status == _ssn.INSIDE:
        return np.maximum(V, 0) if nonneg else V.copy()
    if status != _ssn.SOLVED:                 # NO_CONVERGENCE: the candidate-window search
        mu = caps_newton(X, groups_are_rows, nonneg, radius)
        if mu is None:
            return np.maximum(V, 0) if nonneg else V.copy()
    apply_caps(X, _caps_in_dtype(mu, V.dtype), groups_are_rows, nonneg, Xout)
    return out


def project_linf1(V, radius, axis=0):
    """Projection onto ``{P : ||P||_{inf,1} <= radius}``: every group onto the l1 ball, separately."""
    V = check_float_array(V, "V", ndim=2)
    radius = check_radius(radius)
    axis = check_axis(axis)
    out = np.empty_like(V)
    G, O = _groups_as_columns(V, axis), _groups_as_columns(out, axis)
    for g in range(G.shape[1]):
        O[:, g] = project_l1ball(G[:, g], radius)
    return out


def prox_linf1(V, tau, axis=0, method="sort"):
    """Prox of ``tau ||.||_{inf,1}`` (``tau max_g sum_i |v_ig|``), groups along ``axis``.

    A norm's prox is the identity minus the projection onto the dual-norm ball (Moreau):
    ``prox_{tau ||.||_{inf,1}}(V) = V - P_{||.||_{1,inf} <= tau}(V)``.
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
