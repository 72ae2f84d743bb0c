"""RankSVM over queries by Newton's method, certified by a duality gap.

Both losses are piecewise quadratic or smoothed to be (:mod:`.problem`)::

    squared hinge:  grad P = lam w - 2 sum c_ij max(0, x_ij) z_ij,
                    H u    = lam u + 2 sum_{x_ij > 0} c_ij (z_ij . u) z_ij
    hinge (h_mu):   grad F_mu = lam w - sum c_ij a(x_ij) z_ij,
                    H u       = lam u + (1/mu) sum_{|x_ij| < mu/2} c_ij (z_ij . u) z_ij

(Lee & Lin, "Large-scale linear RankSVM", Neural Computation 2014, for the squared hinge; for
the hinge the bipartite smoothing Newton method of :mod:`infpush_cvx.solvers.ranksvm.newton`:
the Huber-smoothed hinge, mu divided by 10 once Newton's decrement on F_mu is small beside the
gap, certified by the hinge's duality gap at ``alpha = c a(x)``; before mu is decreased, the
pairs of the band are solved exactly where they are few: :meth:`.problem.QueryRankSVMProblem.
polished`.) Every sum is a per-query sum of the sorted scores
(:mod:`infpush_cvx.solvers.engines.query_pairs`).

The direction: where the dimension allows (``hessian="auto"`` or ``"formed"``), the Hessian is
formed (:meth:`.problem.QueryRankSVMProblem.hessian`, no pair formed) and the step there is the
exact Newton step; at the next points its Cholesky factor preconditions conjugate gradients on
Hessian-vector products, and it is formed again where they take more than :data:`_REFORM_AFTER`
iterations (or mu changed), as the bipartite squared-hinge Newton method does. With
``hessian="cg"`` the conjugate gradients are unpreconditioned (a forcing sequence
``min(0.1, sqrt(||g|| / ||g_0||))``: Dembo, Eisenstat & Steihaug 1982). The step: backtracking
(Armijo) along the direction for the squared hinge, the minimiser along it for the smoothed
hinge (its trials move the scores by ``eta X d``: no pass over X).

Stopped when the certified relative gap is at most ``tol``. The deadline is looked at before
every pass over the data (each certificate, each product, each block of the Hessian, each
trial), so a time limit is overrun by at most one of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.linalg

from infpush_cvx._logging import log_iteration, log_progress
from infpush_cvx._validation import check_choice, check_int, check_scalar
from infpush_cvx.solvers.base import Solver, record
from infpush_cvx.solvers.engines.conjugate_gradients import cholesky, conjugate_gradients
from infpush_cvx.solvers.engines.deadline import Deadline, round_end
from infpush_cvx.solvers.query_ranksvm.problem import QueryRankSVMProblem
from infpush_cvx.solvers.result import SolverResult

#: A formed Hessian preconditions the conjugate gradients of the next steps until they take more
#: than this many iterations; it is then formed again.
_REFORM_AFTER = 8
#: ``hessian="auto"`` forms the Hessian up to this dimension (d x d, a Cholesky factor).
MAX_DIMENSION = 3000
#: The smoothing is divided by up to this once the gradient's part of the gap,
#: ``||grad F_mu||^2 / (2 lam)``, is at most :data:`_SMOOTHING_SHARE` of the gap.
_SHRINK = 10.0
_SMOOTHING_SHARE = 0.1


@dataclass(frozen=True, kw_only=True)
class Newton(Solver):
    """Newton's method for both losses (module docstring): the squared hinge directly, the hinge
    by smoothing from ``mu0``. ``hessian``: ``"auto"`` (formed up to d = 3,000, else CG),
    ``"formed"`` or ``"cg"``; ``max_cg`` caps the conjugate gradients of a step."""

    max_cg: int = 250
    hessian: str = "auto"
    mu0: float = 1.0

    name: ClassVar[str] = "newton"
    problem: ClassVar[type] = QueryRankSVMProblem
    default_max_iter: ClassVar[int] = 200
    weights: ClassVar[bool] = True
    kernels: ClassVar[bool] = False

    def _check(self) -> None:
        check_int(self.max_cg, "max_cg", minimum=1)
        check_choice(self.hessian, "hessian", ("auto", "cg", "formed"))
        check_scalar(self.mu0, "mu0", positive=True)

    def _solve(self, problem: QueryRankSVMProblem, warm_start, deadline: Deadline
               ) -> SolverResult:
        data = problem.data
        w0 = _warm(warm_start, data.d)
        log_progress(f"{problem.log_name} {self.name}: {data.n} documents in {data.n_queries} "
                     f"queries, {data.n_pairs} pairs, {data.d} features, loss {problem.loss}, "
                     f"lambda {problem.lam_paper:.4g} in paper scaling, tol {self.tol:g}")
        formed = self.hessian == "formed" or (self.hessian == "auto" and data.d <= MAX_DIMENSION)
        if self.hessian == "formed" and data.d > MAX_DIMENSION:
            raise ValueError(f"hessian='formed' needs d <= {MAX_DIMENSION} (a d x d matrix), "
                             f"got d={data.d}; use 'cg'")
        mu0 = None if problem.loss == "squared_hinge" else \
            (self.mu0 if w0 is None else min(self.mu0, 1e-2))
        out = _newton(problem, np.zeros(data.d) if w0 is None else w0, tol=self.tol,
                      max_iter=self.iterations, max_cg=self.max_cg, formed=formed, mu=mu0,
                      deadline=deadline)
        best = out["best"]
        w = out["start"] if best is None else best["w"]
        gap = None if best is None else best["gap"]
        roundoff = None if best is None else best["roundoff"]
        status, message = self._judged(out["status"], gap, out["message"], roundoff)
        info = {"lam_paper": problem.lam_paper, "scaling": problem.scaling, "penalty": "l2",
                "loss": problem.loss, "normalization": problem.normalization,
                "pair_weight": problem.pair_weight, "gap_roundoff": roundoff,
                "dual_value": None if best is None else best["dual"],
                "hessian": "formed" if formed else "cg"}
        return self._result(deadline, w=w, objective=problem.objective(w), gap=gap,
                            status=status, iterations=out["iterations"],
                            history=out["history"], info=info, message=message)


def _warm(warm_start, d: int):
    """The weight vector of a warm start (a SolverResult or a length-d vector), or None."""
    if warm_start is None:
        return None
    w = warm_start.w if isinstance(warm_start, SolverResult) else warm_start
    w = np.asarray(w, dtype=float).ravel()
    if w.shape != (d,) or not np.all(np.isfinite(w)):
        raise ValueError(f"warm_start must give a finite weight vector of length {d}, got "
                         f"shape {w.shape}")
    return w


def below_round_off(mu: float, s: np.ndarray) -> bool:
    """Whether a smoothing ``mu`` is lost in the round-off of the margins (1000 ulps of the
    largest score): the ramp's sums divide by mu."""
    return mu < 1000.0 * np.finfo(float).eps * (1.0 + float(np.abs(s).max(initial=0.0)))


