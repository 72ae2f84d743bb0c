"""What the methods of the Infinite Push over queries share, and its CVXPY method.

Every method ends the same way: its point's objective in the caller's scaling, the certified
relative gap of :meth:`~.problem.QueryInfinitePushProblem.certificate` judging the status, and
the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from infpush_cvx._logging import log_progress
from infpush_cvx.solvers.base import CVXPYMethod, Solver, cvxpy_message, data_size
from infpush_cvx.solvers.engines.cvxpy_backend import certified_status
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.query_infinite_push.problem import Certificate, QueryInfinitePushProblem
from infpush_cvx.solvers.result import SolverResult


@dataclass(frozen=True, kw_only=True)
class QueryPushMethod(Solver):
    """Base of the methods: the problem class, the traits, the start line and the result."""

    problem: ClassVar[type] = QueryInfinitePushProblem
    penalties: ClassVar[tuple] = ("l2", "l1")
    weights: ClassVar[bool] = True
    kernels: ClassVar[bool] = False

    def _log_start(self, problem, data=None, detail: str = "") -> None:
        g = problem.groups
        log_progress(f"{problem.log_name} {self.name}{detail}: {problem.data.n} documents in "
                     f"{g.n_queries} queries counted, {problem.data.d} features, "
                     f"{problem.penalty}, lambda {problem.lam_paper:.4g} in paper scaling, "
                     f"tol {self.tol:g}, max_iter {self.iterations}")

    def _finish(self, problem, deadline: Deadline, *, w: np.ndarray, cert: Certificate | None,
                status: str, message: str, iterations: int, history: dict,
                info: dict) -> SolverResult:
        """The result of ``w`` certified by ``cert`` (None: no dual, no gap)."""
        gap = None if cert is None else cert.gap
        roundoff = None if cert is None else cert.roundoff
        status, message = self._judged(status, gap, message, roundoff)
        objective = problem.objective(w) if np.all(np.isfinite(w)) else float("nan")
        info = dict(info, lam_paper=problem.lam_paper, penalty=problem.penalty,
                    threshold=problem.threshold, queries_counted=problem.groups.n_queries)
        if cert is not None:
            info.update(primal_paper=cert.primal, dual_paper=cert.dual, roundoff=roundoff)
        return self._result(deadline, w=w, objective=objective, gap=gap, status=status,
                            iterations=iterations, history=history, info=info,
                            message=message)


@dataclass(frozen=True, kw_only=True)
class CVXPY(QueryPushMethod, CVXPYMethod):
    """:func:`infpush_cvx.formulations.query_infinite_push_problem` (every pair of a query) in
    paper scaling through the CVXPY backend, solved by ``solver`` (Clarabel by default) and
    certified with the hinge rows' multipliers as the pair dual: CVXPY's "optimal" is "optimal"
    only when that gap is at most ``tol``; "unverified" without multipliers."""

    solver: str | None = "CLARABEL"

    builder: ClassVar[str] = ("infpush_cvx.formulations._query_infinite_push:"
                              "query_infinite_push_problem")

    def _solve(self, problem, warm_start, deadline) -> SolverResult:
        self._start(problem, warm_start)
        self._log_start(problem, detail=f" ({self.solver})")
        kwargs = {"penalty": problem.penalty, "threshold": problem.threshold,
                  "scaling": "paper"}
        out, info = self._cvxpy((problem.data, problem.lam_paper), kwargs, solver=self.solver,
                                options={}, deadline=deadline,
                                size=data_size(problem.data.X))
        w, status, message = self._answer(out, self.solver, problem.data.d)
        cert = None
        alpha = out.duals[1] if out.has_point and len(out.duals) > 1 else None
        if alpha is not None and np.all(np.isfinite(w)):
            I, J = problem.groups.pairs()
            cert = problem.certificate(w, I, J, np.asarray(alpha).ravel())
        status = certified_status(status, None if cert is None else cert.gap, self.tol)
        message = cvxpy_message(out.cvxpy_status or "", status,
                                None if cert is None else cert.gap, message)
        return self._finish(problem, deadline, w=w, cert=cert, status=status, message=message,
                            iterations=out.iterations, history={}, info=info)
