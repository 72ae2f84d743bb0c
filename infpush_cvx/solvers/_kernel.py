"""Kernel Infinite Push and RankSVM: kernel -> factor -> linear solve -> coefficients.

The RKHS problem (paper scaling, :mod:`infpush_cvx.kernels`)::

    minimise over beta   (lam/2) beta^T K beta + loss(K beta),   K = K(Z, Z),  Z = [Xp; Xn]

is the linear problem on the feature rows ``L`` of ``K = L L^T`` over ``v = L^T beta``; the
linear solver's certified gap is the RKHS problem's (same optimal value, same pair dual). The
result's ``w`` (and ``beta``) are the coefficients beta over the training rows ``[Xp; Xn]``;
``info["v"]`` the linear weights on ``L``, ``info["rank"]`` its columns, ``info["kernel"]`` (the name or the callable),
``info["gamma"]`` (resolved), ``info["degree"]``, ``info["coef0"]``, ``info["landmarks"]``
(Nystroem rows, None for the exact route) and ``info["factor_time"]`` (Gram matrix and its
factor, seconds; included in ``time``).

The papers' gradient projection in kernel form ([Agarwal2011], eqs. 3.12 to 3.14, Figures 2
and 3) works on the dual over pairs, ``Q(alpha) = 1/2 sum alpha_ij alpha_kl phi_K - sum alpha``
with ``phi_K`` the kernel of pair differences, i.e. ``Q = 1/2 beta^T K beta - sum(alpha)`` with
``beta(alpha) = [alpha 1_n; -alpha^T 1_m]`` (eq. 3.14's ``f = sum_ij alpha_ij (K(x_i^+, .) -
K(x_j^-, .))``), and gradient ``dQ/dalpha_ij = f(x_i^+) - f(x_j^-) - 1``, ``f = K beta(alpha)``. On the rows ``L`` the linear method computes
``w(alpha) = L^T beta(alpha)`` and the scores ``L w(alpha) = K beta(alpha)``: the same gradient,
the same ``Q(alpha) = 1/2 beta^T K beta - sum(alpha)``, the same Lipschitz constant (the largest
eigenvalue of the pair operator, which depends on ``K`` only), hence the same iterates; so
``method="paper"`` on ``L`` is the kernel algorithm (tests/solvers/test_kernels.py checks it
against a direct implementation with ``K``).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import scipy.sparse as sp

from ..data import BipartiteData
from ..kernels import factorise
from .result import SolverResult


def _bipartite(Xp, Xn, wp, wn) -> BipartiteData:
    """The data as the linear solvers' front reads it (same errors)."""
    if isinstance(Xp, BipartiteData):
        if Xn is not None:
            raise TypeError(f"Xn must be omitted when Xp is a BipartiteData (it holds the "
                            f"negatives), got Xn of type {type(Xn).__name__}")
        return Xp if wp is None and wn is None else BipartiteData(Xp.Xp, Xp.Xn, wp, wn)
    if Xn is None:
        raise TypeError("Xn (the negatives) is required when Xp is an array")
    return BipartiteData(Xp, Xn, wp, wn)


def training_rows(data: BipartiteData) -> np.ndarray:
    """``Z = [Xp; Xn]`` as a dense array: the rows the coefficients beta refer to."""
    parts = [X.toarray() if sp.issparse(X) else np.asarray(X) for X in (data.Xp, data.Xn)]
    return np.vstack(parts)


def _warm_start(warm_start):
    """A kernel result warm-starts the linear solve from its weights on ``L`` (same data and
    kernel give the same ``L``); anything else is passed on as it is."""
    if isinstance(warm_start, SolverResult) and "v" in warm_start.info:
        return dataclasses.replace(warm_start, w=warm_start.info["v"])
    return warm_start


def kernel_solve(linear, Xp, Xn, lam, *, kernel, gamma, degree, coef0, nystroem, seed,
                 wp, wn, warm_start, time_limit, **kwargs) -> SolverResult:
    """Solve the RKHS problem with the linear solver ``linear`` (``infinite_push`` or
    ``rank_svm``) on the factor rows; ``kwargs`` go to it unchanged."""
    t0 = time.perf_counter()
    data = _bipartite(Xp, Xn, wp, wn)
    factor = factorise(training_rows(data), kernel, gamma, degree, coef0, nystroem=nystroem,
                       seed=seed)
    factor_time = time.perf_counter() - t0
    L, m = factor.L, data.m
    if L.shape[1] == 0:  # K = 0: every f is 0; one zero column keeps the linear solver's shapes
        L = np.zeros((L.shape[0], 1))
    if time_limit is not None and np.isfinite(time_limit):
        time_limit = max(float(time_limit) - factor_time, 1e-3)
    res = linear(L[:m], L[m:], lam, wp=data.wp, wn=data.wn, warm_start=_warm_start(warm_start),
                 time_limit=time_limit, **kwargs)
    v = res.w if factor.rank else np.zeros(0)
    info = dict(res.info, v=v, rank=factor.rank, kernel=factor.kernel, gamma=factor.gamma,
                degree=factor.degree, coef0=factor.coef0, landmarks=factor.landmarks,
                factor_time=factor_time)
    return dataclasses.replace(res, w=factor.coefficients(v), info=info,
                               time=time.perf_counter() - t0)
