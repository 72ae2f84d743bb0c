"""The models and their methods, one folder per model, on one contract (:mod:`.base`).

Each model's folder holds its problem (a frozen value that knows its objective, certificate
and CVXPY problem), its methods (one class each, options in ``__init__``, one entry point
``solve(problem, warm_start=None, deadline=None)``) and its convenience function, which builds
the problem and the method and calls ``solve``. The shared engines (deadlines, duality, the
working set, the structured interior point, pair sums, kernels, the CVXPY backend) are in
:mod:`.engines`; the models are registered in :mod:`.registry`.

- :func:`infinite_push` (l2 or l1 penalty), :func:`ranksvm`: Agarwal (SDM 2011), Rakotomamonjy
  (ICML 2012); the working set and smoothing Newton (certified), dual FISTA, the papers'
  gradient projection, ADMM; kernels.
- :func:`squared_hinge_ranksvm`: the L2-loss RankSVM of Lee & Lin (2014); Newton (certified).
- :func:`query_ranksvm`: RankSVM over the pairs within queries (hinge or squared hinge, per-query
  or per-pair means); Newton and smoothing Newton (certified).
- :func:`rank2plan_lp`: the Rank2Plan weighted-pair LP; column and constraint generation
  (certified), Nesterov smoothing, CVXPY; :func:`rank2plan_lambda_max`.
- :func:`pnorm_push`, :func:`toppush`, :func:`svmmap`: the P-Norm Push (Rudin 2009), TopPush
  (Li et al. 2014) and SVMMAP (Yue et al. 2007), each certified by its duality gap.

Every function returns a :class:`SolverResult`; a solve that stops before its certificate holds
warns with a :class:`ConvergenceWarning`. The method classes are in the model folders
(``from infpush_cvx.solvers.infinite_push import WorkingSet``) and in each model's ``MODEL``.
"""

from .base import Problem, Solver
from .registry import Model
from .engines.working_set import WorkingSetOptions
from .infinite_push import InfinitePushProblem, infinite_push
from .pnorm_push import PNormPushProblem, pnorm_push
from .query_infinite_push import QueryInfinitePushProblem, query_infinite_push
from .query_ranksvm import QueryRankSVMProblem, query_ranksvm
from .rank2plan import Rank2PlanProblem, rank2plan_lambda_max, rank2plan_lp
from .ranksvm import RankSVMProblem, ranksvm
from .result import ConvergenceWarning, SolverResult
from .squared_hinge_ranksvm import SquaredHingeRankSVMProblem, squared_hinge_ranksvm
from .svmmap import SVMMAPProblem, svmmap
from .toppush import TopPushProblem, toppush

__all__ = ["ConvergenceWarning", "InfinitePushProblem", "Model", "PNormPushProblem", "Problem",
           "QueryInfinitePushProblem", "QueryRankSVMProblem", "Rank2PlanProblem",
           "RankSVMProblem", "SVMMAPProblem", "Solver", "SolverResult",
           "SquaredHingeRankSVMProblem", "TopPushProblem", "WorkingSetOptions", "infinite_push",
           "pnorm_push", "query_infinite_push", "query_ranksvm", "rank2plan_lambda_max",
           "rank2plan_lp", "ranksvm", "squared_hinge_ranksvm", "svmmap", "toppush"]
