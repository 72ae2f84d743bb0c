"""TopPush (Li, Jin & Zhou, "Top Rank Optimization in Linear Time", NIPS 2014), certified.

Primal, paper scaling (eq. 4 of the paper; [Li2014] in docs/references.md), ``s = Xp w``,
``t = Xn w``, ``c_i = 1/m`` (with sample weights p of the positives: ``c_i = p_i / sum p``)::

    P(w) = (lam/2) ||w||^2 + sum_i c_i loss(max_j t_j - s_i)
    loss(z) = (1 + z)_+^2  (truncated quadratic, the paper's)   or   (1 + z)_+  (hinge)

Dual, derived in this scaling (the paper's Theorem 1 has ``alpha`` m times larger and the
objective m times larger). ``loss`` is convex and nondecreasing, so
``loss(z) = sup_{a >= 0} a z - loss*(a)`` with ``loss*(a) = a^2/4 - a`` (truncated quadratic) and
``loss*(a) = -a`` on ``[0, 1]`` (hinge). Put ``alpha_i = c_i a_i``. Since ``alpha_i >= 0``,
``alpha_i max_j t_j`` is the largest ``beta_i . t`` over ``beta_i >= 0`` with
``sum(beta_i) = alpha_i``, and the ``beta_i`` add up to one ``beta >= 0`` with
``sum(beta) = sum(alpha)``. Then ``min_w (lam/2)||w||^2 + (Xn^T beta - Xp^T alpha) . w`` is
attained at the KKT point

    w(alpha, beta) = (Xp^T alpha - Xn^T beta) / lam

and the dual, maximised over ``Omega = {alpha >= 0, beta >= 0, sum alpha = sum beta}`` (plus
``alpha_i <= c_i`` for the hinge), is::

    D(alpha, beta) = sum_i alpha_i - sum_i alpha_i^2 / (4 c_i)  [truncated quadratic only]
                     - (1 / (2 lam)) ||Xp^T alpha - Xn^T beta||^2

Weak duality ``D(alpha, beta) <= P(w)`` holds for every feasible pair and every w, so
``P(w) - D(alpha, beta)`` bounds ``P(w) - P*``: the certificate, reported as
:func:`~.result.relative_gap` (tests/solvers/test_toppush.py checks ``P* = D*`` against CVXPY).

Method ``"interior_point"`` (the default): Mehrotra's method on the primal QP over a working
set of negatives, each step certified by this gap on all of them (:mod:`._toppush_ipm`); on
Spambase at lam = 1 it needs about 20 steps where ``"dual_agd"`` needs 11,000.

Method ``"dual_agd"`` (the paper's algorithm, section 3.2): Nesterov's accelerated projected
gradient on ``f = -D``, whose gradient is ``(s + alpha / (2c) - 1, -t)`` at
``s = Xp w(alpha, beta)``, ``t = Xn w(alpha, beta)`` (the ``alpha / (2c)`` term for the truncated
quadratic only), Lipschitz with ``L = sigma_max([Xp; Xn])^2 / lam + max_i 1/(2 c_i)``; the
projection onto Omega is :func:`infpush_cvx.prox.equal_sums.project_equal_sums` (a 1-d root
search, as the paper's). Differences from the authors' code, and why:

- the step is ``1/L``, with L doubled when the sufficient decrease fails (as in the code, which
  starts at ``L = 1/m`` in its scaling and only doubles) and also lowered by 10% after every
  step, capped by the global bound above;
- the momentum restarts when ``f`` increases (O'Donoghue & Candes, "Adaptive restart for
  accelerated gradient schemes", 2015);
- it stops when the certified relative gap, which costs O(m + n) per step from the scores the
  gradient needs anyway, is at most ``tol``; the code stops at a 1e-4 relative change of
  ``f``, which certifies nothing;
- the best primal point and the best dual point seen are kept, and the gap is theirs.

Each step costs two passes over the data (``Xp^T alpha - Xn^T beta``, then ``Xp w`` and ``Xn w``):
the scores at the extrapolated point are extrapolated themselves (they are linear in the dual).
Method ``"cvxpy"`` solves :func:`infpush_cvx.formulations.toppush_problem` (Clarabel by default)
through the CVXPY backend (:mod:`._cvxpy_backend`) and certifies its answer with the dual read
from the constraints' multipliers: CVXPY's "optimal" is "optimal" only when that gap is at most
``tol``, and "unverified" when CVXPY gives no multipliers.

Sample weights spread over more than 2**100 are solved without the negligible positives and
certified with them (:data:`_NEGLIGIBLE_WEIGHT`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from numpy.typing import ArrayLike

from infpush_cvx._logging import log_every, log_iteration, log_progress, logs_progress
from infpush_cvx._validation import check_choice, check_int, check_scalar
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.prox.equal_sums import _project_checked
from infpush_cvx.solvers.toppush import ipm as _toppush_ipm
from infpush_cvx.solvers.engines.common import (blas_threads_for, centred, check_representable, data_first)
from infpush_cvx.solvers.engines.cvxpy_backend import certified_status
from infpush_cvx.solvers.engines.deadline import as_deadline
from infpush_cvx.solvers.result import SolverResult, relative_gap, warn_if_not_converged

LOSSES = ("truncated_quadratic", "hinge")
METHODS = ("interior_point", "dual_agd", "cvxpy")
_DEFAULT_MAX_ITER = {"interior_point": 500, "dual_agd": 100_000, "cvxpy": 1}


# ---- the problem: primal, dual, certificate ---------------------------------------------------
def loss_values(z: np.ndarray, loss: str) -> np.ndarray:
    """``(1 + z)_+^2`` (truncated quadratic) or ``(1 + z)_+`` (hinge), elementwise."""
    h = np.maximum(1.0 + z, 0.0)
    return h * h if loss == "truncated_quadratic" else h


def _weights(data: BipartiteData) -> np.ndarray:
    """``c_i``: ``1/m``, or ``p_i / sum p`` with sample weights (the negatives' do not enter),
    computed as ``q / sum q`` with ``q = p / max p`` so that ``sum p`` cannot overflow."""
    q = data.pos_weights / data.pos_weights.max()
    return q / q.sum()


#: A positive whose c_i is below this fraction of the largest c changes P by less than that
#: fraction of ``c_max loss_i``, far below rounding; the native methods leave it out of their
#: solve (with ``alpha_i = 0``, a feasible multiplier) because weights spread over that many
#: orders of magnitude break their conditioning (the interior-point method stalled at a ratio of
#: 1e-100, "dual_agd" at 1e-10). The certificate is computed on every positive.
_NEGLIGIBLE_WEIGHT = 2.0 ** -100


def _significant_positives(data: BipartiteData):
    """The indices of the positives the native methods solve on (None: all of them)."""
    c = _weights(data)
    keep = c >= _NEGLIGIBLE_WEIGHT * c.max()
    return None if keep.all() else np.flatnonzero(keep)


def _scores(data: BipartiteData, w: np.ndarray):
    return (np.asarray(data.Xp @ w, dtype=np.float64).ravel(),
            np.asarray(data.Xn @ w, dtype=np.float64).ravel())


def primal_objective(data: BipartiteData, w, lam: float, loss: str = "truncated_quadratic"):
    """``P(w) = (lam/2)||w||^2 + sum_i c_i loss(max_j t_j - s_i)`` (paper scaling)."""
    check_choice(loss, "loss", LOSSES)
    w = np.asarray(w, dtype=np.float64).ravel()
    s, t = _scores(data, w)
    return _primal(w, s, t, _weights(data), lam, loss)


def _primal(w, s, t, c, lam, loss) -> float:
    return float(0.5 * lam * (w @ w) + c @ loss_values(t.max() - s, loss))


def w_of_dual(data: BipartiteData, alpha, beta, lam: float) -> np.ndarray:
    """The KKT point ``w = (Xp^T alpha - Xn^T beta) / lam``."""
    v = data.Xp.T @ alpha - data.Xn.T @ beta
    return np.asarray(v, dtype=np.float64).ravel() / lam


def dual_objective(data: BipartiteData, alpha, beta, lam: float,
                   loss: str = "truncated_quadratic") -> float:
    """``D(alpha, beta)`` of the module docstring (maximised; a lower bound on P* when feasible)."""
    check_choice(loss, "loss", LOSSES)
    w = w_of_dual(data, alpha, beta, lam)
    return _dual(w, alpha, _weights(data), lam, loss)


def _dual(w, alpha, c, lam, loss) -> float:
    value = alpha.sum() - 0.5 * lam * (w @ w)
    if loss == "truncated_quadratic":
        value -= (alpha * alpha / (4.0 * c)).sum()
    return float(value)


def feasible_dual(data: BipartiteData, alpha, beta, loss: str = "truncated_quadratic"):
    """``(alpha, beta)`` made exactly feasible: clipped at 0 (and at ``c`` for the hinge), then
    the larger of the two sums scaled down to the smaller (a shrink keeps every bound)."""
    alpha = np.maximum(np.asarray(alpha, dtype=np.float64), 0.0)
    beta = np.maximum(np.asarray(beta, dtype=np.float64), 0.0)
    if loss == "hinge":
        alpha = np.minimum(alpha, _weights(data))
    sa, sb = alpha.sum(), beta.sum()
    if sa > sb:
        alpha = alpha * (sb / sa)
    elif sb > sa:
        beta = beta * (sa / sb)
    return alpha, beta


def duality_gap(data: BipartiteData, w, alpha, beta, lam: float,
                loss: str = "truncated_quadratic"):
    """``(P(w), D(alpha, beta), relative gap)`` after making ``(alpha, beta)`` feasible."""
    alpha, beta = feasible_dual(data, alpha, beta, loss)
    primal = primal_objective(data, w, lam, loss)
    dual = dual_objective(data, alpha, beta, lam, loss)
    return primal, dual, relative_gap(primal, dual)


def _certifier(data: BipartiteData, lam: float, loss: str):
    """``certify(w, s, t, alpha, beta) -> (P(w), relative gap, feasible (alpha, beta))`` from the
    scores ``s = Xp w``, ``t = Xn w`` the caller has (for the interior-point method)."""
    c = _weights(data)

    def certify(w, s, t, alpha, beta):
        alpha, beta = feasible_dual(data, alpha, beta, loss)
        primal = _primal(w, s, t, c, lam, loss)
        return primal, relative_gap(primal, _dual(w_of_dual(data, alpha, beta, lam), alpha, c,
                                                  lam, loss)), (alpha, beta)
    return certify


def data_lipschitz(data: BipartiteData) -> float:
    """``sigma_max([Xp; Xn])^2 = lambda_max(Xp^T Xp + Xn^T Xn)`` (a d x d eigenvalue)."""
    G = data.Xp.T @ data.Xp + data.Xn.T @ data.Xn
    G = G.toarray() if sp.issparse(G) else np.asarray(G)
    d = G.shape[0]
    top = scipy.linalg.eigvalsh(0.5 * (G + G.T), subset_by_index=[d - 1, d - 1])[0]
    return float(max(top, 0.0))


# ---- the solver -------------------------------------------------------------------------------
@logs_progress
@data_first
def toppush(data: BipartiteData, lam: float,
            loss: str = "truncated_quadratic", method: str = "interior_point", tol: float = 1e-6,
            max_iter: int | None = None, warm_start: SolverResult | None = None, *,
            wp: ArrayLike | None = None, time_limit: float | None = None,
            cvxpy_solver: str = "CLARABEL", verbose: bool = False) -> SolverResult:
    """Minimise the TopPush objective (module docstring); returns a :class:`SolverResult`.

    ``data``: a :class:`BipartiteData`, or the positives and negatives as two arguments
    (``toppush(Xp, Xn, lam)``); ``lam`` > 0 in paper scaling; ``loss``: "truncated_quadratic" (the
    paper's) or "hinge"; ``method``: "interior_point" (default), "dual_agd" or "cvxpy"
    (``cvxpy_solver``, Clarabel by default; a time limit is honoured as described in
    :mod:`._cvxpy_backend`). ``tol``: the certified relative duality gap at which a method
    stops (or a CVXPY answer is "optimal").
    ``warm_start``: a previous TopPush result (its dual ``(alpha, beta)`` starts "dual_agd").
    ``wp``: sample weights of the positives. The result's ``dual`` is ``(alpha, beta)``; its
    ``gap`` is certified for both methods. An early stop warns with a ConvergenceWarning.
    """
    deadline = as_deadline(time_limit)  # (data_first started it at the call)
    check_choice(loss, "loss", LOSSES)
    check_choice(method, "method", METHODS)
    if wp is not None:
        data = BipartiteData(data.Xp, data.Xn, wp, data.wn)
    # The loss sees w only through t_j - s_i, so a common shift of the rows changes nothing in
    # exact arithmetic; without it an offset of 1e4 on a column stalled the certificate at 4e-6.
    data = centred(data)
    lam = check_scalar(lam, "lam", positive=True)
    tol = check_scalar(tol, "tol", positive=True)
    max_iter = _DEFAULT_MAX_ITER[method] if max_iter is None else check_int(max_iter, "max_iter",
                                                                           minimum=1)
    check_representable(data, lam, "l2")
    dual0 = _warm_dual(data, warm_start)
    log_progress(f"toppush {method} ({loss}): {data.m} positives, {data.n} negatives, "
                 f"{data.d} features, lambda {lam:.4g}, tol {tol:g}, max_iter {max_iter}")
    if method == "cvxpy":
        out = _solve_cvxpy(data, lam, loss, cvxpy_solver, deadline, verbose)
    else:
        out = _solve_native(data, lam, loss, method, tol=tol, max_iter=max_iter,
                            deadline=deadline, warm_start=warm_start, dual0=dual0)
    w = out["w"]
    primal = primal_objective(data, w, lam, loss) if np.all(np.isfinite(w)) else np.nan
    if out["dual"] is None:  # a CVXPY answer without multipliers, or no answer at all
        dual, gap = None, None
    else:
        dual = feasible_dual(data, *out["dual"], loss)
        gap = relative_gap(primal, dual_objective(data, *dual, lam, loss))
    status = certified_status(out["status"], gap, tol)
    message = out["message"]
    if status == "unverified":
        message = "CVXPY gave no multipliers: its answer could not be certified"
    elif status == "stalled" and out["status"] == "optimal" and method == "cvxpy":
        message = (f"CVXPY reported 'optimal', but the certified relative gap at its point is "
                   f"{gap:.3g}")
    info = dict(out.get("info", {}), lam_paper=lam, scaling="paper", penalty="l2", loss=loss)
    result = SolverResult(w=w, objective=primal, gap=gap, status=status,
                          iterations=out["iterations"], time=deadline.elapsed(), method=method,
                          history=out["history"], dual=dual, info=info, message=message)
    warn_if_not_converged(result)
    return result


def _solve_native(data, lam, loss, method, *, tol, max_iter, deadline, warm_start, dual0):
    """"interior_point" or "dual_agd" on the positives of non-negligible weight
    (:data:`_NEGLIGIBLE_WEIGHT`); the dual of the others is ``alpha_i = 0``."""
    keep = _significant_positives(data)
    solved = data
    if keep is not None:
        solved = BipartiteData(data.Xp[keep], data.Xn, data.pos_weights[keep], data.wn)
        if dual0 is not None:
            dual0 = (dual0[0][keep], dual0[1])
    if method == "interior_point":
        w0 = None if warm_start is None else np.asarray(warm_start.w, dtype=np.float64)
        with blas_threads_for(solved.d):
            out = _toppush_ipm.solve(solved, lam, loss, c=_weights(solved), tol=tol,
                                     max_iter=max_iter, deadline=deadline, w0=w0,
                                     certify=_certifier(solved, lam, loss))
    else:
        out = _dual_agd(solved, lam, loss, tol=tol, max_iter=max_iter, deadline=deadline,
                        dual0=dual0)
    if keep is not None:
        alpha = np.zeros(data.m)
        alpha[keep] = out["dual"][0]
        out["dual"] = (alpha, out["dual"][1])
        out.setdefault("info", {})["negligible_positives"] = int(data.m - keep.size)
    return out


def _warm_dual(data: BipartiteData, warm_start):
    if warm_start is None:
        return None
    if not isinstance(warm_start, SolverResult):
        raise TypeError(f"warm_start must be a SolverResult of toppush or None, got "
                        f"{type(warm_start).__name__}")
    dual = warm_start.dual
    if not (isinstance(dual, tuple) and len(dual) == 2
            and np.shape(dual[0]) == (data.m,) and np.shape(dual[1]) == (data.n,)):
        raise ValueError(f"warm_start must hold a TopPush dual (alpha, beta) of lengths "
                         f"({data.m}, {data.n})")
    alpha, beta = (np.asarray(v, dtype=np.float64) for v in dual)
    if not (np.all(np.isfinite(alpha)) and np.all(np.isfinite(beta))):
        raise ValueError("warm_start contains NaN or infinite entries")
    return alpha.copy(), beta.copy()


class _State:
    """A dual point with the quantities every step needs: w, the scores, f = -D and P(w)."""

    __slots__ = ("alpha", "beta", "w", "s", "t", "f", "primal")

    def __init__(self, data, alpha, beta, c, lam, loss):
        self.alpha, self.beta = alpha, beta
        self.w = w_of_dual(data, alpha, beta, lam)
        self.s, self.t = _scores(data, self.w)
        self.f = -_dual(self.w, alpha, c, lam, loss)
        self.primal = _primal(self.w, self.s, self.t, c, lam, loss)


def _dual_agd(data, lam, loss, *, tol, max_iter, deadline, dual0) -> dict:
    """Accelerated projected gradient on ``f = -D`` over Omega, stopped by the certified gap."""
    c = _weights(data)
    tq = loss == "truncated_quadratic"
    upper = None if tq else c
    u = np.empty(0) if upper is None else upper
    L_data = data_lipschitz(data) / lam
    L_max = L_data + (0.5 / c.min() if tq else 0.0)
    if not np.isfinite(L_max):
        return {"w": np.zeros(data.d), "dual": (np.zeros(data.m), np.zeros(data.n)),
                "status": "failed", "iterations": 0, "history": _history(),
                "message": f"the Lipschitz constant of the dual gradient is {L_max!r}: the data "
                           f"are too large for float64; rescale them"}
    L_max = L_max if L_max > 0 else 1.0  # hinge on all-zero data: any step, f is linear
    if dual0 is None:
        alpha0, beta0 = np.zeros(data.m), np.zeros(data.n)
    else:
        alpha0, beta0, _ = _project_checked(dual0[0], dual0[1], u, upper is not None, 0.0)
    x = _State(data, alpha0, beta0, c, lam, loss)
    best_w, best_primal = x.w, x.primal
    best_dual, best_value = (x.alpha, x.beta), -x.f
    ya, yb, yw, ys, yt = x.alpha, x.beta, x.w, x.s, x.t
    theta, L, gamma = 1.0, L_max, 0.0
    hist = _history()
    status, message, it = "max_iter", "", 0
    every = log_every(max_iter, 1)
    for it in range(1, max_iter + 1):
        if deadline.expired():
            status, message, it = "time_limit", deadline.message(), it - 1
            break
        ga = ys - 1.0 + (ya / (2.0 * c) if tq else 0.0)
        gb = -yt
        f_y = None
        while True:  # sufficient decrease of f along the step (needs f at y: computed lazily)
            step = 1.0 / L
            a, b, gamma = _project_checked(ya - step * ga, yb - step * gb, u, upper is not None,
                                           gamma)
            new = _State(data, a, b, c, lam, loss)
            if L >= L_max:
                break
            if f_y is None:
                f_y = -_dual(yw, ya, c, lam, loss)
            da, db = a - ya, b - yb
            if new.f <= f_y + ga @ da + gb @ db + 0.5 * L * (da @ da + db @ db) * (1 + 1e-12):
                break
            L = min(2.0 * L, L_max)
        if not (np.isfinite(new.f) and np.isfinite(new.primal)):
            status, message = "failed", f"the dual objective became {new.f!r} at step {it}"
            break
        if new.primal < best_primal:
            best_w, best_primal = new.w, new.primal
        if -new.f > best_value:
            best_dual, best_value = (new.alpha, new.beta), -new.f
        gap = relative_gap(best_primal, best_value)
        if new.f > x.f:  # restart: drop the momentum
            theta = 1.0
            ya, yb, yw, ys, yt = new.alpha, new.beta, new.w, new.s, new.t
        else:
            theta_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * theta * theta))
            mom = (theta - 1.0) / theta_new
            ya = new.alpha + mom * (new.alpha - x.alpha)
            yb = new.beta + mom * (new.beta - x.beta)
            yw = new.w + mom * (new.w - x.w)
            ys = new.s + mom * (new.s - x.s)
            yt = new.t + mom * (new.t - x.t)
            theta = theta_new
        x = new
        L = max(0.9 * L, 1e-300)  # let the next step try a longer step
        hist["objective"].append(best_primal)
        hist["gap"].append(gap)
        hist["time"].append(deadline.elapsed())
        if it % every == 0 or gap <= tol:
            log_iteration("dual_agd", it, best_primal, gap, hist["time"][-1], L=L)
        if gap <= tol:
            status = "optimal"
            break
    return {"w": best_w, "dual": best_dual, "status": status, "iterations": it, "history": hist,
            "message": message, "info": {"lipschitz": L_max}}


def _history() -> dict:
    return {"objective": [], "gap": [], "time": []}


def _solve_cvxpy(data, lam, loss, solver, deadline, verbose) -> dict:
    """CVXPY on :func:`infpush_cvx.formulations.toppush_problem` through the CVXPY backend
    (:mod:`._cvxpy_backend`); the dual ``(alpha, beta)`` from its multipliers (None when CVXPY
    gave none: the answer is then "unverified"). A failed solve has w = NaN."""
    from infpush_cvx.solvers.engines import cvxpy_backend as backend

    # the builder by name: imported (with CVXPY) where the problem is built
    out = backend.solve("infpush_cvx.formulations._toppush:toppush_problem", (data, lam),
                        {"loss": loss}, solver=solver, options={}, deadline=deadline,
                        verbose=verbose, size=_size(data))
    info = {"cvxpy_status": out.cvxpy_status, "solver": out.info.get("solver", solver),
            "solve_time": out.info.get("solve_time"),
            "stage_times": out.info.get("stage_times"),
            "isolated": out.info.get("isolated", False)}
    if not out.has_point:
        return {"w": np.full(data.d, np.nan), "dual": None,
                "status": "time_limit" if out.status == "time_limit" else "failed",
                "iterations": out.iterations, "history": _history(), "info": info,
                "message": backend.failure_message(out, solver)}
    w = out.values["w"].ravel()
    beta = out.duals[0]
    alpha = out.duals[1] if loss == "hinge" else None
    if loss != "hinge" and beta is not None:
        # alpha_i = c_i loss'(z_i) at tau = max_j t_j: the KKT condition of the loss term
        s, _ = _scores(data, w)
        alpha = 2.0 * _weights(data) * np.maximum(1.0 + float(out.values["tau"]) - s, 0.0)
    dual = None if alpha is None or beta is None else (alpha.ravel(), beta.ravel())
    return {"w": w, "dual": dual, "status": out.status, "iterations": out.iterations,
            "history": _history(), "info": info, "message": out.message}


def _size(data: BipartiteData) -> int:
    """Data entries of a bipartite problem (nonzeros of Xp and Xn)."""
    return sum(int(X.nnz) if sp.issparse(X) else int(X.size) for X in (data.Xp, data.Xn))
