"""The Infinite Push over queries: the push at the top of every query's list.

Paper scaling (docs/mathematics.md, section 12), for a :class:`~infpush_cvx.data.queries.
QueryData` with relevant documents ``R_q`` (label at least ``threshold``) and others ``N_q``::

    P(w) = lam pen(w) + sum_q omega_q max_{j in N_q} (1/M_q) sum_{i in R_q} p_i
           max(0, 1 - (x_i - x_j) . w),

pen = ||w||^2/2 (l2) or ||w||_1 (l1), p the sample weights, ``M_q = sum_{R_q} p_i`` and omega_q the
query weights normalised over the queries with both relevant and other documents (the others
contribute nothing and are named in a QueryWarning). With one query it is
:func:`~infpush_cvx.solvers.infinite_push`. Methods: ``"working_set"`` (certified: working sets
of other documents per query, restricted problems by Clarabel, the gap from the sorted scores;
:mod:`.working_set`) and ``"cvxpy"`` (every pair, :mod:`.methods`).
"""

from __future__ import annotations

from infpush_cvx.data.queries import QueryData
from infpush_cvx.solvers.query_infinite_push.methods import CVXPY
from infpush_cvx.solvers.query_infinite_push.problem import QueryInfinitePushProblem
from infpush_cvx.solvers.query_infinite_push.working_set import WorkingSet
from infpush_cvx.solvers.registry import Model
from infpush_cvx.solvers.engines.deadline import as_deadline
from infpush_cvx.solvers.result import SolverResult

MODEL = Model(name="query_infinite_push", problem=QueryInfinitePushProblem,
              methods=(WorkingSet, CVXPY), certified=WorkingSet,
              formulations=("query_infinite_push",))
METHODS = tuple(method.name for method in MODEL.methods)

__all__ = ["CVXPY", "METHODS", "MODEL", "QueryInfinitePushProblem", "WorkingSet",
           "query_infinite_push"]


def query_infinite_push(data: QueryData, lam: float, penalty: str = "l2",
                        threshold: float | str = 1.0, scaling: str = "paper",
                        method: str = "working_set", tol: float = 1e-6,
                        max_iter: int | None = None, warm_start=None, *,
                        time_limit: float | None = None, verbose: bool = False,
                        **options) -> SolverResult:
    """Minimise the Infinite Push over queries; returns a :class:`SolverResult`.

    ``data`` a QueryData (its sample and query weights included), ``lam`` in ``scaling``
    ("paper", or "seed": ``lam = lam_s / (M c)``, M the relevant documents' weight),
    ``penalty`` "l2" or "l1", ``threshold`` the lowest relevant label (``"each"``: every label
    level above the lowest, each query's losses averaged over them); ``method``
    "working_set" or "cvxpy" with ``options`` (``batch``; ``solver``); ``warm_start`` a result
    or a weight vector (working_set); ``time_limit`` seconds from this call, covering the
    problem's construction.
    """
    deadline = as_deadline(time_limit)  # started first: the limit covers the set-up
    problem = QueryInfinitePushProblem(data, lam, penalty=penalty, threshold=threshold,
                                       scaling=scaling)
    return MODEL.solve(method, problem, warm_start, deadline, tol=tol, max_iter=max_iter,
                       verbose=verbose, **options)
