"""Nesterov-smoothed accelerated proximal gradient for the Rank2Plan LP ([Rank2PlanNote],
section 1.1; docs/mathematics.md, section 4.3).

With ``z_k = s_k (g_k - D_k beta)`` the hinge sum is replaced by (Nesterov 2005; Dedieu, Mazumder &
Wang, JMLR 2022, section 4, lemma 7)::

    H^tau(z) = sum_k max_{|w_k| <= 1} [ (z_k + w_k z_k) / 2 - tau w_k^2 / 2 ],
    w_k = clip(z_k / (2 tau), -1, 1),      H^0(z) - n tau / 2 <= H^tau(z) <= H^0(z),

whose gradient in beta is ``-1/2 sum_k (1 + w_k) s_k D_k`` with Lipschitz constant
``sigma_max(Xt^T Xt) / (4 tau)`` (Xt has rows ``s_k D_k``). FISTA with soft thresholding
minimises ``H^tau + lam ||beta||_1`` for a decreasing sequence of tau, warm-started, all
vectorised over pairs.

The multipliers ``pi_k = s_k (1 + w_k) / 2`` lie in [0, s]; scaled into the dual feasible set they
give a certified lower bound, so the result carries a true optimality gap even though smoothing
only reaches low accuracy.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from infpush_cvx._logging import log_every, log_iteration, progress_enabled
from infpush_cvx.prox.elementwise import soft_threshold
from infpush_cvx.solvers.base import record
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.rank2plan.ops import PairOperator
from infpush_cvx.solvers.result import SolverResult

#: Power iteration under-estimates sigma_max; the step uses a slightly larger Lipschitz constant.
_LIPSCHITZ_SAFETY = 1.05


@nb.njit(cache=True, nogil=True)
def _pair_gradient_weights(r, i, j, s, sg, tau, v):
    """Fill ``v = E^T u`` with ``u_k = -(1 + w_k) s_k / 2`` in one pass over the pairs.

    ``z_k = s_k g_k - s_k (r_j - r_i)`` and ``w_k = clip(z_k / (2 tau), -1, 1)``; the gradient of
    the smoothed hinge sum is then ``X^T v``. One fused loop instead of ~10 NumPy passes over n
    pairs.
    """
    v[:] = 0.0
    inv = 1.0 / (2.0 * tau)
    for k in range(i.shape[0]):
        z = sg[k] - s[k] * (r[j[k]] - r[i[k]])
        w = min(1.0, max(-1.0, z * inv))
        u = -0.5 * (1.0 + w) * s[k]
        v[j[k]] += u
        v[i[k]] -= u


def default_tau_schedule(op: PairOperator, n_tau: int = 6, factor: float = 0.3) -> np.ndarray:
    """tau_0 = half the mean weighted gap (the scale of z at beta = 0), shrinking by ``factor``."""
    sg = float(np.mean(op.s * op.g))
    tau0 = 0.5 * sg if sg > 0 else 0.5
    return tau0 * factor ** np.arange(n_tau)


def solve_smoothed(op: PairOperator, lam: float, *, deadline: Deadline, beta0=None, tau=None,
                   tol: float = 1e-6, max_iter: int = 2000, stage_tol: float = 1e-6,
                   record_every: int = 10) -> SolverResult:
    """Smoothed FISTA over a decreasing tau schedule; see the module docstring.

    ``tau`` is a float (one stage) or a decreasing sequence; by default
    :func:`default_tau_schedule`. Each stage stops when the relative change of beta falls below
    ``stage_tol`` or after its share of ``max_iter``. Status "optimal" if the certified relative gap
    at the end is at most ``tol``; "max_iter"/"time_limit" if a budget (``max_iter``, the
    ``deadline``) cut the schedule short; "failed" if an iterate stopped being finite (the last
    finite one is returned); otherwise "stalled" (the schedule ran to completion above ``tol``,
    as smoothing usually does).
    """
    taus = default_tau_schedule(op) if tau is None else np.atleast_1d(np.asarray(tau, float))
    sigma = max(op.sigma_max(deadline=deadline) * _LIPSCHITZ_SAFETY, 1e-300)
    beta = np.zeros(op.p) if beta0 is None else np.array(beta0, dtype=np.float64)
    history = {"iteration": [], "tau": [], "objective": [], "smoothed_objective": []}
    per_stage = max(1, max_iter // len(taus))
    status, message, it_total = "stalled", "", 0
    sg = op.s * op.g
    v = np.empty(op.N)
    every = log_every(max_iter)

    def smoothed_objective(tau_k):
        """``H^tau(z) + lam ||beta||_1`` at the current beta, and the maximiser
        ``w = clip(z / (2 tau), -1, 1)`` of H^tau."""
        z = sg - op.s * op.matvec(beta)
        w = np.clip(z / (2.0 * tau_k), -1.0, 1.0)
        h = float(np.sum(0.5 * (z + w * z) - 0.5 * tau_k * w * w))
        return h + lam * float(np.abs(beta).sum()), w

    for tau_k in taus:
        step = 4.0 * tau_k / sigma
        y, beta_prev, theta = beta.copy(), beta.copy(), 1.0
        for _ in range(per_stage):
            _pair_gradient_weights(np.asarray(op.X @ y).ravel(), op.i, op.j, op.s, sg, tau_k, v)
            grad = np.asarray(op.XT @ v).ravel()
            beta_new = soft_threshold(y - step * grad, step * lam)
            if not np.all(np.isfinite(beta_new)):
                status, message = "failed", f"a non-finite iterate at step {it_total + 1}"
                break
            # Adaptive restart (O'Donoghue & Candes 2015): drop momentum when it points uphill.
            if (y - beta_new) @ (beta_new - beta_prev) > 0:
                theta = 1.0
            theta_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * theta * theta))
            y = beta_new + ((theta - 1.0) / theta_new) * (beta_new - beta_prev)
            change = np.linalg.norm(beta_new - beta_prev)
            beta_prev, beta, theta = beta_new, beta_new, theta_new
            it_total += 1
            if record_every and it_total % record_every == 0:
                record(history, iteration=it_total, tau=float(tau_k),
                       objective=op.objective(beta, lam),
                       smoothed_objective=smoothed_objective(tau_k)[0])
            if it_total % every == 0 and progress_enabled():  # no gap: certified at the end
                log_iteration("smoothed", it_total, op.objective(beta, lam), None,
                              deadline.elapsed(), tau=float(tau_k))
            if change <= stage_tol * max(1.0, np.linalg.norm(beta)) \
                    or it_total >= max_iter or deadline.expired():
                break
        if it_total >= max_iter or deadline.expired() or status == "failed":
            break
    # One certificate at the end: the multipliers of the last smoothing level, made dual feasible.
    smoothed_obj, wb = smoothed_objective(tau_k)
    cert = op.certificate(beta, 0.5 * op.s * (1.0 + wb), lam)
    if cert["gap"] <= tol:
        status = "optimal"
    elif status == "failed":
        pass
    elif deadline.expired():
        status, message = "time_limit", deadline.message()
    elif it_total >= max_iter:
        status, message = "max_iter", f"{max_iter} gradient steps"
    else:  # every smoothing level converged: the last tau is too large for tol
        message = (f"every level of the smoothing schedule converged, with a certified gap of "
                   f"{cert['gap']:.2e} at the last (info['tau']): a smaller last tau, or "
                   f"method='ccg', reaches tol")
    tau_final = float(tau_k)
    # smoothing_bound: smoothed <= objective <= smoothed + n tau / 2 ([Rank2PlanNote], Lemma 1;
    # docs/mathematics.md, section 4.3)
    info = dict(tau=tau_final, tau_schedule=[float(t) for t in taus],
                smoothed_objective=smoothed_obj, smoothing_bound=op.n * tau_final / 2.0,
                lower_bound=cert["dual"], dual_infeasibility=cert["dual_infeasibility"],
                sigma_max=sigma / _LIPSCHITZ_SAFETY)
    return SolverResult(w=beta, objective=cert["primal"], gap=cert["gap"], status=status,
                        iterations=it_total, time=deadline.elapsed(), method="smoothed",
                        history=history, dual=cert["pi"], info=info, message=message)
