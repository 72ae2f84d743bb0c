"""The P-Norm Push (Rudin, JMLR 2009): a certified Newton solver and Rudin's boosting algorithm.

The regularised convex form (:func:`infpush_cvx.formulations.pnorm_push_problem`), paper scaling,
with ``s = Xp w``, ``t = Xn w`` and the averaging weights ``a_i = p_i / M``, ``b_j = q_j / N``
(``1/m``, ``1/n`` without sample weights)::

    P(w) = (lam/2) ||w||^2 + f(t) + g(s)
    f(t) = (1/p) log sum_j b_j exp(p t_j),      g(s) = log sum_i a_i exp(-s_i)

f + g is ``(1/p) log( sum_j b_j (sum_i a_i exp(-(s_i - t_j)))^p )``: the inner sum over the
positives factorises, so the loss is two log-sum-exps of linear functions of w, each computed
stably (shifted by its largest term). Its gradient and Hessian use the softmax weights
``sigma_j = b_j exp(p t_j) / sum`` and ``rho_i = a_i exp(-s_i) / sum``::

    grad P = lam w + Xn^T sigma - Xp^T rho
    hess P = lam I + p Xn^T (diag sigma - sigma sigma^T) Xn + Xp^T (diag rho - rho rho^T) Xp

Certificate. The conjugate of a log-sum-exp is the negative entropy on the simplex, so the
Fenchel dual of ``min P`` is, for sigma and rho in the simplices,

    D(sigma, rho) = -(1/p) KL(sigma || b) - KL(rho || a) - ||Xn^T sigma - Xp^T rho||^2 / (2 lam)

with ``KL(u || v) = sum u log(u / v)``, and ``D <= P* <= P(w)`` for every such pair. At the softmax
weights of w, Fenchel-Young holds with equality for both log-sum-exps, and the gap is exactly

    P(w) - D(sigma(w), rho(w)) = ||grad P(w)||^2 / (2 lam)

(the strong-convexity bound ``P(w) - P* <= ||grad P||^2 / (2 lam)`` is attained by this dual
point). The solver reports that gap, relative to ``|P(w)|`` (:func:`.result.relative_gap`), and
keeps the dual point (``info["sigma"]``, ``info["rho"]``, ``info["dual_value"]``), so the
certificate can be recomputed from it independently of the gradient (see the tests).

Methods (``method=``):

- ``"newton"`` (default): Newton's method with a backtracking (Armijo) line search on the d x d
  Hessian, ``O((m + n) d^2 + d^3)`` per step, from ``w = 0`` (or a warm start); the objective is
  smooth and ``lam``-strongly convex, so it converges quadratically. Stops when the certified
  relative gap is at most ``tol``.
- ``"boosting"``: Rudin's P-Norm Push algorithm ([Rudin2009], its boosting-style algorithm),
  run as in [Agarwal2011]'s experiments: the weak rankers are the features, 100 rounds
  (``max_iter``), unregularised. See :func:`_boosting` for exactly what is implemented.
  ``lam`` does not change its iterates: the result's objective, gap and status are those of the
  regularised problem at the final w (so it ends with status ``"max_iter"`` and a
  ConvergenceWarning unless that w happens to be certified), and ``history["loss"]`` holds the
  unregularised loss it minimises.
- ``"cvxpy"``: the CVXPY problem of :func:`infpush_cvx.formulations.pnorm_push_problem`, solved by
  ``solver`` (default Clarabel); its w is certified by the same gap.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from numpy.typing import ArrayLike

from infpush_cvx._logging import log_iteration, log_progress, logs_progress
from infpush_cvx._validation import (caller_stacklevel, check_choice, check_unused_options)
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.formulations._pnorm_push import check_p, log_mean_weights
from infpush_cvx.solvers.engines.common import (blas_threads_for, centred, data_first, prepare, warm_weights)
from infpush_cvx.solvers.engines.cvxpy_backend import certified_status
from infpush_cvx.solvers.engines.deadline import as_deadline
from infpush_cvx.solvers.result import SolverResult, relative_gap, warn_if_not_converged

METHODS = ("newton", "boosting", "cvxpy")
_DEFAULT_MAX_ITER = {"newton": 100, "boosting": 100, "cvxpy": 1}
#: Armijo constant and the smallest step of Newton's backtracking line search. The step can
#: be tiny and right: where the softmax weights saturate the Hessian is about ``lam I`` and a
#: Newton step overshoots by up to 1 / lam (columns of size 1e4 at lam = 1e-6 needed 1e-15;
#: stopping at 1e-10 "stalled" at a relative gap of 1e11).
_ARMIJO = 0.25
_MIN_STEP = 1e-30
#: Boosting: the largest change of the scores one round may make along a feature, when the
#: unregularised loss decreases without bound along it (the feature separates the classes);
#: exp(-50) ~ 2e-22 is below double precision relative to 1.
_MAX_SCORE_STEP = 50.0


# -- the objective, its derivatives and the certificate -------------------------------------------

def _log_sum_exp(u: np.ndarray, log_weights: np.ndarray) -> tuple[float, np.ndarray]:
    """``log sum_k exp(u_k + log_weights_k)`` and the softmax weights, shifted by the largest
    term (no overflow whatever the scale of u)."""
    v = u + log_weights
    top = float(v.max())
    e = np.exp(v - top)
    total = float(e.sum())
    return top + math.log(total), e / total


def _parts(data: BipartiteData, w: np.ndarray, p: float, logs, scores=None) -> tuple:
    """``(loss, sigma, rho, s, t)`` at w: the loss ``f(t) + g(s)`` and the softmax weights
    (``scores``: ``(s, t)`` when the caller has them)."""
    log_a, log_b = logs
    s, t = (data.Xp @ w, data.Xn @ w) if scores is None else scores
    lse_n, sigma = _log_sum_exp(p * t, log_b)
    lse_p, rho = _log_sum_exp(-s, log_a)
    return lse_n / p + lse_p, sigma, rho, s, t


def _loss_only(s: np.ndarray, t: np.ndarray, p: float, logs) -> float:
    """The loss from the scores alone (the line search's trial points)."""
    v_n, v_p = p * t + logs[1], -s + logs[0]
    top_n, top_p = float(v_n.max()), float(v_p.max())
    return (top_n + math.log(np.exp(v_n - top_n).sum())) / p \
        + top_p + math.log(np.exp(v_p - top_p).sum())


def pnorm_push_loss(data: BipartiteData, w, p: float) -> float:
    """``(1/p) log((1/N) sum_j q_j ((1/M) sum_i p_i exp(-(s_i - t_j)))^p)`` at w (paper scaling;
    M = m, N = n and unit weights without sample weights)."""
    p = check_p(p)
    w = _weights_vector(data, w)
    return float(_parts(data, w, p, log_mean_weights(data))[0])


def pnorm_push_objective(data: BipartiteData, w, lam: float, p: float) -> float:
    """``P(w) = (lam/2) ||w||^2 + pnorm_push_loss(data, w, p)``, the regularised objective."""
    w = _weights_vector(data, w)
    return float(0.5 * lam * (w @ w) + pnorm_push_loss(data, w, p))


def pnorm_push_dual(data: BipartiteData, sigma, rho, lam: float, p: float) -> float:
    """The Fenchel dual value ``D(sigma, rho)`` (module docstring), a lower bound on min P for any
    sigma, rho in the simplices (entries >= 0 summing to 1; 0 log 0 = 0)."""
    log_a, log_b = log_mean_weights(data)
    sigma, rho = np.asarray(sigma, dtype=float), np.asarray(rho, dtype=float)
    v = data.Xn.T @ sigma - data.Xp.T @ rho
    return float(-_kl(sigma, log_b) / p - _kl(rho, log_a) - (v @ v) / (2.0 * lam))


def pnorm_push_certificate(data: BipartiteData, w, lam: float, p: float) -> dict:
    """The certificate at any w: ``objective`` P(w), the dual point ``sigma``, ``rho`` (softmax
    weights at w), its value ``dual_value`` = P(w) - ``gap_abs`` with ``gap_abs`` =
    ``||grad P(w)||^2 / (2 lam)``, and ``gap``, the relative gap (module docstring)."""
    p = check_p(p)
    w = _weights_vector(data, w)
    state = _State(data, w, float(lam), p, log_mean_weights(data))
    return {"objective": float(state.objective), "dual_value": state.objective - state.gap_abs,
            "gap_abs": state.gap_abs, "gap": float(state.gap), "sigma": state.sigma,
            "rho": state.rho}


def _kl(u: np.ndarray, log_v: np.ndarray) -> float:
    nz = u > 0
    return float(np.sum(u[nz] * (np.log(u[nz]) - log_v[nz])))


def _weights_vector(data: BipartiteData, w) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64).ravel()
    if w.shape[0] != data.d:
        raise ValueError(f"w must have length d={data.d}, got {w.shape[0]}")
    return w


