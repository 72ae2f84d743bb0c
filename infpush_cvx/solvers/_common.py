"""Shared front of the bipartite solvers: input checks, lambda conversion, result assembly."""

from __future__ import annotations

import time

import numpy as np

from .. import scaling as _scaling
from .._validation import check_choice, check_scalar
from ..data import BipartiteData
from ..objectives import bipartite_objective
from . import duality
from .implicit_dual import ImplicitDual
from .result import SolverResult, warn_if_not_converged

#: Largest m * n for which an implicit dual point is materialised as an m x n warm start.
_DENSE_DUAL_LIMIT = 50_000_000


def prepare(Xp, Xn, lam, *, loss: str, penalty: str, scaling: str, tol, max_iter, wp=None,
            wn=None):
    """Validate the inputs; return ``(data, paper lambda)``."""
    if isinstance(Xp, BipartiteData) and Xn is None:
        data = Xp
        if wp is not None or wn is not None:
            data = BipartiteData(data.Xp, data.Xn, wp, wn)
    else:
        data = BipartiteData(Xp, Xn, wp, wn)
    lam = check_scalar(lam, "lam", positive=True)
    check_choice(penalty, "penalty", _scaling.PENALTIES)
    check_choice(scaling, "scaling", _scaling.SCALINGS)
    check_scalar(tol, "tol", positive=True)
    if max_iter is not None and (isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer))
                                 or max_iter < 1):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    lam_paper = _scaling.to_paper_lambda(lam, scaling, loss=loss, penalty=penalty,
                                         m=data.wp_sum, n=data.wn_sum)
    return data, float(lam_paper)


def warm_alpha(data: BipartiteData, warm_start):
    """The m x n dual array of a warm start (a SolverResult or an array), or None."""
    if warm_start is None:
        return None
    alpha = warm_start.dual if isinstance(warm_start, SolverResult) else warm_start
    if alpha is None:
        return None
    if isinstance(alpha, ImplicitDual):
        if data.m * data.n > _DENSE_DUAL_LIMIT:
            raise ValueError(f"warm_start: the dual of a working-set result would need an "
                             f"{data.m} x {data.n} array for this method; start from its w "
                             f"with method='working_set' instead")
        alpha = alpha.to_dense()
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.shape != (data.m, data.n):
        raise ValueError(f"warm_start dual must have shape ({data.m}, {data.n}), got {alpha.shape}")
    return alpha.copy()


def blas_threads_for(d: int):
    """One BLAS thread for the certified methods' small dense algebra (d x d systems with d up
    to a few hundred): more threads do not speed these up, and OpenBLAS's spinning threads made
    a solve 30x slower when another process held one of the two cores (measured: 16 s instead
    of 0.5 s at m = n = 1000, d = 100)."""
    from contextlib import nullcontext

    if d > 512:
        return nullcontext()
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=1, user_api="blas")


def require_unweighted(data: BipartiteData, method: str) -> None:
    """The m x n first-order methods and ADMM do not take sample weights."""
    if data.weighted:
        raise ValueError(f"method={method!r} does not support sample weights (wp, wn); use "
                         f"method='working_set'")


def finish(data, lam_paper, lam_user, *, w, alpha, status, iterations, t0, method, history,
           loss, penalty, scaling, tol, info=None, gap=None, message="") -> SolverResult:
    """Assemble a SolverResult: objective recomputed from w, gap certified from (w, alpha).

    Methods that certify their own gap from an implicit dual point pass ``gap`` and ``alpha``
    (an :class:`~.implicit_dual.ImplicitDual`, kept as the result's ``dual``) themselves.
    Warns with a ConvergenceWarning when the certificate does not hold.
    """
    w = np.asarray(w, dtype=np.float64).ravel()
    if gap is not None:
        if status in ("max_iter", "stalled", "time_limit") and gap <= tol:
            status = "optimal"
    elif alpha is not None:
        alpha = duality.make_feasible(data, alpha, lam_paper, loss=loss, penalty=penalty)
        _, _, gap = duality.duality_gap(data, w, alpha, lam_paper, loss=loss, penalty=penalty)
        if status in ("max_iter", "stalled", "time_limit") and gap <= tol:
            status = "optimal"
        elif status == "optimal" and gap > tol:
            status = "stalled"
    objective = bipartite_objective(data, w, lam_user, loss=loss, penalty=penalty,
                                    scaling=scaling)
    info = dict(info or {})
    info.update(lam_paper=lam_paper, scaling=scaling, penalty=penalty, loss=loss)
    result = SolverResult(w=w, objective=objective, gap=gap, status=status,
                          iterations=iterations, time=time.perf_counter() - t0, method=method,
                          history=history, dual=alpha, info=info, message=message)
    warn_if_not_converged(result)
    return result
