"""The squared-hinge RankSVM by a truncated Newton method, certified by a duality gap.

Lee & Lin, "Large-scale linear RankSVM", Neural Computation 26(4), 2014, section 3: the
objective ``P`` (:mod:`.problem`) is convex, differentiable and piecewise quadratic, with

    grad P(w) = lam w - 2 sum_ij c_ij max(0, x_ij) z_ij
    H(w) u    = lam u + 2 sum_{x_ij > 0} c_ij (z_ij . u) z_ij      (a generalised Hessian)

Every pair sum is a prefix sum of the sorted scores (:class:`.pair_sums.ActivePairs`), so a
gradient or a Hessian-vector product costs O((m + n) log(m + n) + nnz(X)). With
``hessian="cg"`` the Hessian is never formed: each Newton direction is found by conjugate
gradients stopped at a relative residual ``min(0.1, sqrt(||g|| / ||g_0||))`` (a forcing
sequence: superlinear convergence, Dembo, Eisenstat & Steihaug 1982). When the dimension is small
enough to form the Hessian (:mod:`~infpush_cvx.solvers.engines.pair_gram`: one sweep over the
sorted scores, some tens of products on a8a), it is formed at the first point and the direction
there is the exact Newton step, one Cholesky solve; at the next points its factor preconditions
the conjugate gradients (the Hessians differ only in the pairs that changed side, so they take
a few iterations instead of hundreds at small lambda), and it is formed again where they take
more than :data:`_REFORM_AFTER`. The step is found by backtracking (Armijo) along the direction,
whose trials cost no pass over the data (the scores move by ``eta Xp d``, ``eta Xn d``). Lee &
Lin use a trust region (TRON) instead of the line search; either globalises the same Newton
direction.

Stopped when the certified relative gap of :meth:`.problem.SquaredHingeRankSVMProblem.
certificate` is at most ``tol``. The deadline is looked at before every pass over the data (each
certificate, each Hessian-vector product), so a time limit is overrun by at most one of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.linalg

from infpush_cvx._logging import log_iteration
from infpush_cvx._validation import check_choice, check_int
from infpush_cvx.solvers.base import Solver, record
from infpush_cvx.solvers.engines.common import warm_weights
from infpush_cvx.solvers.engines.conjugate_gradients import cholesky, conjugate_gradients
from infpush_cvx.solvers.engines.deadline import Deadline, round_end
from infpush_cvx.solvers.engines.pair_gram import MAX_DIMENSION, PairGram, sweep_cost
from infpush_cvx.solvers.result import SolverResult
from infpush_cvx.solvers.squared_hinge_ranksvm.pair_sums import ActivePairs
from infpush_cvx.solvers.squared_hinge_ranksvm.problem import LOSS, SquaredHingeRankSVMProblem


@dataclass(frozen=True, kw_only=True)
class Newton(Solver):
    """Newton's method with a backtracking line search. ``hessian`` chooses the direction:
    ``"cg"`` conjugate gradients on Hessian-vector products from the sorted scores (truncated
    Newton; ``max_cg`` caps their iterations per step), ``"formed"`` the same preconditioned by
    the Cholesky factor of a Hessian formed from the sorted scores (the exact Newton step where
    it is formed; dimensions up to 3,000), ``"auto"`` the formed one when forming costs at most
    20 products by the count of :func:`~infpush_cvx.solvers.engines.pair_gram.sweep_cost`."""

    max_cg: int = 250
    hessian: str = "auto"

    #: ``"auto"`` forms the Hessian when that costs at most this many Hessian-vector products
    #: (a Newton step's conjugate gradients take more on a8a below lambda = 1e-3).
    formed_cost: ClassVar[float] = 20.0

    name: ClassVar[str] = "newton"
    problem: ClassVar[type] = SquaredHingeRankSVMProblem
    default_max_iter: ClassVar[int] = 100
    weights: ClassVar[bool] = True
    kernels: ClassVar[bool] = False

    def _check(self) -> None:
        check_int(self.max_cg, "max_cg", minimum=1)
        check_choice(self.hessian, "hessian", ("auto", "cg", "formed"))

    def _solve(self, problem, warm_start, deadline: Deadline) -> SolverResult:
        w0 = warm_weights(problem.data, warm_start)
        self._log_start(problem, problem.data)
        formed = self._formed(problem)
        out = _newton(problem, np.zeros(problem.data.d) if w0 is None else w0, tol=self.tol,
                      max_iter=self.iterations, max_cg=self.max_cg, formed=formed,
                      deadline=deadline)
        w = out["start"] if out["point"] is None else out["point"].w
        gap, roundoff = out.get("gap"), out.get("roundoff")
        status, message = self._judged(out["status"], gap, out["message"], roundoff)
        info = {"lam_paper": problem.lam_paper, "scaling": problem.scaling, "penalty": "l2",
                "loss": LOSS, "gap_roundoff": roundoff, "dual_value": out.get("dual"),
                "hessian": "cg" if formed is None else "formed"}
        return self._result(deadline, w=w, objective=problem.objective(w), gap=gap,
                            status=status, iterations=out["iterations"],
                            history=out["history"], info=info, message=message)

    def _formed(self, problem) -> PairGram | None:
        """The :class:`PairGram` of ``problem`` when ``hessian`` asks for it (None: CG)."""
        if self.hessian == "cg":
            return None
        if problem.data.d > MAX_DIMENSION:
            if self.hessian == "formed":
                raise ValueError(f"hessian='formed' needs d <= {MAX_DIMENSION} "
                                 f"(a d x d matrix), got d={problem.data.d}; use 'cg'")
            return None
        if self.hessian == "auto" and sweep_cost(problem.Xp, problem.Xn) > self.formed_cost:
            return None
        return PairGram(problem.Xp, problem.Xn, *problem.pair_weights)


#: A formed Hessian preconditions the conjugate gradients of the steps after it until they take
#: more than this many iterations; it is then formed again at the current point.
_REFORM_AFTER = 8


def _newton(problem, w, *, tol: float, max_iter: int, max_cg: int, formed, deadline: Deadline
            ) -> dict:
    """The Newton iterations from ``w``; the result dict of the best certified point."""
    lam = problem.lam_paper
    history = {"objective": [], "gap": [], "time": [], "cg_iterations": [], "step_size": []}
    status, message, best, it = "max_iter", f"max_iter={max_iter} Newton steps reached", None, 0
    g0, factor, cg_last = None, None, 0
    if deadline.expired():  # (the set-up took the time): the start, uncertified
        return {"point": None, "start": w, "status": "time_limit",
                "message": deadline.message(), "iterations": 0, "history": history}
    point = problem.point(w)
    for it in range(1, max_iter + 1):
        dual, gap, roundoff = problem.certificate(point)
        if best is None or gap < best[1]:
            best = (point, gap, roundoff, dual)
        record(history, objective=point.primal, gap=gap, time=deadline.elapsed())
        log_iteration("newton", it, point.primal, gap, history["time"][-1])
        end = round_end(gap, tol, deadline)
        if end is not None:
            status, message = end
            record(history, cg_iterations=0, step_size=float("nan"))
            break
        grad = lam * point.w - 2.0 * point.pairs
        g_norm = float(np.linalg.norm(grad))
        g0 = g_norm if g0 is None else g0
        forcing = min(0.1, np.sqrt(g_norm / g0)) if g0 > 0 else 0.1
        direction, cg = None, 0
        if formed is not None and (factor is None or cg_last > _REFORM_AFTER):
            factor, cg_last = _factor(problem, formed, point, deadline), 0
            if factor is None and deadline.expired():
                status, message = "time_limit", deadline.message()
                record(history, cg_iterations=0, step_size=float("nan"))
                break
            if factor is not None:  # the exact Newton step
                direction = -scipy.linalg.cho_solve(factor, grad, check_finite=False)
        if direction is None:  # CG, preconditioned by the last factor when there is one
            direction, cg = conjugate_gradients(
                lambda u: _hessian_product(problem, point.sums, u), grad, forcing * g_norm,
                max_cg, deadline, factor)
            cg_last = cg
        if direction is None:
            status, message = "time_limit", deadline.message()
            record(history, cg_iterations=cg, step_size=float("nan"))
            break
        step, moved = _line_search(problem, point, grad, direction, deadline)
        record(history, cg_iterations=cg, step_size=step)
        if moved is None:
            status, message = ("time_limit", deadline.message()) if deadline.expired() else (
                "stalled", "the line search found no decrease along the Newton direction: "
                "the gap is at the round-off of the objective")
            break
        if deadline.expired():
            status, message = "time_limit", deadline.message()
            break
        point = problem.point(moved)
    return {"point": best[0], "gap": best[1], "roundoff": best[2], "dual": best[3],
            "status": status, "message": message, "iterations": it, "history": history}


def _hessian_product(problem, sums: ActivePairs, u: np.ndarray) -> np.ndarray:
    """``H u = lam u + 2 sum_{active} c_ij (z_ij . u) z_ij`` (module docstring)."""
    a = np.asarray(problem.Xp @ u, dtype=float).ravel()
    b = np.asarray(problem.Xn @ u, dtype=float).ravel()
    row, col = sums.curvature(a, b)
    return problem.lam_paper * u + 2.0 * problem.pair_sum(row, col)


def _factor(problem, formed: PairGram, point, deadline: Deadline):
    """The Cholesky factor of ``H = lam I + 2 G`` at ``point``, ``G`` the sum over its active
    pairs (:class:`~infpush_cvx.solvers.engines.pair_gram.PairGram`); None when the deadline
    passes during the sweep or round-off leaves H not numerically positive definite."""
    G = formed.window(point.s, point.sums.v, deadline=deadline)
    if G is None:
        return None
    H = 2.0 * G
    H[np.diag_indices_from(H)] += problem.lam_paper
    return cholesky(H)


def _line_search(problem, point, grad: np.ndarray, direction: np.ndarray, deadline: Deadline):
    """``(step, w + step d)`` by backtracking from the Newton step 1 until Armijo's condition
    ``P(w + eta d) <= P(w) + 1e-4 eta grad.d`` holds; ``(step, None)`` when it fails above
    step 1e-10 (round-off) or the deadline passes. Each trial moves the scores along
    ``Xp d``, ``Xn d`` (computed once) and sorts them: no pass over the data."""
    p, q = problem.pair_weights
    ds = np.asarray(problem.Xp @ direction, dtype=float).ravel()
    dt = np.asarray(problem.Xn @ direction, dtype=float).ravel()
    slope = float(grad @ direction)
    half_lam = 0.5 * problem.lam_paper
    step = 1.0
    while step >= 1e-10 and not deadline.expired():
        w = point.w + step * direction
        value = half_lam * float(w @ w) + ActivePairs(point.s + step * ds, point.t + step * dt,
                                                       p, q).squares
        if value <= point.primal + 1e-4 * step * slope:
            return step, w
        step *= 0.5
    return step, None