#: Floating-point operations of one block of the Hessian's product, between deadline checks
#: (about 0.1 s on one core).
_HESSIAN_BLOCK_FLOPS = 2e8


def _hessian(data, state, lam: float, p: float, stacked, deadline=None):
    """``lam I + p Xn^T (diag sigma - sigma sigma^T) Xn + Xp^T (diag rho - rho rho^T) Xp``, or
    None when ``deadline`` passed while it was being computed.

    Dense data: the symmetric product ``Y^T Y`` of the stacked rows scaled by the square roots
    of ``[p sigma; rho]`` (BLAS syrk; measured 0.27 ms against 0.34 ms for two general products
    at 1000 + 1000 rows and d = 50), summed over blocks of rows of about
    :data:`_HESSIAN_BLOCK_FLOPS` each with the deadline checked between them (one product at
    m + n = 10,000 and d = 1,500 took a second). Sparse data: ``X^T diag(v) X`` per block.
    """
    v = np.concatenate([p * state.sigma, state.rho])
    if stacked is not None:
        # Rows whose weight is below 1e-17 of the largest change H by less than rounding (2,000
        # of them by under 2e-14 relative); at large p most negatives' weights are that small.
        keep = v > 1e-17 * v.max()
        if keep.sum() < 0.75 * v.size:
            Y = stacked[keep] * np.sqrt(v[keep])[:, None]
        else:
            Y = stacked * np.sqrt(v)[:, None]
        rows = max(32, int(_HESSIAN_BLOCK_FLOPS / max(data.d, 1) ** 2))
        H = Y[:rows].T @ Y[:rows]
        for start in range(rows, Y.shape[0], rows):
            if deadline is not None and deadline.expired():
                return None
            H += Y[start:start + rows].T @ Y[start:start + rows]
    else:
        H = np.zeros((data.d, data.d))
        for X, u in ((data.Xn, v[:data.n]), (data.Xp, v[data.n:])):
            H += (X.T @ X.multiply(u[:, None]).tocsr()).toarray() if sp.issparse(X) \
                else X.T @ (X * u[:, None])
    xn, xp = data.Xn.T @ state.sigma, data.Xp.T @ state.rho
    H -= p * np.outer(xn, xn) + np.outer(xp, xp)
    H[np.diag_indices_from(H)] += lam
    return H


