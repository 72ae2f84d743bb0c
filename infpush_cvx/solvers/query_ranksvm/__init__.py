"""RankSVM over queries: the hinge or squared hinge over the pairs ``y_i > y_j`` of each query.

Paper scaling (docs/mathematics.md, section 11)::

    P(w) = (lam/2) ||w||^2 + sum_q sum_{(i,j) in q} c_ij l(1 - (x_i - x_j).w)

the pair weights ``c_ij`` summing to 1 per query and the queries averaged
(``normalization="query"``, per-query means) or one mean over all pairs (``"pairs"``, Lee & Lin's
sum over pairs up to C), optionally times the label difference. Method: ``"newton"`` (Newton
for the squared hinge, smoothing Newton for the hinge, on per-query sums of the sorted scores;
certified by a duality gap: :mod:`.newton`). Its CVXPY problem:
:func:`infpush_cvx.formulations.query_ranksvm_problem`.
"""

from __future__ import annotations

from infpush_cvx._validation import check_time_limit
from infpush_cvx.data.queries import QueryData
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.query_ranksvm.newton import Newton
from infpush_cvx.solvers.query_ranksvm.problem import QueryRankSVMProblem
from infpush_cvx.solvers.registry import Model
from infpush_cvx.solvers.result import SolverResult

MODEL = Model(name="query_ranksvm", problem=QueryRankSVMProblem, methods=(Newton,),
              certified=Newton, formulations=("query_ranksvm",))
METHODS = tuple(method.name for method in MODEL.methods)

__all__ = ["METHODS", "MODEL", "Newton", "QueryRankSVMProblem", "query_ranksvm"]


def query_ranksvm(data: QueryData, lam: float, *, loss: str = "hinge",
                  normalization: str = "query", pair_weight: str = "none",
                  scaling: str = "paper", method: str = "newton", tol: float = 1e-6,
                  max_iter: int | None = None, warm_start=None, time_limit: float | None = None,
                  verbose: bool = False, **options) -> SolverResult:
    """Minimise RankSVM over the queries of ``data`` (a QueryData); returns a
    :class:`SolverResult`. ``loss`` "hinge" or "squared_hinge", ``normalization`` "query" or
    "pairs", ``pair_weight`` "none" or "label_difference", ``scaling`` "paper" or "seed";
    ``time_limit`` seconds from this call (the problem's set-up included); ``options`` the
    method's own (``hessian``, ``max_cg``, ``mu0``: :class:`.Newton`)."""
    deadline = Deadline(check_time_limit(time_limit))
    problem = QueryRankSVMProblem(data, lam, loss=loss, normalization=normalization,
                                  pair_weight=pair_weight, scaling=scaling)
    return MODEL.solve(method, problem, warm_start, deadline, tol=tol, max_iter=max_iter,
                       verbose=verbose, **options)