def _newton(problem, w, *, tol, max_iter, max_cg, formed, mu, deadline: Deadline) -> dict:
    """The Newton iterations from ``w`` (``mu`` None: the squared hinge); the result dict with
    the certified point of smallest gap as ``best``."""
    history = {"objective": [], "gap": [], "time": [], "cg_iterations": [], "step_size": [],
               "mu": []}
    status, message, best, it = "max_iter", f"max_iter={max_iter} Newton steps reached", None, 0
    out = {"start": w, "history": history}
    if deadline.expired():
        return {**out, "best": None, "status": "time_limit", "message": deadline.message(),
                "iterations": 0}
    point = problem.point(w, mu)
    factor, cg_last, g0 = None, 0, None
    for it in range(1, max_iter + 1):
        cert = problem.certificate(point)
        if best is None or cert["gap"] < best["gap"]:
            best = cert
        record(history, objective=cert["primal"], gap=cert["gap"], time=deadline.elapsed(),
               mu=float("nan") if mu is None else mu)
        log_iteration("newton", it, cert["primal"], cert["gap"], history["time"][-1],
                      **({} if mu is None else {"mu": mu}))
        end = round_end(best["gap"], tol, deadline)
        if end is not None:
            status, message = end
            record(history, cg_iterations=0, step_size=float("nan"))
            break
        grad = problem.gradient(point)
        g_norm = float(np.linalg.norm(grad))
        g0 = g_norm if g0 is None else g0
        direction, cg = None, 0
        # (formed again for the hinge at each new mu, where its curvature jumps: factor None;
        # formed at every step it took 7 s on the LETOR set at lambda 1e-4, 2.6 s as here)
        if formed and (factor is None or cg_last > _REFORM_AFTER):
            H = problem.hessian(point, deadline)
            cg_last = 0
            factor = None if H is None else cholesky(H)
            if H is None:
                status, message = "time_limit", deadline.message()
                record(history, cg_iterations=0, step_size=float("nan"))
                break
            if factor is not None:
                direction = -scipy.linalg.cho_solve(factor, grad, check_finite=False)
        if direction is None:
            forcing = min(0.1, np.sqrt(g_norm / g0)) if g0 > 0 else 0.1
            base = problem.hessian_base(point)
            direction, cg = conjugate_gradients(
                lambda u: problem.hessian_product(point, u, base), grad, forcing * g_norm,
                max_cg, deadline, factor)
            cg_last = cg
            if direction is None:
                status, message = "time_limit", deadline.message()
                record(history, cg_iterations=cg, step_size=float("nan"))
                break
        absolute_gap = cert["primal"] - cert["dual"]
        # the gap of w(alpha) less that of the smoothing: ||grad F_mu||^2 / (2 lam)
        if mu is not None and g_norm ** 2 / (2.0 * problem.lam_paper) <= \
                _SMOOTHING_SHARE * max(absolute_gap, 0.0):
            # F_mu is nearly minimised: the gap left is the smoothing's. Solve the band's pairs
            # exactly where they are few (.problem.QueryRankSVMProblem.polished), else (or
            # when that does not certify tol) smooth less
            polished = problem.polished(point, deadline=deadline, tol=tol) \
                if deadline.allows(0.0) else None
            if polished is not None and polished["gap"] < best["gap"]:
                best = polished
                if best["gap"] <= tol:
                    record(history, cg_iterations=cg, step_size=float("nan"))
                    record(history, objective=best["primal"], gap=best["gap"],
                           time=deadline.elapsed(), mu=mu, cg_iterations=0,
                           step_size=float("nan"))
                    status, message = "optimal", ""
                    break
            record(history, cg_iterations=cg, step_size=0.0)
            # the gap at F_mu's minimiser is about proportional to mu: near tol, shrink it by
            # no more than the gap's excess (a smaller mu costs more Newton steps: the band
            # that holds the curvature is narrower)
            mu, factor = mu / min(max(cert["gap"] / (0.5 * tol), 2.0), _SHRINK), None
            if below_round_off(mu, point.s):
                status, message = "stalled", (f"the smoothing mu={mu:.1e} reached the "
                                              f"round-off of the scores: no smaller gap can be "
                                              f"certified")
                break
            point = problem.point(point.w, mu, point.s)
            continue
        step, moved = _line_search(problem, point, grad, direction, deadline)
        record(history, cg_iterations=cg, step_size=step)
        if moved is None:
            if deadline.expired():
                status, message = "time_limit", deadline.message()
                break
            if mu is None:
                status, message = "stalled", ("the line search found no decrease along the "
                                              "Newton direction: the gap is at the round-off "
                                              "of the objective")
                break
            mu, factor = mu / _SHRINK, None  # a direction spoilt by round-off: smooth less
            if below_round_off(mu, point.s):
                status, message = "stalled", f"the smoothing mu={mu:.1e} reached the round-off"
                break
            point = problem.point(point.w, mu, point.s)
            continue
        if deadline.expired():
            status, message = "time_limit", deadline.message()
            break
        point = problem.point(*moved[:1], mu, moved[1])
    return {**out, "best": best, "status": status, "message": message, "iterations": it}


