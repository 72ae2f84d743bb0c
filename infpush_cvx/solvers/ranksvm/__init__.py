"""Bipartite RankSVM (Agarwal, SDM 2011, eq. 4.18 and Figure 3), certified and first-order methods.

Paper scaling (docs/mathematics.md, section 3.1; its dual: section 3.2)::

    P(w) = (lam/2) ||w||^2 + (1/(m n)) sum_ij max(0, 1 - (x_i^+ - x_j^-) . w)

with dual ``min Q(alpha)`` over the box ``0 <= alpha_ij <= C/(m n)`` (projection = clipping).
The problem is :class:`~.problem.RankSVMProblem`. Methods (``method=``):
``"smoothing_newton"`` (default; :class:`~.methods.SmoothingNewton`), and the bipartite methods
``"working_set"``, ``"fista"`` and ``"paper"`` (Figure 3) of
:mod:`infpush_cvx.solvers.infinite_push.methods`. Kernels: as for the Infinite Push.
"""

from __future__ import annotations

from numpy.typing import ArrayLike

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.registry import Model
from infpush_cvx.solvers.engines.common import as_bipartite, data_first, method_options
from infpush_cvx.solvers.infinite_push.methods import DualFISTA, PaperGradient, WorkingSet
from infpush_cvx.solvers.ranksvm.methods import SmoothingNewton
from infpush_cvx.solvers.ranksvm.problem import RankSVMProblem
from infpush_cvx.solvers.result import SolverResult

MODEL = Model(name="ranksvm", problem=RankSVMProblem,
              methods=(SmoothingNewton, WorkingSet, DualFISTA, PaperGradient),
              certified=SmoothingNewton, formulations=("ranksvm", "ranksvm_dual"))

#: The method names.
METHODS = MODEL.method_names()


@data_first
def ranksvm(data: BipartiteData, lam: float, scaling: str = "paper",
            method: str = "smoothing_newton", tol: float = 1e-6, max_iter: int | None = None,
            warm_start: SolverResult | ArrayLike | None = None, *,
            wp: ArrayLike | None = None, wn: ArrayLike | None = None,
            time_limit: float | None = None, kernel=None, gamma="scale", degree: int = 3,
            coef0: float = 0.0, verbose: bool = False, **options) -> SolverResult:
    """Minimise the bipartite RankSVM objective; returns a :class:`~.result.SolverResult`.

    Arguments as in :func:`infpush_cvx.solvers.infinite_push.infinite_push` (the l2 penalty
    only; ``eta0`` is an option of ``"paper"``, ``options`` of ``"working_set"``). With sample
    weights ``wp``, ``wn`` (``smoothing_newton`` and ``working_set``) the loss is
    ``(1/(M N)) sum_ij wp_i wn_j h_ij``, ``M = sum wp``, ``N = sum wn``.
    """
    problem = RankSVMProblem(as_bipartite(data, None, wp, wn), lam, scaling=scaling,
                             kernel=kernel, gamma=gamma, degree=degree, coef0=coef0)
    return MODEL.solve(method, problem, warm_start, time_limit, tol=tol, max_iter=max_iter,
                       verbose=verbose, **method_options(options))


__all__ = ["METHODS", "MODEL", "RankSVMProblem", "SmoothingNewton", "ranksvm"]
