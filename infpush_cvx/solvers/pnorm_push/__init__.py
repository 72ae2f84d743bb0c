"""The P-Norm Push (Rudin, JMLR 2009): a certified Newton solver and Rudin's boosting algorithm.

The regularised convex form (:func:`infpush_cvx.formulations.pnorm_push_problem`), paper scaling,
``s = Xp w``, ``t = Xn w``, averaging weights ``a_i = p_i / M``, ``b_j = q_j / N``::

    P(w) = (lam/2) ||w||^2 + (1/p) log sum_j b_j exp(p t_j) + log sum_i a_i exp(-s_i)

certified by the Fenchel dual of the two log-sum-exps (:mod:`.problem`): at the softmax weights
of w the gap is exactly ``||grad P(w)||^2 / (2 lam)``, reported relative to ``|P(w)|``.

Methods (``method=``, :mod:`.methods`): ``"newton"`` (default, certified), ``"boosting"``
(Rudin's algorithm, the features as weak rankers, unregularised, 100 rounds) and ``"cvxpy"``
(``solver=``, Clarabel by default). Each result's gap is the certificate at its final w.
"""

from __future__ import annotations

from numpy.typing import ArrayLike

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.registry import Model
from infpush_cvx.solvers.engines.common import as_bipartite, data_first
from infpush_cvx.solvers.pnorm_push.methods import CVXPY, Boosting, Newton
from infpush_cvx.solvers.pnorm_push.problem import PNormPushProblem
from infpush_cvx.solvers.result import SolverResult

__all__ = ["CVXPY", "Boosting", "MODEL", "METHODS", "Newton", "PNormPushProblem", "pnorm_push"]

MODEL = Model(name="pnorm_push", problem=PNormPushProblem, methods=(Newton, Boosting, CVXPY),
              certified=Newton, formulations=("pnorm_push",))
METHODS = tuple(method.name for method in MODEL.methods)


@data_first
def pnorm_push(data: BipartiteData, lam: float | None = None, *, p: float = 1.0,
               method: str = "newton", tol: float = 1e-8, max_iter: int | None = None,
               warm_start: SolverResult | ArrayLike | None = None,
               wp: ArrayLike | None = None, wn: ArrayLike | None = None,
               time_limit: float | None = None, verbose: bool = False,
               **options) -> SolverResult:
    """Minimise the l2-regularised P-Norm Push (module docstring); a :class:`SolverResult`.

    ``data``: a :class:`~infpush_cvx.data.BipartiteData`, or the positives (m x d) and negatives
    (n x d), dense or sparse, as two arguments (``pnorm_push(Xp, Xn, lam)``); ``lam`` > 0 in
    paper scaling (required); ``p`` >= 1 the exponent (1: RankBoost's loss; Agarwal 2011
    compares 1, 4, 16, 64); ``method``: "newton" (default), "boosting" or "cvxpy" (with
    ``solver=``, the CVXPY solver); ``tol``: the target certified relative gap
    ``||grad P||^2 / (2 lam |P|)``; ``max_iter``: Newton steps or boosting rounds (100);
    ``warm_start``: a SolverResult or a weight vector ("newton", "boosting"); ``wp``, ``wn``:
    sample weights; ``time_limit``: seconds for the whole call; ``options``: the method's own
    (:mod:`.methods`; an option it has not is a TypeError naming it).

    The result's ``gap`` is the certified relative duality gap at the returned w (for every
    method), ``dual`` is None and ``info`` holds the dual point (``sigma``, ``rho``), its value
    ``dual_value``, ``p``, ``lam_paper`` and the absolute gap ``gap_abs``. A solve that stops
    before ``gap <= tol`` has an honest status and warns with a ConvergenceWarning.
    """
    problem = PNormPushProblem(as_bipartite(data, None, wp, wn), lam, p=p)
    # the time limit is a Deadline data_first started at the call
    return MODEL.solve(method, problem, warm_start, time_limit, tol=tol, max_iter=max_iter,
                       verbose=verbose, **options)
