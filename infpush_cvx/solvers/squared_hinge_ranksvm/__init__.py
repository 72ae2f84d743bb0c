"""The squared-hinge (L2-loss) RankSVM of Lee & Lin, "Large-scale linear RankSVM", Neural
Computation 26(4), 2014, bipartite, in the project's paper scaling (docs/mathematics.md)::

    P(w) = (lam/2) ||w||^2 + (1/W) sum_ij p_i q_j max(0, 1 - (s_i - t_j))^2

``s = Xp w``, ``t = Xn w``, sample weights p, q (ones unweighted), ``W = sum p * sum q``.
Method: ``"newton"`` (Newton directions from the sorted scores, by conjugate gradients or a
formed Hessian, certified by a duality gap: :mod:`.newton`). Its CVXPY problem:
:func:`infpush_cvx.formulations.squared_hinge_ranksvm_problem`.
"""

from __future__ import annotations

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.registry import Model
from infpush_cvx.solvers.engines.common import data_first
from infpush_cvx.solvers.result import SolverResult
from infpush_cvx.solvers.squared_hinge_ranksvm.newton import Newton
from infpush_cvx.solvers.squared_hinge_ranksvm.problem import SquaredHingeRankSVMProblem

MODEL = Model(name="squared_hinge_ranksvm", problem=SquaredHingeRankSVMProblem,
              methods=(Newton,), certified=Newton, formulations=("squared_hinge_ranksvm",))
METHODS = tuple(method.name for method in MODEL.methods)

__all__ = ["METHODS", "MODEL", "Newton", "SquaredHingeRankSVMProblem", "squared_hinge_ranksvm"]


@data_first
def squared_hinge_ranksvm(data: BipartiteData, lam: float, scaling: str = "paper",
                          method: str = "newton", tol: float = 1e-6, max_iter: int | None = None,
                          warm_start=None, *, wp=None, wn=None, time_limit: float | None = None,
                          verbose: bool = False, **options) -> SolverResult:
    """Minimise the squared-hinge RankSVM objective; returns a :class:`SolverResult`.

    ``data`` is a BipartiteData, or the positives and negatives as two arguments
    (``squared_hinge_ranksvm(Xp, Xn, lam)``, arrays or scipy.sparse); ``wp``, ``wn`` sample
    weights; ``scaling`` "paper" or "seed" (lambda converted as for RankSVM:
    ``lam = 2 lam_s / W``); ``warm_start`` a result or a weight vector; ``time_limit`` seconds
    from this call; ``options`` the method's own (``max_cg``, ``hessian``: :class:`.Newton`).
    """
    if wp is not None or wn is not None:
        data = BipartiteData(data.Xp, data.Xn, wp, wn)
    problem = SquaredHingeRankSVMProblem(data, lam, scaling=scaling)
    # the time limit is a Deadline data_first started at the call
    return MODEL.solve(method, problem, warm_start, time_limit, tol=tol, max_iter=max_iter,
                       verbose=verbose, **options)
