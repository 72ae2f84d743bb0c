"""The Infinite Push (Agarwal, SDM 2011), l2 or l1 penalty, by first-order and certified methods.

Paper scaling (docs/mathematics.md, sections 1.2 and 2.1)::

    P(w) = lam pen(w) + max_j (1/m) sum_i max(0, 1 - (x_i^+ - x_j^-) . w),
    pen(w) = ||w||^2 / 2 (l2)  or  ||w||_1 (l1, Rakotomamonjy, ICML 2012)

The problem is :class:`~.problem.InfinitePushProblem`; the methods (``method=``) are the classes
of :mod:`.methods`: ``"working_set"`` (default, certified, l2 and l1), ``"fista"`` and
``"paper"`` (l2) and ``"admm"`` (l1 and l2). Kernels (l2): ``kernel="linear" | "rbf" | "poly" |
callable`` with ``gamma``, ``degree``, ``coef0`` as in scikit-learn's ``SVC`` learns
``f = sum_k beta_k K(z_k, .)`` over the training rows ``[Xp; Xn]``: every method runs on the
rows of a factor ``K = L L^T``, which is the same problem (:mod:`infpush_cvx.data.kernels`,
:mod:`infpush_cvx.solvers.engines.kernel`); the result's ``w`` is beta.
"""

from __future__ import annotations

from numpy.typing import ArrayLike

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.registry import Model
from infpush_cvx.solvers.engines.common import as_bipartite, data_first, method_options
from infpush_cvx.solvers.infinite_push.methods import ADMM, DualFISTA, PaperGradient, WorkingSet
from infpush_cvx.solvers.infinite_push.problem import InfinitePushProblem
from infpush_cvx.solvers.result import SolverResult

MODEL = Model(name="infinite_push", problem=InfinitePushProblem,
              methods=(WorkingSet, DualFISTA, PaperGradient, ADMM), certified=WorkingSet,
              formulations=("infinite_push", "infinite_push_dual"))

#: The method names by penalty.
METHODS = {penalty: MODEL.method_names(penalty=penalty) for penalty in ("l2", "l1")}


@data_first
def infinite_push(data: BipartiteData, lam: float, penalty: str = "l2",
                  scaling: str = "paper", method: str = "working_set", tol: float = 1e-6,
                  max_iter: int | None = None, warm_start: SolverResult | ArrayLike | None = None,
                  *, wp: ArrayLike | None = None, wn: ArrayLike | None = None,
                  time_limit: float | None = None, kernel=None, gamma="scale", degree: int = 3,
                  coef0: float = 0.0, verbose: bool = False, **options) -> SolverResult:
    """Minimise the Infinite Push objective; returns a :class:`~.result.SolverResult`.

    ``data`` is a :class:`BipartiteData` (or the arrays: ``infinite_push(Xp, Xn, lam, ...)``,
    :func:`~infpush_cvx.solvers.engines.common.data_first`), ``wp``, ``wn`` sample weights of
    the positives and negatives (``working_set`` only: the loss becomes
    ``max_j (1/M) sum_i wp_i h_ij``, ``M = sum wp``); ``lam``, ``penalty`` ("l2" or "l1"),
    ``scaling`` ("paper" or "seed") and the kernel (``kernel``, ``gamma``, ``degree``,
    ``coef0``; l2 only) make the :class:`~.problem.InfinitePushProblem`. ``method``, ``tol``,
    ``max_iter`` (None: the method's default), ``verbose`` and ``options`` make the method
    (:mod:`.methods`: ``eta0`` for ``"paper"``, ``rho`` for ``"admm"``, ``options`` and
    ``detect_degenerate`` for ``"working_set"``, ``nystroem`` and ``nystroem_seed`` for a
    kernel problem; an option the method has not is a TypeError naming it, a None one is its
    default). ``warm_start``: a previous SolverResult or dual array (m x n), or for
    ``working_set`` a weight vector. ``time_limit``: seconds (None or ``inf``: no limit),
    counted from the call and shared by every stage; the solve then stops with status
    "time_limit".

    ``verbose=True`` prints a header, one line per iteration (per round for ``working_set``, at
    most about 50 lines for the first-order methods and ADMM) and a summary to stderr (through
    the logger ``infpush_cvx.solvers``; :mod:`infpush_cvx._logging`). A solve that stops before
    its certificate holds returns its best point with the status and a ``message`` saying why,
    and warns with a :class:`~.result.ConvergenceWarning`.
    """
    problem = InfinitePushProblem(as_bipartite(data, None, wp, wn), lam, penalty=penalty,
                                  scaling=scaling, kernel=kernel, gamma=gamma, degree=degree,
                                  coef0=coef0)
    return MODEL.solve(method, problem, warm_start, time_limit, tol=tol, max_iter=max_iter,
                       verbose=verbose, **method_options(options))


__all__ = ["ADMM", "DualFISTA", "InfinitePushProblem", "METHODS", "MODEL", "PaperGradient",
           "WorkingSet", "infinite_push"]
