"""TopPush (Li, Jin & Zhou, "Top Rank Optimization in Linear Time", NIPS 2014), certified.

Primal, paper scaling (eq. 4 of the paper), ``s = Xp w``, ``t = Xn w``, ``c_i = 1/m`` (with
sample weights p of the positives: ``c_i = p_i / sum p``)::

    P(w) = (lam/2) ||w||^2 + sum_i c_i loss(max_j t_j - s_i)
    loss(z) = (1 + z)_+^2  (truncated quadratic, the paper's)   or   (1 + z)_+  (hinge)

certified by the gap to its dual over ``alpha >= 0``, ``beta >= 0``, ``sum alpha = sum beta``
(:mod:`.problem` derives it). Methods (``method=``, :mod:`.methods`): ``"interior_point"``
(default; Mehrotra's method over a working set of negatives, :mod:`.ipm`), ``"dual_agd"`` (the
paper's accelerated projected gradient on the dual) and ``"cvxpy"`` (``solver=``, Clarabel by
default). ``polish=True`` (native methods) refines a certified answer to the exact optimum on
its active sets (:mod:`.polish`).
"""

from __future__ import annotations

from numpy.typing import ArrayLike

from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.formulations._toppush import LOSSES
from infpush_cvx.solvers.registry import Model
from infpush_cvx.solvers.engines.common import data_first
from infpush_cvx.solvers.result import SolverResult
from infpush_cvx.solvers.toppush.methods import CVXPY, DualAGD, InteriorPoint
from infpush_cvx.solvers.toppush.problem import (TopPushProblem, data_lipschitz, dual_objective,
                                                 duality_gap, feasible_dual, loss_values,
                                                 primal_objective, w_of_dual)

__all__ = ["CVXPY", "DualAGD", "InteriorPoint", "LOSSES", "METHODS", "MODEL", "TopPushProblem",
           "data_lipschitz", "dual_objective", "duality_gap", "feasible_dual", "loss_values",
           "primal_objective", "toppush", "w_of_dual"]

MODEL = Model(name="toppush", problem=TopPushProblem, methods=(InteriorPoint, DualAGD, CVXPY),
              certified=InteriorPoint, formulations=("toppush",))
METHODS = tuple(method.name for method in MODEL.methods)


@data_first
def toppush(data: BipartiteData, lam: float, loss: str = "truncated_quadratic",
            method: str = "interior_point", tol: float = 1e-6, max_iter: int | None = None,
            warm_start: SolverResult | None = None, *, wp: ArrayLike | None = None,
            time_limit: float | None = None, verbose: bool = False,
            **options) -> SolverResult:
    """Minimise the TopPush objective (module docstring); returns a :class:`SolverResult`.

    ``data``: a :class:`BipartiteData`, or the positives and negatives as two arguments
    (``toppush(Xp, Xn, lam)``); ``lam`` > 0 in paper scaling; ``loss``: "truncated_quadratic"
    (the paper's) or "hinge"; ``method``: "interior_point" (default), "dual_agd" or "cvxpy";
    ``tol``: the certified relative duality gap at which a method stops (or a CVXPY answer is
    "optimal"); ``warm_start``: a previous TopPush result (its w starts "interior_point", its
    dual ``(alpha, beta)`` "dual_agd"); ``wp``: sample weights of the positives;
    ``time_limit``: seconds for the whole call; ``options``: the method's own (``polish`` for
    the native methods, ``solver`` for "cvxpy"; an option it has not is a TypeError naming it).
    The result's ``dual`` is ``(alpha, beta)``; its ``gap`` is certified for every method. An
    early stop warns with a ConvergenceWarning.
    """
    if wp is not None:
        data = BipartiteData(data.Xp, data.Xn, wp, data.wn)
    problem = TopPushProblem(data, lam, loss=loss)
    # the time limit is a Deadline data_first started at the call
    return MODEL.solve(method, problem, warm_start, time_limit, tol=tol, max_iter=max_iter,
                       verbose=verbose, **options)
