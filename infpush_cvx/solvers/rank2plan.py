"""Solvers for the Rank2Plan weighted-pair LP (formulations.md section 4, seed 002).

    minimise_beta  sum_k s_k max(0, g_k - (X_{j_k} - X_{i_k}) beta) + lam ||beta||_1

Pair k asks row ``i_k`` to score at least ``g_k`` below row ``j_k`` (lower is better) with importance
``s_k``. Three methods share one entry point, :func:`rank2plan_lp`:

- ``"smoothed"``: Nesterov smoothing + accelerated proximal gradient (low accuracy, fast);
  :mod:`._rank2plan_smoothed`.
- ``"ccg"`` (default): column and constraint generation (Dedieu, Mazumder & Wang, JMLR 2022) over
  HiGHS, warm-started by the smoothed method; exact, certified; :mod:`._rank2plan_ccg`.
- ``"cvxpy"``: the CVXPY LP of :func:`infpush_cvx.formulations.rank2plan_lp` with any solver.

Every result's ``objective`` is recomputed from beta with
:func:`infpush_cvx.objectives.rank2plan_objective`, and ``gap`` is the certified relative gap
``(P(beta) - g^T pi) / P(beta)`` of the full LP for a dual feasible pi.
"""

from __future__ import annotations

import time

import numpy as np

from .._validation import check_choice, check_scalar
from ..data import PairData
from ..objectives import rank2plan_objective
from .result import SolverResult
from ._rank2plan_ccg import solve_ccg
from ._rank2plan_ops import PairOperator
from ._rank2plan_smoothed import solve_smoothed

METHODS = ("ccg", "smoothed", "cvxpy")

#: Iteration budget of the smoothed warm start inside "ccg": enough to find the support roughly.
_CCG_WARM_ITER = 300


def _as_pairdata(X, i, j, gap, weight) -> PairData:
    if isinstance(X, PairData):
        if any(a is not None for a in (i, j, gap, weight)):
            raise TypeError("when the first argument is a PairData, i, j, gap and weight must be "
                            "omitted (they are part of the PairData)")
        return X
    if i is None or j is None:
        raise TypeError("i and j (the pair indices) are required when X is a matrix")
    return PairData(X, i, j, gap, weight)


def rank2plan_lambda_max(X, i=None, j=None, gap=None, weight=None) -> float:
    """``||D^T (s * 1[g > 0])||_inf``: for any lam at or above this value beta = 0 is optimal.

    Useful to pick lam as a fraction of it (a smaller fraction gives a denser beta).
    """
    return PairOperator(_as_pairdata(X, i, j, gap, weight)).lambda_max()


