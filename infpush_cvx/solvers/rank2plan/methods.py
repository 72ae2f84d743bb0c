"""The methods of the Rank2Plan LP (:class:`.problem.Rank2PlanProblem`), one class each:

- :class:`CCG` (default, certified): column and constraint generation (Dedieu, Mazumder & Wang,
  JMLR 2022) over HiGHS, warm-started by the smoothed method (:mod:`.ccg`);
- :class:`Smoothed`: Nesterov smoothing and accelerated proximal gradient, low accuracy, fast
  (:mod:`.smoothed`);
- :class:`CVXPY`: the CVXPY LP of :func:`infpush_cvx.formulations.rank2plan_lp_problem` with any
  solver, its answer certified by the project's certificate from CVXPY's multipliers.

Each solves the unit-sized LP (:mod:`.scaling`); for ``lam >= lambda_max`` each returns the
exact ``beta = 0`` with its certificate, without solving. ``tol`` is the certified relative gap
``(P(beta) - g^T pi) / P(beta)`` of the full LP at which a result is "optimal".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from infpush_cvx._logging import log_progress
from infpush_cvx._validation import (check_bool, check_choice, check_int, check_scalar,
                                     check_vector)
from infpush_cvx.solvers.base import CVXPYMethod, Solver, cvxpy_message, data_size
from infpush_cvx.solvers.engines.cvxpy_backend import REL_GAP_OPTIONS, certified_status
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.rank2plan.ccg import LP_ALGORITHMS, solve_ccg
from infpush_cvx.solvers.rank2plan.problem import Rank2PlanProblem
from infpush_cvx.solvers.rank2plan.smoothed import solve_smoothed
from infpush_cvx.solvers.result import SolverResult

#: Iteration budget of the smoothed warm start inside "ccg": enough to find the support roughly.
_CCG_WARM_ITER = 300


def _check_tau(tau) -> np.ndarray | None:
    """A positive number or a nonincreasing sequence of them as a 1-D array (None: the default
    schedule); strings, which NumPy would parse, booleans and complex numbers are a TypeError."""
    if tau is None:
        return None
    if isinstance(tau, (bool, np.bool_)):
        raise TypeError(f"tau must be a number or a sequence of numbers, got {tau!r}")
    scalar = np.isscalar(tau) or (isinstance(tau, np.ndarray) and tau.ndim == 0)
    taus = check_vector(np.atleast_1d(tau) if scalar else tau, "tau")
    if taus.size == 0 or np.any(taus <= 0) or np.any(np.diff(taus) > 0):
        raise ValueError(f"tau must be a positive number or a nonincreasing sequence of "
                         f"positive numbers, got {tau!r}")
    return taus


@dataclass(frozen=True, kw_only=True)
class _Rank2PlanMethod(Solver):
    """What the three methods share: the traits, the warm start, the progress log, the
    ``beta = 0`` answer above lambda_max and the result in the caller's units; each method's
    ``_run(problem, start, deadline)`` solves the unit-sized LP."""

    problem: ClassVar[type] = Rank2PlanProblem
    penalties: ClassVar[tuple] = ("l1",)
    weights: ClassVar[bool] = True  # the pairs' weights (PairData.weight)
    kernels: ClassVar[bool] = False

    def _solve(self, problem: Rank2PlanProblem, warm_start, deadline: Deadline) -> SolverResult:
        start = self._start(problem, warm_start)
        data, factor = problem.data, problem.scaling.objective(1.0)
        log_progress(f"{problem.log_name} {self.name}: {data.n_states} states, "
                     f"{data.n_features} features, {data.n_pairs} pairs, lambda "
                     f"{problem.lam:.4g}, tol {self.tol}; iteration objectives in units of "
                     f"{factor:g}")
        if problem.lam_unit >= problem.operator.lambda_max():
            res = problem.zero_solution(self.name)
        else:
            res = self._run(problem, start, deadline)
        return problem.in_caller_units(res, self.tol, deadline)

    def _start(self, problem: Rank2PlanProblem, warm_start):
        """The warm start (a :class:`SolverResult` or a beta) on the unit-sized LP, or None."""
        if warm_start is None:
            return None
        if isinstance(warm_start, SolverResult):
            warm_start = warm_start.w
        beta = check_vector(warm_start, "warm_start", length=problem.data.n_features)
        return problem.scaling.beta_in(beta)


@dataclass(frozen=True, kw_only=True)
class Smoothed(_Rank2PlanMethod):
    """Smoothed FISTA over a decreasing schedule of ``tau`` (a number or a nonincreasing
    sequence; default :func:`.smoothed.default_tau_schedule`); each stage stops when beta
    changes by less than ``stage_tol`` (relative); ``record_every`` steps are recorded in the
    history (0: none). ``max_iter`` counts gradient steps. Its gap is certified at the end."""

    tau: object = None
    stage_tol: float = 1e-6
    record_every: int = 10

    name: ClassVar[str] = "smoothed"
    default_max_iter: ClassVar[int] = 2000

    def _check(self):
        _check_tau(self.tau)
        check_scalar(self.stage_tol, "stage_tol", nonnegative=True)
        check_int(self.record_every, "record_every", minimum=0)

    def _run(self, problem, start, deadline):
        tau = None if self.tau is None else problem.scaling.tau_in(self.tau)  # (unit-sized LP)
        return solve_smoothed(problem.operator, problem.lam_unit, beta0=start, tau=tau,
                              tol=self.tol, max_iter=self.iterations, deadline=deadline,
                              stage_tol=self.stage_tol, record_every=self.record_every)


@dataclass(frozen=True, kw_only=True)
class CCG(_Rank2PlanMethod):
    """Column and constraint generation over HiGHS (:func:`.ccg.solve_ccg`: the working-set
    sizes ``n_pairs_init``, ``n_features_init``, ``max_features_add``, ``max_pairs_add``, the
    first LP's ``lp_algorithm`` and ``highs_options``), from ``warm_start`` or else from a
    short smoothed run with schedule ``tau``. ``max_iter`` counts restricted LPs; every HiGHS
    run gets the time left."""

    tau: object = None
    n_pairs_init: int | None = None
    n_features_init: int | None = None
    max_features_add: int | None = None
    max_pairs_add: int | None = None
    lp_algorithm: str = "auto"
    highs_options: dict | None = None

    name: ClassVar[str] = "ccg"
    default_max_iter: ClassVar[int] = 100

    def _check(self):
        _check_tau(self.tau)
        for name in ("n_pairs_init", "n_features_init", "max_features_add", "max_pairs_add"):
            if getattr(self, name) is not None:
                check_int(getattr(self, name), name, minimum=1)
        check_choice(self.lp_algorithm, "lp_algorithm", LP_ALGORITHMS)
        highs = self.highs_options
        if highs is not None and (not isinstance(highs, dict)
                                  or not all(isinstance(k, str) for k in highs)):
            raise TypeError(f"highs_options must be a dict of HiGHS option names to values, "
                            f"got {type(highs).__name__}")

    def _run(self, problem, start, deadline):
        pi0, warm = None, None
        if start is None:
            log_progress(f"rank2plan_lp ccg: warm start by the smoothed method (at most "
                         f"{_CCG_WARM_ITER} steps)")
            warm = Smoothed(tau=self.tau, tol=self.tol, max_iter=_CCG_WARM_ITER,
                            record_every=0)._run(problem, None, deadline)
            if warm.status == "optimal":
                warm.method = "ccg"
                warm.info["warm_start"] = "smoothed (already certified)"
                return warm
            start, pi0 = warm.w, warm.dual
        res = solve_ccg(problem.operator, problem.lam_unit, self, beta0=start, pi0=pi0,
                        deadline=deadline)
        if warm is not None:
            res.info.update(warm_start_time=warm.time, warm_start_iterations=warm.iterations,
                            warm_start_objective=warm.objective)
        return res


#: The solver used when a time limit or tol is given without one.
_CVXPY_DEFAULT = "CLARABEL"
#: The certified relative gap at which a CVXPY answer is "optimal" when no ``tol`` is given.
_CVXPY_CERTIFY_TOL = 1e-6


@dataclass(frozen=True, kw_only=True)
class CVXPY(_Rank2PlanMethod, CVXPYMethod):
    """The CVXPY LP (``form`` "compact" or "direct") solved by ``solver`` (default: CVXPY's
    choice; Clarabel when a time limit or ``tol`` is given) with ``solver_options`` for
    ``Problem.solve``, through :mod:`infpush_cvx.solvers.engines.cvxpy_backend` (statuses, the
    time limit; a large problem or a solver without a time-limit option is solved in a child
    process stopped at the limit). ``tol`` (default None) becomes the solver's relative-gap
    tolerance (Clarabel ``tol_gap_rel``, ECOS ``reltol``, SCS ``eps_rel``; other solvers refuse
    it) as well as the certified gap its answer must reach to be "optimal" (1e-6 when None).

    The certificate is the project's (:meth:`.ops.PairOperator.certificate`): ``P(beta)`` at
    CVXPY's beta against the dual bound of its hinge multipliers (``problem.constraints[-1]``),
    or of the same multipliers repaired first (:meth:`.ops.PairOperator.repaired_dual`),
    whichever is sharper; without multipliers the answer is "unverified". A failed solve has no
    point: beta is NaN and the message names the cause. ``verbose`` also shows CVXPY's output."""

    tol: float | None = None
    form: str = "compact"
    solver_options: dict | None = None

    builder: ClassVar[str] = "infpush_cvx.formulations:rank2plan_lp_problem"

    def __post_init__(self):
        if self.tol is not None:
            check_scalar(self.tol, "tol", positive=True)
        if self.max_iter is not None:
            raise TypeError("max_iter is not an option of method 'cvxpy' (give the solver's own "
                            "iteration limit in solver_options)")
        check_bool(self.verbose, "verbose")
        self._check()  # the solver's name (CVXPYMethod)
        check_choice(self.form, "form", ("compact", "direct"))
        if self.solver_options is not None and not isinstance(self.solver_options, dict):
            raise TypeError(f"solver_options must be a dict, got "
                            f"{type(self.solver_options).__name__}")

    _start = CVXPYMethod._start  # no warm start (the model base class reads one)

    def _solver_options(self, deadline: Deadline):
        """``(solver, options)`` with ``tol`` as the solver's own option; a TypeError for a
        solver without one (the time left is added by the backend)."""
        options, solver = dict(self.solver_options or {}), self.solver
        if solver is None and (self.tol is not None or deadline.limit is not None):
            solver = _CVXPY_DEFAULT
        name = None if solver is None else str(solver).upper()
        if self.tol is not None:
            if name not in REL_GAP_OPTIONS:
                raise TypeError(f"tol is not supported with method='cvxpy' and solver="
                                f"{solver!r}; use one of {sorted(REL_GAP_OPTIONS)} or pass the "
                                f"solver's own tolerance options")
            options[REL_GAP_OPTIONS[name]] = self.tol
        return name, options

    def _run(self, problem, start, deadline):
        data, lam, op = problem.unit, problem.lam_unit, problem.operator
        solver, options = self._solver_options(deadline)
        out, info = self._cvxpy((data, lam), {"form": self.form}, solver=solver,
                                options=options, deadline=deadline,
                                size=data_size(data.X) + data.n_pairs)
        w, status, message = self._answer(out, solver, data.n_features)
        pi, gap, dual = out.duals[-1] if out.has_point else None, None, None
        if pi is not None and np.all(np.isfinite(pi)) and np.all(np.isfinite(w)):
            cert = min((op.certificate(w, p, lam)  # two valid bounds: the sharper one
                        for p in (pi.ravel(), op.repaired_dual(w, pi.ravel(), lam))),
                       key=lambda c: c["gap"])
            gap, dual = cert["gap"], cert["pi"]
            info.update(lower_bound=cert["dual"], dual_infeasibility=cert["dual_infeasibility"])
        if out.has_point:
            status = certified_status(out.status, gap, self.tol or _CVXPY_CERTIFY_TOL)
            message = cvxpy_message(out.status, status, gap, message)
        objective = op.objective(w, lam) if np.all(np.isfinite(w)) else np.nan
        history = {"objective": [objective], "gap": [gap]} if out.has_point else {}
        return SolverResult(w=w, objective=objective, gap=gap, status=status,
                            iterations=out.iterations, time=deadline.elapsed(), method="cvxpy",
                            history=history, dual=dual, info=info, message=message)