def _line_search(problem, point, grad, direction, deadline: Deadline):
    """``(step, (w, s))`` along ``direction``: for the squared hinge by backtracking from step 1
    until Armijo's condition holds; for the smoothed hinge the minimiser along it
    (:func:`_exact_step`). ``(step, None)`` when no decrease is found above step 1e-10 or the
    deadline passes."""
    ds = problem.scores(direction)
    slope = float(grad @ direction)
    if point.mu is not None and slope < 0:
        return _exact_step(problem, point, direction, ds, slope, deadline)
    step = 1.0
    while step >= 1e-10 and not deadline.expired():
        w = point.w + step * direction
        s = point.s + step * ds
        if problem.value(w, s, point.mu) <= point.value + 1e-4 * step * slope:
            return step, (w, s)
        step *= 0.5
    return step, None


def _exact_step(problem, point, direction, ds, slope: float, deadline: Deadline,
                rounds: int = 40):
    """The step minimising the smoothed hinge's objective along ``direction`` (a convex piecewise
    quadratic of the step: its slope is increasing), to a slope within a tenth of the first:
    step 1 when the slope there is still negative, else regula falsi (Illinois) on the slope
    over ``[0, 1]``. Each trial costs a sort of the scores and no pass over X. A Newton step on a
    band of width mu overshoots where pairs cross the band; backtracking by halves then took
    hundreds of steps of 1e-4."""
    def at(step):
        return (problem.slope(point.w + step * direction, direction, point.s + step * ds, ds,
                              point.mu))

    lo, f_lo, hi = 0.0, slope, 1.0
    f_hi = f = at(hi)
    step = hi
    if f_hi > 0:
        side = 0
        for _ in range(rounds):
            if deadline.expired():
                return step, None
            step = hi - f_hi * (hi - lo) / (f_hi - f_lo)
            f = at(step)
            if abs(f) <= 0.1 * abs(slope):
                break
            if f > 0:
                hi, f_hi = step, f
                if side == 1:
                    f_lo *= 0.5
                side = 1
            else:
                lo, f_lo = step, f
                if side == -1:
                    f_hi *= 0.5
                side = -1
        if f > 0 and problem.value(point.w + step * direction, point.s + step * ds,
                                   point.mu) > point.value:
            step = lo  # past the minimiser and no lower (or round-off says so): the last
            # step whose slope was negative, where the objective is decreasing throughout
        if step <= 0:
            return step, None
    # a step with a nonpositive slope lowers the convex objective: no comparison of values,
    # whose round-off grows as 1/mu
    return step, (point.w + step * direction, point.s + step * ds)