def _newton_direction(H: np.ndarray, grad: np.ndarray, lam: float) -> np.ndarray | None:
    """``-H^-1 grad`` by Cholesky, or None when H is not finite.

    H is at least ``lam I`` in exact arithmetic, but it is a Gram matrix minus the outer
    products of the weighted means, entries of the size of the columns' squares: with columns of
    sizes 1e-4 and 1e4 at lam = 1e-10 their cancellation left H indefinite to Cholesky, and the
    solve "failed". Then the eigenvalues below ``lam`` (round-off) are raised to ``lam``: the
    nearest matrix to the computed H with the bound the exact H has.
    """
    if not np.all(np.isfinite(H)):
        return None
    try:
        with warnings.catch_warnings():  # ill-conditioned at a tiny lam: the gap judges the step
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            return -scipy.linalg.solve(H, grad, assume_a="pos", check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        pass
    try:
        values, vectors = scipy.linalg.eigh(H, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None
    return -vectors @ ((vectors.T @ grad) / np.maximum(values, lam))


_BLAS = None


def _one_blas_thread(d: int):
    """:func:`._common.blas_threads_for` with the BLAS libraries looked up once per process:
    threadpoolctl's lookup reads the process's memory map, 2 ms a call, as long as a whole
    Newton solve at m = n = 1000, d = 50."""
    global _BLAS
    if d > 512:
        return blas_threads_for(d)
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController
        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


class _State:
    """Objective, gradient, softmax weights and certified gap at one w."""

    def __init__(self, data, w, lam, p, logs, scores=None):
        self.w = w
        self.loss, self.sigma, self.rho, self.s, self.t = _parts(data, w, p, logs, scores)
        self.objective = 0.5 * lam * float(w @ w) + self.loss
        self.grad = lam * w + data.Xn.T @ self.sigma - data.Xp.T @ self.rho
        self.gap_abs = float(self.grad @ self.grad) / (2.0 * lam)
        self.gap = relative_gap(self.objective, self.objective - self.gap_abs)


# -- the entry point ------------------------------------------------------------------------------

@logs_progress
@data_first
def pnorm_push(data: BipartiteData, lam: float | None = None, *,
               p: float = 1.0, method: str = "newton", tol: float = 1e-8,
               max_iter: int | None = None, warm_start: SolverResult | ArrayLike | None = None,
               wp: ArrayLike | None = None, wn: ArrayLike | None = None,
               solver: str | None = None, time_limit: float | None = None,
               verbose: bool = False) -> SolverResult:
    """Minimise the l2-regularised P-Norm Push (module docstring); a :class:`SolverResult`.

    Parameters
    ----------
    data : the :class:`~infpush_cvx.data.BipartiteData`, or the positives (m x d) and negatives
        (n x d), dense or sparse, as two arguments (``pnorm_push(Xp, Xn, lam)``).
    lam : float > 0, lambda in paper scaling (the only scaling of this problem); required.
    p : float >= 1, the exponent (1: RankBoost's loss; Agarwal 2011 compares 1, 4, 16, 64).
    method : "newton" (default, certified), "boosting" (Rudin's algorithm) or "cvxpy".
    tol : target certified relative gap ``||grad P||^2 / (2 lam |P|)`` (default 1e-8).
    max_iter : Newton steps (default 100) or boosting rounds (default 100, as in the paper).
    warm_start : a SolverResult or a weight vector to start from ("newton", "boosting").
    wp, wn : sample weights of the positives and negatives (weighted averages in the loss).
    solver : the CVXPY solver of ``method="cvxpy"`` (default "CLARABEL").
    time_limit : seconds for the whole call (:class:`._deadline.Deadline`).
    verbose : True logs a header, one line per step and a summary to stderr.

    The result's ``gap`` is the certified relative duality gap at the returned w (for every
    method), ``dual`` is None and ``info`` holds the dual point (``sigma``, ``rho``), its value
    ``dual_value``, ``p``, ``lam_paper`` and the absolute gap ``gap_abs``. A solve that stops
    before ``gap <= tol`` has an honest status and warns with a ConvergenceWarning.
    """
    deadline = as_deadline(time_limit)  # (data_first started it at the call)
    if lam is None:
        raise TypeError("lam (lambda in paper scaling) is required")
    check_choice(method, "method", METHODS)
    check_unused_options(method, {"solver": solver, "warm_start": warm_start},
                         {"solver": ("cvxpy",), "warm_start": ("newton", "boosting")})
    p = check_p(p)
    # Paper scaling only: prepare's loss and penalty serve the checks of lambda and the data.
    data, lam_p, max_iter = prepare(data, None, lam, loss="infinite_push", penalty="l2",
                                    scaling="paper", tol=tol, max_iter=max_iter, wp=wp, wn=wn)
    # f(t) + g(s) is unchanged when every score moves by the same c.w (f gains it, g loses it):
    # the same problem without the digits a column offset of 1e8 took from every score.
    data = centred(data)
    max_iter = _DEFAULT_MAX_ITER[method] if max_iter is None else max_iter
    w0 = _usable_warm_start(data, warm_weights(data, warm_start), lam_p, p)
    log_progress(f"pnorm_push {method}: {data.m} positives, {data.n} negatives, {data.d} "
                 f"features, p {p:g}, lambda {lam_p:.4g}, tol {tol:g}, max_iter {max_iter}")
    logs = log_mean_weights(data)
    with _one_blas_thread(data.d):
        if method == "newton":
            out = _newton(data, lam_p, p, logs, tol=tol, max_iter=max_iter, w0=w0,
                          deadline=deadline)
        elif method == "boosting":
            out = _boosting(data, lam_p, p, logs, max_iter=max_iter, w0=w0, deadline=deadline)
        else:
            out = _cvxpy(data, lam_p, p, solver=solver, deadline=deadline, verbose=verbose)
        w = out["w"]
        final = _State(data, w, lam_p, p, logs) if np.all(np.isfinite(w)) else None
    info = {"p": p, "lam_paper": lam_p, "scaling": "paper", **out.get("info", {})}
    if final is None:  # a CVXPY solve without a point: nothing to certify
        objective, gap = np.nan, None
    else:
        objective, gap = float(final.objective), float(final.gap)
        info.update(sigma=final.sigma, rho=final.rho,
                    dual_value=final.objective - final.gap_abs, gap_abs=final.gap_abs)
    status = certified_status(out["status"], gap, tol)
    message = out["message"]
    if method == "boosting" and status == "optimal" and out["status"] == "max_iter":
        message = ""
    elif status == "stalled" and out["status"] == "optimal" and method == "cvxpy":
        message = (f"CVXPY reported 'optimal', but the certified relative gap at its point is "
                   f"{gap:.3g}")
    result = SolverResult(w=w, objective=objective, gap=gap,
                          status=status, iterations=out["iterations"],
                          time=time.perf_counter() - deadline.start, method=method,
                          history=out["history"], dual=None, info=info,
                          message=message if status != "optimal" else "")
    warn_if_not_converged(result)
    return result


def _usable_warm_start(data, w0, lam: float, p: float):
    """``w0``, or None (start at 0) with a warning when the objective at ``w0`` is not finite
    (``np.full(d, 1e200)``: ``||w||^2`` overflows), as no step from there can be measured."""
    if w0 is None:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        value = 0.5 * lam * float(w0 @ w0) + _loss_only(data.Xp @ w0, data.Xn @ w0, p,
                                                          log_mean_weights(data))
    if np.isfinite(value):
        return w0
    warnings.warn(f"warm_start: the objective there is {value!r} (not finite); starting from "
                  f"w = 0 instead", UserWarning, stacklevel=caller_stacklevel())
    return None


def _history():
    return {"iteration": [], "objective": [], "gap": [], "time": []}


def _record(history, k, objective, gap, t0, method, **figures):
    seconds = time.perf_counter() - t0
    history["iteration"].append(k)
    history["objective"].append(float(objective))
    history["gap"].append(None if gap is None else float(gap))
    history["time"].append(seconds)
    for name, value in figures.items():
        history.setdefault(name, []).append(value)
    log_iteration(method, k, objective, gap, seconds, **figures)


def _newton(data, lam, p, logs, *, tol, max_iter, w0, deadline) -> dict:
    """Damped Newton steps until the certified relative gap is at most ``tol``."""
    w = np.zeros(data.d) if w0 is None else w0.astype(np.float64, copy=True)
    state = _State(data, w, lam, p, logs)
    history = _history()
    _record(history, 0, state.objective, state.gap, deadline.start, "newton")
    status, message, k = "max_iter", f"{max_iter} Newton steps", 0
    stacked = None if data.is_sparse else np.vstack([data.Xn, data.Xp])
    last_step = 0.0  # seconds of the last step: a step is not started that cannot end in time
    while k < max_iter:
        if state.gap <= tol:
            # the scores were updated step by step (s + step ds): the certificate is that of
            # the scores recomputed from w, and the steps go on if it does not hold
            state = _State(data, state.w, lam, p, logs)
            if state.gap <= tol:
                status, message = "optimal", ""
                break
        if deadline.expired() or deadline.remaining() < last_step:
            status, message = "time_limit", (deadline.message() if deadline.expired() else
                                             f"time limit of {deadline.limit:g} s: the next "
                                             f"Newton step (about {last_step:.2g} s) would "
                                             f"end past it")
            break
        started = time.perf_counter()
        H = _hessian(data, state, lam, p, stacked, deadline)
        if H is None or deadline.expired():  # the step's largest cost: do not solve with it
            status, message = "time_limit", deadline.message()
            break
        direction = _newton_direction(H, state.grad, lam)
        if direction is None:
            status, message = "failed", "the Newton system could not be solved"
            break
        slope = float(state.grad @ direction)
        if not slope < 0:  # round-off floor: no descent direction is left
            status, message = "stalled", "no descent direction (round-off floor)"
            break
        # Backtracking on the scores (no product with X per trial), by safeguarded quadratic
        # interpolation: large p makes the first steps overshoot by orders of magnitude.
        ds, dt = data.Xp @ direction, data.Xn @ direction
        wd, dd = float(state.w @ direction), float(direction @ direction)
        step, trials = 1.0, 0
        while True:
            trials += 1
            value = 0.5 * lam * (float(state.w @ state.w) + 2 * step * wd + step * step * dd) \
                + _loss_only(state.s + step * ds, state.t + step * dt, p, logs)
            if value <= state.objective + _ARMIJO * step * slope:
                break
            excess = value - state.objective - step * slope
            guess = -slope * step * step / (2.0 * excess) if excess > 0 else 0.5 * step
            step = min(max(guess, 0.1 * step), 0.5 * step)
            if step < _MIN_STEP:
                break
        k += 1
        if step < _MIN_STEP:
            status, message = "stalled", (f"the line search found no decrease (relative gap "
                                          f"{state.gap:.1e})")
            break
        state = _State(data, state.w + step * direction, lam, p, logs,
                       scores=(state.s + step * ds, state.t + step * dt))
        last_step = time.perf_counter() - started
        _record(history, k, state.objective, state.gap, deadline.start, "newton", step=step,
                decrement=-slope, trials=trials)
    return {"w": state.w, "status": status, "message": message, "iterations": k,
            "history": history}


def _boosting(data, lam, p, logs, *, max_iter, w0, deadline) -> dict:
    """Rudin's P-Norm Push algorithm ([Rudin2009]), with the features as weak rankers.

    Rudin minimises ``F(lambda) = sum_k (sum_i exp(-(M lambda)_ik))^p`` with
    ``M_ik,j = h_j(x_i^+) - h_j(x_k^-)`` by coordinate descent over the weak rankers h_j. Here
    ``h_j(x) = x_j`` (the features; [Agarwal2011], section 6, "individual features were used as
    weak rankers"), so ``f = X w``. Each round t:

    1. the distribution ``d_t,ik`` proportional to ``exp(-(s_i - t_k)) (sum_i' exp(-(s_i' -
       t_k)))^(p-1)``; ``(d_t^T M)_j`` is proportional to minus the j-th partial derivative of F,
       which with the factorisation above is ``-(Xn^T sigma - Xp^T rho)_j`` (softmax weights at
       the current w; the constant factor does not change the choice);
    2. the weak ranker ``j_t = argmax_j |(d_t^T M)_j|``: Rudin's argmax over the features and
       their negations ``-x_j`` (so a feature that ranks the negatives higher is used with a
       negative coefficient; the sign goes into the step);
    3. the line search: the alpha solving ``dF(lambda + alpha e_j)/dalpha = 0`` (Rudin's
       equation), found as the root of the derivative of ``log F``, a convex function of alpha
       with the same minimiser, by a bracketed, safeguarded Newton iteration to machine
       precision. When F decreases without bound along e_j (the feature separates the classes)
       the step is capped so the scores change by at most ``_MAX_SCORE_STEP`` (50) along it;
    4. ``lambda_{t+1} = lambda_t + alpha_t e_{j_t}``.

    Everything is computed in log space (log F is ``p (loss + const)``, with the loss of this
    module), so F itself never overflows even at p = 64. Sample weights enter as weighted sums.
    Each round minimises exactly along a coordinate, so the loss never increases. No penalty:
    ``lam`` is not used. Stops early only when every partial derivative is 0 (an unregularised
    stationary point).
    """
    log_a, log_b = logs
    w = np.zeros(data.d) if w0 is None else w0.astype(np.float64, copy=True)
    history = _history()
    loss, sigma, rho, s, t = _parts(data, w, p, logs)
    obj = 0.5 * lam * float(w @ w) + loss
    _record(history, 0, obj, None, deadline.start, "boosting", loss=loss)
    status, message, capped = "max_iter", f"{max_iter} boosting rounds", 0
    k = 0
    while k < max_iter:
        if deadline.expired():
            status, message = "time_limit", deadline.message()
            break
        g = data.Xn.T @ sigma - data.Xp.T @ rho
        j = int(np.argmax(np.abs(g)))
        if g[j] == 0.0:
            status, message = "stalled", "every partial derivative of the unregularised loss is 0"
            break
        xp_j = _column(data.Xp, j)
        xn_j = _column(data.Xn, j)
        alpha, hit_cap = _line_search(s, t, xp_j, xn_j, p, log_a, log_b, g[j])
        capped += hit_cap
        w[j] += alpha
        s = s + alpha * xp_j
        t = t + alpha * xn_j
        lse_n, sigma = _log_sum_exp(p * t, log_b)
        lse_p, rho = _log_sum_exp(-s, log_a)
        loss = lse_n / p + lse_p
        k += 1
        obj = 0.5 * lam * float(w @ w) + loss
        _record(history, k, obj, None, deadline.start, "boosting", loss=loss, feature=j,
                alpha=alpha)
    if capped:
        message += (f"; {capped} of the rounds took the capped step (the loss decreases without "
                    f"bound along their feature)")
    return {"w": w, "status": status, "message": message, "iterations": k, "history": history,
            "info": {"capped_rounds": capped}}


def _column(X, j: int) -> np.ndarray:
    if sp.issparse(X):
        return np.asarray(X[:, [j]].toarray()).ravel()
    return np.ascontiguousarray(X[:, j])


def _line_search(s, t, xp, xn, p, log_a, log_b, g0) -> tuple[float, bool]:
    """The minimiser alpha of ``phi(alpha) = (1/p) LSE(p (t + alpha xn) + log b)
    + LSE(-(s + alpha xp) + log a)`` (convex), and whether the step cap was taken.

    ``phi'(alpha) = sigma . xn - rho . xp``, ``phi'' = p Var_sigma(xn) + Var_rho(xp)``.
    """
    direction = -1.0 if g0 > 0 else 1.0  # phi decreases along this sign of alpha
    spread = max(float(np.ptp(xp)) if xp.size else 0.0, float(np.ptp(xn)) if xn.size else 0.0,
                 float(max(xp.max(), xn.max()) - min(xp.min(), xn.min())))
    cap = _MAX_SCORE_STEP / spread if spread > 0 else 0.0

    def derivatives(a):
        alpha = direction * a
        _, sigma = _log_sum_exp(p * (t + alpha * xn), log_b)
        _, rho = _log_sum_exp(-(s + alpha * xp), log_a)
        mn, mp = sigma @ xn, rho @ xp
        d1 = direction * (mn - mp)  # derivative in a (>= 0 direction)
        d2 = p * (sigma @ (xn - mn) ** 2) + rho @ (xp - mp) ** 2
        return d1, d2

    d1, d2 = derivatives(0.0)
    lo, hi = 0.0, None
    a = min(-d1 / d2, cap) if d2 > 0 else cap
    # bracket the root of phi' in a: [lo, hi] with phi'(lo) < 0 <= phi'(hi)
    while True:
        d1a, _ = derivatives(a)
        if d1a >= 0:
            hi = a
            break
        lo = a
        if a >= cap:
            return direction * cap, True
        a = min(2.0 * a, cap)
    # safeguarded Newton inside the bracket
    a = 0.5 * (lo + hi)
    for _ in range(100):
        d1a, d2a = derivatives(a)
        if d1a < 0:
            lo = a
        else:
            hi = a
        if d1a == 0 or hi - lo <= 1e-15 * max(1.0, abs(hi)):
            break
        step = a - d1a / d2a if d2a > 0 else None
        a = step if step is not None and lo < step < hi else 0.5 * (lo + hi)
    return direction * a, False


def _cvxpy(data, lam, p, *, solver, deadline, verbose) -> dict:
    """:func:`infpush_cvx.formulations.pnorm_push_problem` through the CVXPY backend
    (:mod:`._cvxpy_backend`: statuses, time limit); the caller certifies its w (NaN when the
    solve gave no point)."""
    from infpush_cvx.catalog.cvxpy_solvers import check_handles
    from infpush_cvx.solvers.engines import cvxpy_backend as backend

    name = check_handles(solver or "CLARABEL", "EXP").name
    size = sum(int(X.nnz) if sp.issparse(X) else int(X.size) for X in (data.Xp, data.Xn))
    out = backend.solve("infpush_cvx.formulations._pnorm_push:pnorm_push_problem",
                        (data, lam), {"p": p}, solver=name, options={}, deadline=deadline,
                        verbose=verbose, size=size)
    info = {"cvxpy_solver": name, "cvxpy_status": out.cvxpy_status, "cvxpy_value": out.value,
            "stage_times": out.info.get("stage_times"),
            "isolated": out.info.get("isolated", False)}
    if not out.has_point:
        return {"w": np.full(data.d, np.nan),
                "status": "time_limit" if out.status == "time_limit" else "failed",
                "iterations": out.iterations, "message": backend.failure_message(out, name),
                "history": _history(), "info": info}
    return {"w": out.values["w"].ravel(), "status": out.status, "iterations": out.iterations,
            "message": out.message, "history": _history(), "info": info}
