"""Rank2Plan: the weighted-pair LP (docs/mathematics.md, section 4.1; [Rank2PlanNote], eq. 1)

    minimise_beta  sum_k s_k max(0, g_k - (X_{j_k} - X_{i_k}) beta) + lam ||beta||_1

Pair k of a :class:`~infpush_cvx.data.PairData` asks row ``i_k`` to score at least ``g_k`` (its
``margin``) below row ``j_k`` (lower is better) with importance ``s_k``. The problem is
:class:`Rank2PlanProblem`; its methods (:mod:`.methods`) are :class:`CCG` (default, certified:
column and constraint generation over HiGHS), :class:`Smoothed` (Nesterov smoothing) and
:class:`CVXPY`. For lam at or above :func:`rank2plan_lambda_max` beta* = 0 (the smallest such
lambda when every margin is positive; docs/mathematics.md, section 4.2).
"""

from __future__ import annotations

from infpush_cvx._validation import check_time_limit
from infpush_cvx.data.containers import PairData
from infpush_cvx.solvers.registry import Model
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.rank2plan.methods import CCG, CVXPY, Smoothed
from infpush_cvx.solvers.rank2plan.problem import Rank2PlanProblem
from infpush_cvx.solvers.result import SolverResult

__all__ = ["CCG", "CVXPY", "METHODS", "MODEL", "Rank2PlanProblem", "Smoothed",
           "rank2plan_lambda_max", "rank2plan_lp"]

MODEL = Model(name="rank2plan", problem=Rank2PlanProblem, methods=(CCG, Smoothed, CVXPY),
              certified=CCG, formulations=("rank2plan_lp",))
METHODS = tuple(method.name for method in MODEL.methods)


def rank2plan_lambda_max(data: PairData) -> float:
    """``||D^T (s * 1[g > 0])||_inf`` of ``data`` (a :class:`PairData`): for any lam at or above
    it beta = 0 is optimal. Pick lam as a fraction of it (a smaller fraction gives a denser
    beta). Computed on the data scaled to unit size, so it neither overflows nor underflows
    before the result does."""
    return Rank2PlanProblem(data, 0.0).lambda_max()


def rank2plan_lp(data: PairData, lam: float, *, method: str = "ccg", tol: float | None = None,
                 max_iter: int | None = None, warm_start=None, time_limit: float | None = None,
                 verbose: bool = False, **options) -> SolverResult:
    """Fit the Rank2Plan weighted-pair LP of ``data`` (a :class:`PairData`;
    ``PairData(X, i, j, margin, weight)`` for arrays) with l1 weight ``lam >= 0``.

    ``method`` is "ccg" (:class:`CCG`), "smoothed" (:class:`Smoothed`) or "cvxpy"
    (:class:`CVXPY`); ``options`` are that method's own options (an option it does not have is
    a TypeError naming it). ``tol`` is the certified relative gap of an "optimal" result
    (default 1e-6; for "cvxpy" also the solver's relative-gap tolerance, unset by default).
    ``max_iter``: restricted LPs for "ccg" (default 100), gradient steps for "smoothed"
    (default 2000). ``warm_start``: a previous result or a beta ("ccg" then skips its smoothed
    warm start; "smoothed" starts there). ``time_limit``: wall-clock seconds from this call
    (None or ``inf``: none), shared by every stage and handed to HiGHS and the CVXPY solver;
    a run that reaches it reports status "time_limit". ``verbose`` logs the progress to stderr
    (the logger ``infpush_cvx.solvers`` at INFO): a header, the iterations (of the LP scaled to
    unit size) and a summary; for "cvxpy" CVXPY's and its solver's output too.

    Every method solves the LP on the data centred and scaled to unit size by powers of two
    (exact), so badly scaled data give the answer of well scaled ones; data whose LP cannot be
    represented in float64 are a ValueError.

    Returns a :class:`SolverResult`: ``w`` (also ``beta``), ``objective`` (recomputed),
    ``gap`` (certified relative gap), ``status``, ``iterations``, ``time``, ``history``,
    ``dual`` (the pair multipliers pi), ``info``.
    """
    deadline = Deadline(check_time_limit(time_limit))
    run = {} if tol is None else {"tol": tol}
    return MODEL.solve(method, Rank2PlanProblem(data, lam), warm_start, deadline,
                       max_iter=max_iter, verbose=verbose, **run, **options)
