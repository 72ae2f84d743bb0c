"""Solvers built on the prox core, one module per problem, each returning a :class:`SolverResult`.

- :func:`infinite_push` (l2 or l1 penalty) and :func:`ranksvm`: certified methods in memory
  linear in the data (the working set, default for the Infinite Push; Newton's method on a
  smoothed hinge, default for RankSVM), accelerated projected gradient on the dual, the papers'
  gradient projection (Agarwal 2011, Figures 2 and 3) and ADMM (Rakotomamonjy 2012); see
  :mod:`infpush_cvx.solvers.infinite_push` and :mod:`infpush_cvx.solvers.ranksvm`. A solve that
  stops before its certificate holds warns with a :class:`ConvergenceWarning`.
- :func:`rank2plan_lp`: the Rank2Plan weighted-pair LP by Nesterov smoothing, column and
  constraint generation, or CVXPY; for lam at or above :func:`rank2plan_lambda_max`,
  beta* = 0 (the smallest such lambda when every gap is positive; docs/mathematics.md,
  section 4.2).
- :mod:`infpush_cvx.solvers.engines.duality`: the dual objectives and duality gaps that
  certify them.

The name ``infinite_push`` here is the function; its module is
``infpush_cvx.solvers.infinite_push`` (import ``METHODS`` from there).
"""

from infpush_cvx.solvers.engines import duality
from .infinite_push import (ADMM, DualFISTA, InfinitePushProblem, PaperGradient, WorkingSet,
                            infinite_push)
from .ranksvm import RankSVMProblem, SmoothingNewton, ranksvm
from .rank2plan import rank2plan_lambda_max, rank2plan_lp
from infpush_cvx.solvers.engines.working_set import WorkingSetOptions
from .result import ConvergenceWarning, SolverResult

__all__ = ["ConvergenceWarning", "SolverResult", "WorkingSetOptions", "duality",
           "rank2plan_lambda_max", "rank2plan_lp",
           # the Infinite Push and RankSVM
           "ADMM", "DualFISTA", "InfinitePushProblem", "PaperGradient", "RankSVMProblem",
           "SmoothingNewton", "WorkingSet", "infinite_push", "ranksvm"]
