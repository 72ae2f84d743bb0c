"""Solvers built on the prox core, one module per problem, each returning a :class:`SolverResult`.

- :func:`infinite_push` (l2 or l1 penalty) and :func:`ranksvm`: certified methods in memory
  linear in the data (the working set, default for the Infinite Push; Newton's method on a
  smoothed hinge, default for RankSVM), accelerated projected gradient on the dual, the papers'
  gradient projection (Agarwal 2011, Figures 2 and 3) and ADMM (Rakotomamonjy 2012); see
  :mod:`infpush_cvx.solvers.infinite_push` and :mod:`infpush_cvx.solvers.ranksvm`. A solve that
  stops before its certificate holds warns with a :class:`ConvergenceWarning`.
- :func:`rank2plan_lp`: the Rank2Plan weighted-pair LP (:class:`Rank2PlanProblem`) by column
  and constraint generation, Nesterov smoothing, or CVXPY (the method classes are in
  :mod:`infpush_cvx.solvers.rank2plan`); for lam at or above :func:`rank2plan_lambda_max`,
  beta* = 0 (the smallest such lambda when every margin is positive; docs/mathematics.md,
  section 4.2).
- :func:`pnorm_push`, :func:`toppush`, :func:`svmmap`: the P-Norm Push (Newton, Rudin's
  boosting, CVXPY), TopPush (interior point, accelerated dual gradient, CVXPY) and SVMMAP
  (cutting planes), each certified by its duality gap.
- :mod:`infpush_cvx.solvers.engines.duality`: the dual objectives and duality gaps that certify them.

The name ``infinite_push`` here is the function; its module is
``infpush_cvx.solvers.infinite_push`` (import ``METHODS`` from there).
"""

from infpush_cvx.solvers.engines import duality
from .infinite_push import infinite_push
from .rank2plan import Rank2PlanProblem, rank2plan_lambda_max, rank2plan_lp
from .ranksvm import ranksvm
from infpush_cvx.solvers.engines.working_set import WorkingSetOptions
from .result import ConvergenceWarning, SolverResult
# the P-Norm Push, TopPush and SVMMAP: their functions, problems and methods
from .pnorm_push import PNormPushProblem, pnorm_push
from .svmmap import SVMMAPProblem, svmmap
from .toppush import TopPushProblem, toppush
from .squared_hinge_ranksvm import SquaredHingeRankSVMProblem, squared_hinge_ranksvm

__all__ = ["ConvergenceWarning", "SolverResult", "WorkingSetOptions", "duality",
           "infinite_push", "ranksvm"]
__all__ += ["Rank2PlanProblem", "rank2plan_lambda_max", "rank2plan_lp"]
__all__ += ["PNormPushProblem", "SVMMAPProblem", "TopPushProblem", "pnorm_push", "svmmap",
            "toppush"]
__all__ += ["SquaredHingeRankSVMProblem", "squared_hinge_ranksvm"]
