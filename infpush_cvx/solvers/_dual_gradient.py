"""Projected-gradient methods on the dual ``Q(alpha)`` (Agarwal, SDM 2011, Figures 2 and 3).

Both methods see the problem only through ``project`` (Euclidean projection onto the feasible set
Omega) and the data; the gradient ``s_i - t_j - 1`` costs O((m + n) d + m n) (duality.py).

- :func:`paper_gradient_projection`: the papers' algorithm, faithfully: alpha initialised to
  ``C/(1000 m n)``, step ``eta_0 / sqrt(t)``, projection every step, output the iterate with the
  smallest Q. It stops after ``max_iter`` steps, or earlier once the duality gap of the best iterate
  is below ``tol`` (checked every ``check_every`` steps).
- :func:`fista`: accelerated projected gradient (Beck & Teboulle 2009) with step 1/L and function
  value restart (O'Donoghue & Candes 2015), stopped by the relative duality gap.
"""

from __future__ import annotations

import time

import numpy as np

from ..objectives import bipartite_objective
from . import duality


def _gap(data, alpha, lam, loss):
    w = duality.w_of_alpha(data.Xp, data.Xn, alpha)
    p = bipartite_objective(data, w, lam, loss=loss, penalty="l2")
    d = duality.dual_value(data, alpha, lam, penalty="l2")
    return w, p, duality.relative_gap(p, d)


def paper_gradient_projection(data, lam, project, *, loss, eta0, max_iter, tol, alpha0=None,
                              check_every=10, time_limit=None):
    """Figure 2 (Infinite Push) / Figure 3 (RankSVM) of Agarwal 2011; returns a dict."""
    t0 = time.perf_counter()
    m, n = data.m, data.n
    C = 1.0 / lam
    alpha = np.full((m, n), C / (1000.0 * m * n)) if alpha0 is None else project(alpha0)
    best_q, best = np.inf, alpha
    hist = {"objective": [], "gap": [], "time": [], "Q": []}
    status, gap = "max_iter", np.inf
    for t in range(1, max_iter + 1):
        q = duality.dual_Q(data.Xp, data.Xn, alpha)
        if q < best_q:
            best_q, best = q, alpha
        grad = duality.dual_gradient(data.Xp, data.Xn, alpha)
        alpha = project(alpha - (eta0 / np.sqrt(t)) * grad)
        if t % check_every == 0 or t == max_iter:
            _, p, gap = _gap(data, best, lam, loss)
            hist["objective"].append(p)
            hist["gap"].append(gap)
            hist["time"].append(time.perf_counter() - t0)
            hist["Q"].append(best_q)
            if gap <= tol:
                status = "optimal"
                break
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                status = "time_limit"
                break
    q = duality.dual_Q(data.Xp, data.Xn, alpha)
    if q < best_q:
        best = alpha
    w, _, gap = _gap(data, best, lam, loss)
    return {"w": w, "alpha": best, "status": status, "iterations": t, "history": hist}


def fista(data, lam, project, *, loss, max_iter, tol, alpha0=None, check_every=10,
          time_limit=None):
    """Accelerated projected gradient with restart on Q, gap-certified; returns a dict."""
    t0 = time.perf_counter()
    m, n = data.m, data.n
    L = duality.lipschitz_constant(data.Xp, data.Xn)
    step = 1.0 / L
    x = project(np.zeros((m, n)) if alpha0 is None else alpha0)
    y, theta = x.copy(), 1.0
    q_prev = duality.dual_Q(data.Xp, data.Xn, x)
    hist = {"objective": [], "gap": [], "time": []}
    status, gap = "max_iter", np.inf
    for it in range(1, max_iter + 1):
        x_new = project(y - step * duality.dual_gradient(data.Xp, data.Xn, y))
        q = duality.dual_Q(data.Xp, data.Xn, x_new)
        if q > q_prev:  # restart: drop the momentum, take a plain projected step from x
            theta = 1.0
            x_new = project(x - step * duality.dual_gradient(data.Xp, data.Xn, x))
            q = duality.dual_Q(data.Xp, data.Xn, x_new)
            y = x_new
        else:
            theta_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * theta * theta))
            y = x_new + ((theta - 1.0) / theta_new) * (x_new - x)
            theta = theta_new
        x, q_prev = x_new, q
        if it % check_every == 0 or it == max_iter:
            _, p, gap = _gap(data, x, lam, loss)
            hist["objective"].append(p)
            hist["gap"].append(gap)
            hist["time"].append(time.perf_counter() - t0)
            if gap <= tol:
                status = "optimal"
                break
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                status = "time_limit"
                break
    w, _, gap = _gap(data, x, lam, loss)
    return {"w": w, "alpha": x, "status": status, "iterations": it, "history": hist,
            "lipschitz": L}
