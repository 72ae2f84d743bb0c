"""The Infinite Push (Agarwal, SDM 2011), l2 or l1 penalty, by first-order and certified methods.

Paper scaling (formulations.md sections 1 and 2)::

    P(w) = lam pen(w) + max_j (1/m) sum_i max(0, 1 - (x_i^+ - x_j^-) . w),
    pen(w) = ||w||^2 / 2 (l2)  or  ||w||_1 (l1, Rakotomamonjy, ICML 2012)

Methods (``method=``):

- ``"working_set"`` (default, l2 and l1): constraint generation over the negatives and the pairs
  near the margin, each restricted problem (proximal steps) solved exactly by a structured
  interior-point method, stopped by the full relative duality gap (:mod:`._working_set`).
  Degenerate instances (``w* = 0``) are detected up front and answered exactly
  (:mod:`infpush_cvx.degeneracy`).
- ``"fista"`` (l2): accelerated projected gradient with restart on the dual (eq. 3.9).
- ``"paper"`` (l2): the paper's gradient projection (Figure 2), ``eta_0 / sqrt(t)`` steps.
- ``"admm"`` (l1 and l2): Rakotomamonjy's ADMM (:mod:`.sparse_infinite_push`).
"""

from __future__ import annotations

import time

import numpy as np

from .._validation import check_choice, check_scalar
from ..degeneracy import check_degeneracy, separating_direction
from ..prox import project_l1inf
from . import _dual_gradient, _working_set
from ._common import finish, prepare, warm_alpha
from . import duality

METHODS = {"l2": ("working_set", "fista", "paper", "admm"), "l1": ("working_set", "admm")}
_DEFAULT_MAX_ITER = {"working_set": 200, "fista": 20000, "paper": 1000, "admm": 5000}


def _projector(lam, m):
    radius = 1.0 / (lam * m)  # C/m

    def project(V):
        return project_l1inf(V, radius, axis=0, nonneg=True, method="newton")
    return project


def degenerate_dual(data, lam, weights):
    """A feasible dual certifying ``w* = 0``: ``alpha_ij = (C/m) theta_j`` with convex weights theta
    such that ``Xn^T theta = mean(Xp)`` (then ``w(alpha) = 0`` and the dual value is the primal 1)."""
    C = 1.0 / lam
    theta = np.maximum(np.asarray(weights, dtype=float), 0.0)
    theta /= theta.sum()
    return np.broadcast_to((C / data.m) * theta[None, :], (data.m, data.n)).copy()


def infinite_push(Xp, Xn, lam, penalty="l2", scaling="paper", method="working_set", tol=1e-6,
                  max_iter=None, warm_start=None, *, eta0=None, rho=None, time_limit=None,
                  detect_degenerate=True):
    """Minimise the Infinite Push objective; returns a :class:`~.result.SolverResult`.

    Parameters
    ----------
    Xp, Xn : (m, d) and (n, d) arrays or scipy.sparse matrices (positives, negatives).
    lam : float, regularisation in ``scaling`` (converted internally to paper scaling).
    penalty : "l2" or "l1".
    scaling : "paper" or "seed" (see :mod:`infpush_cvx.scaling`).
    method : see the module docstring; unknown methods raise ValueError.
    tol : target relative duality gap (``status="optimal"`` only when it is certified).
    max_iter : iteration cap (method-specific default).
    warm_start : a previous SolverResult or dual array alpha (m x n); for ``working_set`` the
        primal w of a SolverResult (or a length-d vector) is used.
    eta0 : step scale of ``method="paper"`` (default ``1/L``, L the Lipschitz constant of grad Q).
    rho : ADMM penalty parameter.
    time_limit : seconds; the solve stops with status "time_limit" when exceeded.
    """
    t0 = time.perf_counter()
    check_choice(penalty, "penalty", tuple(METHODS))
    check_choice(method, "method", METHODS[penalty])
    data, lam_p = prepare(Xp, Xn, lam, loss="infinite_push", penalty=penalty, scaling=scaling,
                          tol=tol, max_iter=max_iter)
    if time_limit is not None:
        time_limit = check_scalar(time_limit, "time_limit", positive=True)
    max_iter = _DEFAULT_MAX_ITER[method] if max_iter is None else int(max_iter)
    common = dict(loss="infinite_push", penalty=penalty, scaling=scaling, tol=tol)

    if method == "admm":
        from .sparse_infinite_push import admm
        out = admm(data, lam_p, penalty=penalty, tol=tol, max_iter=max_iter, rho=rho,
                   alpha0=warm_alpha(data, warm_start), time_limit=time_limit)
        return finish(data, lam_p, lam, w=out["w"], alpha=out["alpha"], status=out["status"],
                      iterations=out["iterations"], t0=t0, method=method,
                      history=out["history"], info={"rho": out["rho"]}, **common)

    # the cheap separation test certifies most non-degenerate instances without the LP
    if method == "working_set" and detect_degenerate and separating_direction(data) is None:
        report = check_degeneracy(data)
        if report.degenerate:
            alpha = degenerate_dual(data, lam_p, report.weights)
            res = finish(data, lam_p, lam, w=np.zeros(data.d), alpha=alpha, status="optimal",
                         iterations=0, t0=t0, method=method,
                         history={"objective": [1.0], "gap": [], "time": []},
                         info={"degenerate": True}, **common)
            if res.status == "optimal":
                res.status = "degenerate_optimal"
            return res

    if method == "working_set":
        w0 = None
        if warm_start is not None:
            w0 = getattr(warm_start, "w", None)
            if w0 is None:
                w0 = np.asarray(warm_start, dtype=float)
                if w0.ndim == 2:
                    w0 = duality.w_of_alpha(data.Xp, data.Xn, warm_alpha(data, w0))
            if np.asarray(w0).shape != (data.d,):
                raise ValueError(f"warm_start must give a weight vector of length {data.d}")
        out = _working_set.solve(data, lam_p, loss="infinite_push", penalty=penalty, tol=tol,
                                 max_iter=max_iter, w0=w0, time_limit=time_limit)
        return finish(data, lam_p, lam, w=out["w"], alpha=out["alpha"], status=out["status"],
                      iterations=out["iterations"], t0=t0, method=method,
                      history=out["history"], info={"degenerate": False}, **common)

    project = _projector(lam_p, data.m)
    alpha0 = warm_alpha(data, warm_start)
    if method == "fista":
        out = _dual_gradient.fista(data, lam_p, project, loss="infinite_push", max_iter=max_iter,
                                   tol=tol, alpha0=alpha0, time_limit=time_limit)
        info = {"lipschitz": out["lipschitz"]}
    else:
        if eta0 is None:
            eta0 = 1.0 / duality.lipschitz_constant(data.Xp, data.Xn)
        eta0 = check_scalar(eta0, "eta0", positive=True)
        out = _dual_gradient.paper_gradient_projection(
            data, lam_p, project, loss="infinite_push", eta0=eta0, max_iter=max_iter, tol=tol,
            alpha0=alpha0, time_limit=time_limit)
        info = {"eta0": eta0}
    return finish(data, lam_p, lam, w=out["w"], alpha=out["alpha"], status=out["status"],
                  iterations=out["iterations"], t0=t0, method=method, history=out["history"],
                  info=info, **common)