def rank2plan_lp(X, i=None, j=None, lam: float | None = None, gap=None, weight=None, *,
                 method: str = "ccg", tol: float = 1e-6, max_iter: int | None = None,
                 beta0=None, tau=None, solver: str | None = None, form: str = "compact",
                 time_limit: float = np.inf, **options) -> SolverResult:
    """Fit the Rank2Plan weighted-pair LP.

    Parameters
    ----------
    X : array (N x p), scipy.sparse matrix, or PairData
        State features; if a :class:`PairData`, omit ``i, j, gap, weight``.
    i, j : int arrays
        Pair k prefers state ``i[k]`` (lower score) over ``j[k]``.
    lam : float >= 0
        l1 penalty weight (required; pass it by name when X is a PairData).
    gap, weight : arrays, optional
        Required score gaps ``g_k >= 0`` (default 1) and importances ``s_k >= 0`` (default 1).
    method : {"ccg", "smoothed", "cvxpy"}
    tol : float
        Target certified relative gap.
    max_iter : int, optional
        Restricted LPs for "ccg" (default 100), gradient steps for "smoothed" (default 2000).
    beta0 : array, optional
        Warm start ("ccg" skips its smoothed warm start when given; "smoothed" starts there).
    tau : float or decreasing sequence, optional
        Smoothing parameters for "smoothed" (default: :func:`default_tau_schedule`).
    solver, form : str
        For "cvxpy": the CVXPY solver name (default: CVXPY's choice) and the formulation form.
    time_limit : float
        Wall-clock seconds; a run that reaches it reports status "time_limit".
    **options
        Method-specific options: "ccg" passes them to :func:`solve_ccg` (``n_pairs_init``,
        ``n_features_init``, ``max_features_add``, ``max_pairs_add``, ``lp_algorithm``,
        ``highs_options``); "smoothed" to
        :func:`solve_smoothed` (``stage_tol``, ``record_every``); "cvxpy" to ``Problem.solve``.

    Returns
    -------
    SolverResult
        ``w`` (also ``beta``), ``objective`` (recomputed), ``gap`` (certified relative gap),
        ``status``, ``iterations``, ``time``, ``history``, ``dual`` (pair multipliers pi), ``info``.
    """
    data = _as_pairdata(X, i, j, gap, weight)
    if lam is None:
        raise TypeError("lam is required (the l1 penalty weight, >= 0)")
    lam = check_scalar(lam, "lam", nonnegative=True)
    tol = check_scalar(tol, "tol", positive=True)
    check_choice(method, "method", METHODS)
    time_limit = check_scalar(time_limit, "time_limit", positive=True) \
        if np.isfinite(time_limit) else np.inf
    if max_iter is not None and (isinstance(max_iter, bool) or not isinstance(max_iter, int)
                                 or max_iter < 1):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if beta0 is not None:
        beta0 = np.asarray(beta0, dtype=np.float64)
        if beta0.shape != (data.n_features,) or not np.all(np.isfinite(beta0)):
            raise ValueError(f"beta0 must be a finite vector of length {data.n_features}")
    if tau is not None:
        taus = np.atleast_1d(np.asarray(tau, dtype=np.float64))
        if taus.ndim != 1 or taus.size == 0 or not np.all(np.isfinite(taus)) \
                or np.any(taus <= 0) or np.any(np.diff(taus) > 0):
            raise ValueError(f"tau must be a positive number or a nonincreasing sequence of "
                             f"positive numbers, got {tau!r}")
    if method == "cvxpy":
        return _solve_cvxpy(data, lam, solver=solver, form=form, **options)
    op = PairOperator(data)
    if method == "smoothed":
        return solve_smoothed(op, lam, beta0=beta0, tau=tau, tol=tol,
                              max_iter=2000 if max_iter is None else max_iter,
                              time_limit=time_limit, **options)
    t0 = time.perf_counter()
    pi0 = None
    warm = None
    if beta0 is None:
        warm = solve_smoothed(op, lam, tau=tau, tol=tol, max_iter=_CCG_WARM_ITER,
                              time_limit=time_limit, record_every=0)
        beta0, pi0 = warm.w, warm.dual
        if warm.status == "optimal":
            warm.method = "ccg"
            warm.info["warm_start"] = "smoothed (already certified)"
            return warm
    res = solve_ccg(op, lam, beta0=beta0, pi0=pi0, tol=tol,
                    max_iter=100 if max_iter is None else max_iter,
                    time_limit=time_limit - (time.perf_counter() - t0), **options)
    if warm is not None:
        res.info["warm_start_time"] = warm.time
        res.info["warm_start_iterations"] = warm.iterations
        res.info["warm_start_objective"] = warm.objective
    res.time = time.perf_counter() - t0
    return res


def _solve_cvxpy(data: PairData, lam: float, *, solver=None, form="compact",
                 **solve_options) -> SolverResult:
    """Solve the CVXPY problem of :func:`infpush_cvx.formulations.rank2plan_lp`.

    CVXPY's status is the certificate here (no full-LP gap is computed for this method)."""
    from ..formulations import rank2plan_lp as build  # imported late: CVXPY is slow to import

    t0 = time.perf_counter()
    prob = build(data, lam, form=form)
    prob.param_dict["lam"].value = lam
    prob.solve(solver=solver, **solve_options)
    elapsed = time.perf_counter() - t0
    w = prob.var_dict["w"].value
    stats = prob.solver_stats
    info = {"cvxpy_status": prob.status, "cvxpy_value": prob.value,
            "solver": stats.solver_name if stats else solver,
            "solve_time": stats.solve_time if stats else None}
    if w is None:
        return SolverResult(w=np.full(data.n_features, np.nan), objective=np.nan, gap=None,
                            status="failed", iterations=0, time=elapsed, method="cvxpy",
                            info=info)
    w = np.asarray(w, dtype=np.float64).ravel()
    # The multipliers live in constraints whose layout depends on the form: no gap from here.
    status = {"optimal": "optimal", "optimal_inaccurate": "stalled"}.get(prob.status, "failed")
    return SolverResult(w=w, objective=rank2plan_objective(data, w, lam), gap=None, status=status,
                        iterations=int(stats.num_iters or 0) if stats else 0, time=elapsed,
                        method="cvxpy", info=info)
