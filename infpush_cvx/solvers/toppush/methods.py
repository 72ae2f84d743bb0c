"""The methods of TopPush: the interior-point method (certified), the paper's accelerated dual
gradient, and CVXPY.

Every method ends the same way (:meth:`_TopPushMethod._solve`): its point and its dual
``(alpha, beta)``, made feasible, give the result's objective and certified gap on the problem's
data. The native methods solve without the positives of negligible weight
(:data:`NEGLIGIBLE_WEIGHT`: their ``alpha_i = 0`` is feasible) and, with
``polish=True``, refine a certified answer to the exact optimum on its active sets
(:func:`~.polish.polish`, kept only when its certified gap is smaller).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from infpush_cvx._logging import log_every, log_iteration
from infpush_cvx._validation import check_bool
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.prox.equal_sums import _project_checked as project_checked
from infpush_cvx.solvers.base import CVXPYMethod, Solver, cvxpy_message, data_size, record
from infpush_cvx.solvers.engines.common import blas_threads_for
from infpush_cvx.solvers.engines.cvxpy_backend import certified_status
from infpush_cvx.solvers.result import SolverResult, relative_gap
from infpush_cvx.solvers.toppush import ipm
from infpush_cvx.solvers.toppush.polish import polish as polish_point
from infpush_cvx.solvers.toppush.problem import (TopPushProblem, data_lipschitz, dual_objective,
                                                 dual_value, feasible_dual, positive_weights,
                                                 primal_objective, primal_value, scores,
                                                 w_of_dual)


@dataclass(frozen=True, kw_only=True)
class _TopPushMethod(Solver):
    """What the methods share: the problem, the warm start (a TopPush result), the final
    certificate and the result; each method's ``_run(problem, warm_start, dual0, deadline)``
    returns the dict of :func:`dual_agd`."""

    problem = TopPushProblem
    weights = True
    kernels = False

    def _solve(self, problem, warm_start, deadline) -> SolverResult:
        data, lam, loss = problem.solved, problem.lam_paper, problem.loss
        dual0 = _warm_dual(data, warm_start)
        self._log_start(problem, data, f" ({loss})")
        out = self._run(problem, warm_start, dual0, deadline)
        w = out["w"]
        primal = primal_objective(data, w, lam, loss) if np.all(np.isfinite(w)) else np.nan
        # (no dual: a CVXPY answer without multipliers, or no answer at all)
        dual = None if out["dual"] is None else feasible_dual(data, *out["dual"], loss)
        gap = None if dual is None else relative_gap(primal, dual_objective(data, *dual, lam, loss))
        status = certified_status(out["status"], gap, self.tol)
        info = dict(out.get("info", {}), lam_paper=lam, scaling="paper", penalty="l2", loss=loss)
        result = self._result(deadline, w=w, objective=primal, gap=gap, status=status,
                              iterations=out["iterations"], history=out["history"], dual=dual,
                              info=info, message=self._message(out, status, gap))
        if getattr(self, "polish", False) and result.converged:  # (converged: no warning)
            result = dataclasses.replace(polish_point(problem.data, lam, loss, result),
                                         time=deadline.elapsed())
        return result

    def _message(self, out, status, gap) -> str:
        return out["message"]


def _warm_dual(data: BipartiteData, warm_start):
    """The dual ``(alpha, beta)`` of a TopPush result to start from (None: none)."""
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


#: A positive whose c_i is below this fraction of the largest c changes P by less than that
#: fraction of ``c_max loss_i``, far below rounding; the native methods leave it out of their
#: solve (with ``alpha_i = 0``, a feasible multiplier) because weights spread over that many
#: orders of magnitude break their conditioning (the interior-point method stalled at a ratio of
#: 1e-100, "dual_agd" at 1e-10). The certificate is computed on every positive.
NEGLIGIBLE_WEIGHT = 2.0 ** -100


@dataclass(frozen=True, kw_only=True)
class _NativeMethod(_TopPushMethod):
    """A native method: solved on the positives of non-negligible weight; ``polish``: refine a
    certified answer on its active sets (:mod:`.polish`)."""

    polish: bool = False

    def _check(self) -> None:
        check_bool(self.polish, "polish")

    def _run(self, problem, warm_start, dual0, deadline) -> dict:
        data, lam, loss = problem.solved, problem.lam_paper, problem.loss
        c = positive_weights(data)
        keep = np.flatnonzero(c >= NEGLIGIBLE_WEIGHT * c.max())
        if keep.size == data.m:
            return self._native(data, lam, loss, warm_start, dual0, deadline)
        solved = BipartiteData(data.Xp[keep], data.Xn, data.pos_weights[keep], data.wn)
        if dual0 is not None:
            dual0 = (dual0[0][keep], dual0[1])
        out = self._native(solved, lam, loss, warm_start, dual0, deadline)
        alpha = np.zeros(data.m)
        alpha[keep] = out["dual"][0]
        out["dual"] = (alpha, out["dual"][1])
        out.setdefault("info", {})["negligible_positives"] = int(data.m - keep.size)
        return out


@dataclass(frozen=True, kw_only=True)
class InteriorPoint(_NativeMethod):
    """Mehrotra's method on the primal QP over a working set of negatives, each step certified
    by the gap on all of them (:mod:`.ipm`); on Spambase at lam = 1 it needs about 20 steps
    where ``"dual_agd"`` needs 11,000."""

    name = "interior_point"
    default_max_iter = 500

    def _native(self, data, lam, loss, warm_start, dual0, deadline) -> dict:
        w0 = None if warm_start is None else np.asarray(warm_start.w, dtype=np.float64)
        with blas_threads_for(data.d):
            return ipm.solve(data, lam, loss, tol=self.tol, max_iter=self.iterations,
                             deadline=deadline, w0=w0)


@dataclass(frozen=True, kw_only=True)
class DualAGD(_NativeMethod):
    """The paper's algorithm (section 3.2): Nesterov's accelerated projected gradient on
    ``f = -D``, whose gradient is ``(s + alpha / (2c) - 1, -t)`` at ``s = Xp w(alpha, beta)``,
    ``t = Xn w(alpha, beta)`` (the ``alpha / (2c)`` term for the truncated quadratic only),
    Lipschitz with ``L = sigma_max([Xp; Xn])^2 / lam + max_i 1/(2 c_i)``; the projection onto
    Omega is :func:`infpush_cvx.prox.equal_sums.project_equal_sums` (a 1-d root search, as the
    paper's). Differences from the authors' code, and why:

    - the step is ``1/L``, with L doubled when the sufficient decrease fails (as in the code,
      which starts at ``L = 1/m`` in its scaling and only doubles) and also lowered by 10% after
      every step, capped by the global bound above;
    - the momentum restarts when ``f`` increases (O'Donoghue & Candes, "Adaptive restart for
      accelerated gradient schemes", 2015);
    - it stops when the certified relative gap, which costs O(m + n) per step from the scores
      the gradient needs anyway, is at most ``tol``; the code stops at a 1e-4 relative change of
      ``f``, which certifies nothing;
    - the best primal point and the best dual point seen are kept, and the gap is theirs.

    Each step costs two passes over the data (``Xp^T alpha - Xn^T beta``, then ``Xp w`` and
    ``Xn w``): the scores at the extrapolated point are extrapolated themselves (they are linear
    in the dual). Starts from the dual of a warm start."""

    name = "dual_agd"
    default_max_iter = 100_000

    def _native(self, data, lam, loss, warm_start, dual0, deadline) -> dict:
        return dual_agd(data, lam, loss, tol=self.tol, max_iter=self.iterations,
                        deadline=deadline, dual0=dual0)


@dataclass(frozen=True, kw_only=True)
class CVXPY(_TopPushMethod, CVXPYMethod):
    """:func:`infpush_cvx.formulations.toppush_problem` through the CVXPY backend
    (:class:`~infpush_cvx.solvers.base.CVXPYMethod`), solved by ``solver`` (Clarabel by
    default), certified with the dual read from the constraints' multipliers: CVXPY's "optimal"
    is "optimal" only when that gap is at most ``tol``, and "unverified" when CVXPY gives no
    multipliers. A failed solve has w = NaN."""

    solver: str | None = "CLARABEL"

    builder = "infpush_cvx.formulations._toppush:toppush_problem"

    def _message(self, out, status, gap) -> str:
        return cvxpy_message(out["status"], status, gap, out["message"])

    def _run(self, problem, warm_start, dual0, deadline) -> dict:
        data, loss = problem.solved, problem.loss
        out, info = self._cvxpy((data, problem.lam_paper), {"loss": loss}, solver=self.solver,
                                options={}, deadline=deadline, size=data_size(data.Xp, data.Xn))
        w, status, message = self._answer(out, self.solver, data.d)
        beta = out.duals[0] if out.has_point else None
        alpha = out.duals[1] if out.has_point and loss == "hinge" else None
        if loss != "hinge" and beta is not None:
            # alpha_i = c_i loss'(z_i) at tau = max_j t_j: the KKT condition of the loss term
            s, _ = scores(data, w)
            alpha = 2.0 * positive_weights(data) * np.maximum(
                1.0 + float(out.values["tau"]) - s, 0.0)
        dual = None if alpha is None or beta is None else (alpha.ravel(), beta.ravel())
        return {"w": w, "dual": dual, "status": status, "iterations": out.iterations,
                "history": {}, "info": info, "message": message}


class DualState:
    """A dual point with the quantities every step needs: w, the scores, f = -D and P(w)."""

    __slots__ = ("alpha", "beta", "w", "s", "t", "f", "primal")

    def __init__(self, data, alpha, beta, c, lam, loss):
        self.alpha, self.beta = alpha, beta
        self.w = w_of_dual(data, alpha, beta, lam)
        self.s, self.t = scores(data, self.w)
        self.f = -dual_value(self.w, alpha, c, lam, loss)
        self.primal = primal_value(self.w, self.s, self.t, c, lam, loss)


def dual_agd(data, lam, loss, *, tol, max_iter, deadline, dual0) -> dict:
    """Accelerated projected gradient on ``f = -D`` over Omega, stopped by the certified gap."""
    c = positive_weights(data)
    tq = loss == "truncated_quadratic"
    u = np.empty(0) if tq else c  # the upper bound alpha <= c of the hinge
    L_data = data_lipschitz(data, deadline)
    if L_data is None:
        return {"w": np.zeros(data.d), "dual": (np.zeros(data.m), np.zeros(data.n)),
                "status": "time_limit", "iterations": 0, "history": {},
                "message": f"{deadline.message()} while the Lipschitz constant was computed"}
    L_data /= lam
    L_max = L_data + (0.5 / c.min() if tq else 0.0)
    if not np.isfinite(L_max):
        return {"w": np.zeros(data.d), "dual": (np.zeros(data.m), np.zeros(data.n)),
                "status": "failed", "iterations": 0, "history": {},
                "message": f"the Lipschitz constant of the dual gradient is {L_max!r}: the data "
                           f"are too large for float64; rescale them"}
    L_max = L_max if L_max > 0 else 1.0  # hinge on all-zero data: any step, f is linear
    if dual0 is None:
        alpha0, beta0 = np.zeros(data.m), np.zeros(data.n)
    else:
        alpha0, beta0, _ = project_checked(dual0[0], dual0[1], u, not tq, 0.0)
    x = DualState(data, alpha0, beta0, c, lam, loss)
    best_w, best_primal = x.w, x.primal
    best_dual, best_value = (x.alpha, x.beta), -x.f
    ya, yb, yw, ys, yt = x.alpha, x.beta, x.w, x.s, x.t
    theta, L, gamma = 1.0, L_max, 0.0
    hist = {}
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
            a, b, gamma = project_checked(ya - step * ga, yb - step * gb, u, not tq, gamma)
            new = DualState(data, a, b, c, lam, loss)
            if L >= L_max:
                break
            if f_y is None:
                f_y = -dual_value(yw, ya, c, lam, loss)
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
            # the scores extrapolate with the dual (they are linear in it): no pass over the data
            ya, yb, yw, ys, yt = (getattr(new, f) + mom * (getattr(new, f) - getattr(x, f))
                                  for f in ("alpha", "beta", "w", "s", "t"))
            theta = theta_new
        x = new
        L = max(0.9 * L, 1e-300)  # let the next step try a longer step
        record(hist, objective=best_primal, gap=gap, time=deadline.elapsed())
        if it % every == 0 or gap <= tol:
            log_iteration("dual_agd", it, best_primal, gap, hist["time"][-1], L=L)
        if gap <= tol:
            status = "optimal"
            break
    return {"w": best_w, "dual": best_dual, "status": status, "iterations": it, "history": hist,
            "message": message, "info": {"lipschitz": L_max}}
