"""The squared-hinge (L2-loss) RankSVM of Lee & Lin, "Large-scale linear RankSVM", Neural
Computation 26(4), 2014, bipartite, in the project's paper scaling (docs/mathematics.md)::

    P(w) = (lam/2) ||w||^2 + (1/W) sum_ij p_i q_j max(0, 1 - (s_i - t_j))^2

``s = Xp w``, ``t = Xn w``, sample weights p, q (ones unweighted), ``W = sum p * sum q``.
Method: ``"newton"`` (truncated Newton on Hessian-vector products from the sorted scores,
certified by a duality gap: :mod:`.newton`). Its CVXPY problem:
:func:`infpush_cvx.formulations.squared_hinge_ranksvm_problem`.
"""

from __future__ import annotations

from infpush_cvx._validation import check_time_limit
from infpush_cvx.solvers.registry import Model
from infpush_cvx.solvers.engines.common import as_bipartite
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.result import SolverResult
from infpush_cvx.solvers.squared_hinge_ranksvm.newton import Newton
from infpush_cvx.solvers.squared_hinge_ranksvm.problem import SquaredHingeRankSVMProblem

MODEL = Model(name="squared_hinge_ranksvm", problem=SquaredHingeRankSVMProblem,
              methods=(Newton,), certified=Newton, formulations=("squared_hinge_ranksvm",))
METHODS = tuple(method.name for method in MODEL.methods)

__all__ = ["METHODS", "MODEL", "Newton", "SquaredHingeRankSVMProblem", "squared_hinge_ranksvm"]


def squared_hinge_ranksvm(data, lam: float, scaling: str = "paper", method: str = "newton",
                          tol: float = 1e-6, max_iter: int | None = None, warm_start=None, *,
                          Xn=None, wp=None, wn=None, time_limit: float | None = None,
                          verbose: bool = False, **options) -> SolverResult:
    """Minimise the squared-hinge RankSVM objective; returns a :class:`SolverResult`.

    ``data`` is a BipartiteData, or the positives' rows with ``Xn=`` the negatives' (arrays or
    scipy.sparse); ``wp``, ``wn`` sample weights; ``scaling`` "paper" or "seed" (lambda
    converted as for RankSVM: ``lam = 2 lam_s / W``); ``warm_start`` a result or a weight
    vector; ``time_limit`` seconds from this call; ``options`` the method's own (``max_cg``).
    """
    deadline = Deadline(check_time_limit(time_limit))
    problem = SquaredHingeRankSVMProblem(as_bipartite(data, Xn, wp, wn), lam, scaling=scaling)
    return MODEL.solve(method, problem, warm_start, deadline, tol=tol, max_iter=max_iter,
                       verbose=verbose, **options)
