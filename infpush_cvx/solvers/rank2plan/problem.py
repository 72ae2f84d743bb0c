"""The Rank2Plan weighted-pair LP as one value (docs/mathematics.md, section 4.1;
[Rank2PlanNote], eq. 1)::

    P(beta) = sum_k s_k max(0, g_k - (X_{j_k} - X_{i_k}) beta) + lam ||beta||_1

for the pairs of a :class:`~infpush_cvx.data.PairData` (margins g, weights s). Every method
solves it on the data centred (:func:`~infpush_cvx.solvers.engines.common.column_shift`) and
scaled to unit size by powers of two (:mod:`.scaling`, exact), and reports in the caller's units.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from infpush_cvx._validation import caller_stacklevel, check_scalar
from infpush_cvx.data.containers import PairData
from infpush_cvx.formulations.objectives import rank2plan_objective
from infpush_cvx.solvers.base import Problem
from infpush_cvx.solvers.engines.common import column_shift, shifted
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.rank2plan.ops import PairOperator
from infpush_cvx.solvers.rank2plan.scaling import PairScaling
from infpush_cvx.solvers.result import SolverResult, status_for_gap, warn_if_not_converged

#: ``info`` entries in objective units (times ``b c``; the smoothing parameter tau too).
_OBJECTIVE_KEYS = ("objective", "lower_bound", "smoothed_objective", "smoothing_bound",
                   "warm_start_objective", "cvxpy_value", "tau")
#: ``history`` columns in the units of the unit-sized LP.
_HISTORY_KEYS = ("objective", "lower_bound", "smoothed_objective", "tau")


@dataclass(frozen=True, eq=False)
class Rank2PlanProblem(Problem):
    """The Rank2Plan LP of ``data`` (a :class:`PairData`) with l1 weight ``lam >= 0``.

    Derived once: ``scaling`` (the :class:`.scaling.PairScaling` of the centred data; data
    whose LP cannot be represented in float64 are a ValueError), ``unit`` (the centred data at
    unit size), ``lam_unit`` (lam for it) and, on first use, ``operator`` (its
    :class:`.ops.PairOperator`).
    """

    data: PairData
    lam: float

    model: ClassVar[str] = "rank2plan"
    log_name: ClassVar[str] = "rank2plan_lp"  # the progress log names the function
    problem_class: ClassVar[str] = "LP"
    penalty: ClassVar[str] = "l1"
    catalog_options: ClassVar[tuple] = ()

    def __post_init__(self):
        if not isinstance(self.data, PairData):
            raise TypeError(f"data must be a PairData (PairData(X, i, j, margin, weight) for "
                            f"arrays), got {type(self.data).__name__}")
        lam = check_scalar(self.lam, "lam", nonnegative=True)
        # Every column of X far from zero shifted towards it: the LP sees X only through the
        # differences X_j - X_i, so a common shift of the rows changes nothing in exact
        # arithmetic, but an offset of 1e4 on a column turned a certified solve into "failed"
        # (the LP's entries lost their digits, and the unit scaling divided by the offset
        # rather than by the spread).
        data, shift = self.data, column_shift(self.data.X)
        centred = data if shift is None else PairData(shifted(data.X, shift), data.i, data.j,
                                                      data.margin, data.weight)
        scaling = PairScaling.of(centred)
        scaling.check(centred)
        for name, value in (("lam", lam), ("scaling", scaling), ("unit", scaling.data(centred)),
                            ("lam_unit", scaling.lam(lam))):
            object.__setattr__(self, name, value)

    @functools.cached_property
    def operator(self) -> PairOperator:
        """The matrix-free pair differences of the unit-sized data, with their certificate."""
        return PairOperator(self.unit)

    def objective(self, w) -> float:
        return rank2plan_objective(self.data, w, self.lam)

    def lambda_max(self) -> float:
        """``||D^T (s * 1[g > 0])||_inf``: beta = 0 is optimal for every lam at or above it."""
        return self.scaling.reduced_cost(self.operator.lambda_max())

    def certificate(self, w, pi) -> dict:
        """:meth:`.ops.PairOperator.certificate` of ``(w, pi)`` (the caller's units) on the
        unit-sized LP: its relative ``gap`` is that of the caller's LP."""
        return self.operator.certificate(self.scaling.beta_in(w),
                                         np.ldexp(np.asarray(pi, float), -self.scaling.es),
                                         self.lam_unit)

    def cvxpy_problem(self, form: str = "compact"):
        from infpush_cvx.formulations import rank2plan_lp_problem
        return rank2plan_lp_problem(self.data, self.lam, form=form)

    def zero_solution(self, method: str) -> SolverResult:
        """beta = 0 on the unit-sized LP, certified by ``pi = s 1[g > 0]`` (feasible for
        lam >= lambda_max, and ``g^T pi = P(0)``: a zero gap)."""
        op = self.operator
        cert = op.certificate(np.zeros(op.p), op.s * (op.g > 0), self.lam_unit)
        return SolverResult(w=np.zeros(op.p), objective=cert["primal"], gap=cert["gap"],
                            status="optimal", iterations=0, time=0.0, method=method,
                            history={"objective": [cert["primal"]], "gap": [cert["gap"]]},
                            dual=cert["pi"],
                            info={"lower_bound": cert["dual"], "lambda_max": op.lambda_max(),
                                  "dual_infeasibility": cert["dual_infeasibility"]})

    def in_caller_units(self, res: SolverResult, tol, deadline: Deadline) -> SolverResult:
        """The result ``res`` of the unit-sized LP for the caller's data (:mod:`.scaling`): the
        objective recomputed from the caller's data, the relative gap unchanged, the status made
        to agree with the gap (:func:`~infpush_cvx.solvers.result.status_for_gap`; ``tol``
        None: as it is); warns when the certificate does not hold."""
        scaling = self.scaling
        reduced = scaling.reduced_cost
        to_caller = {**dict.fromkeys(_OBJECTIVE_KEYS, scaling.objective),
                     "dual_infeasibility": reduced, "lambda_max": reduced,
                     "sigma_max": lambda v: reduced(reduced(v)),  # of Xt^T Xt, Xt = s D: (a c)^2
                     "tau_schedule": lambda taus: [scaling.objective(t) for t in taus],
                     "trust_radius": lambda r: float(scaling.beta_out(r))}
        info = {key: value if value is None or key not in to_caller else to_caller[key](value)
                for key, value in res.info.items()}
        info["unit_scaling_exponents"] = {"X": scaling.ex, "margin": scaling.eg,
                                          "weight": scaling.es}
        history = {key: [to_caller[key](v) for v in values] if key in _HISTORY_KEYS else values
                   for key, values in res.history.items()}
        w = scaling.beta_out(res.w)
        objective = self.objective(w) if np.all(np.isfinite(w)) else np.nan
        result = replace(
            res, w=w, objective=objective, time=deadline.elapsed(), history=history, info=info,
            status=res.status if tol is None else status_for_gap(res.status, res.gap, tol),
            dual=None if res.dual is None else scaling.dual(res.dual))
        # + 1: the warning is raised one call down, in warn_if_not_converged
        warn_if_not_converged(result, stacklevel=caller_stacklevel() + 1)
        return result
