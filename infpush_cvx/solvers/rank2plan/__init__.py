"""Solvers for the Rank2Plan weighted-pair LP (docs/mathematics.md, section 4.1;
[Rank2PlanNote], eq. 1).

    minimise_beta  sum_k s_k max(0, g_k - (X_{j_k} - X_{i_k}) beta) + lam ||beta||_1

Pair k asks row ``i_k`` to score at least ``g_k`` (its ``margin``) below row ``j_k`` (lower is
better) with importance ``s_k``. Three methods share one entry point, :func:`rank2plan_lp`:

- ``"smoothed"``: Nesterov smoothing + accelerated proximal gradient (low accuracy, fast);
  :mod:`._rank2plan_smoothed`.
- ``"ccg"`` (default): column and constraint generation (Dedieu, Mazumder & Wang, JMLR 2022) over
  HiGHS, warm-started by the smoothed method; exact, certified; :mod:`._rank2plan_ccg`.
- ``"cvxpy"``: the CVXPY LP of :func:`infpush_cvx.formulations.rank2plan_lp_problem` with any
  solver (:mod:`._cvxpy_backend`), its answer certified by the gap below from CVXPY's
  multipliers ("unverified" without them).

Every result's ``objective`` is recomputed from beta with
:func:`infpush_cvx.formulations.objectives.rank2plan_objective`, and ``gap`` is the certified
relative gap ``(P(beta) - g^T pi) / P(beta)`` (:func:`~.result.relative_gap`) of the full LP for
a dual feasible pi. All methods solve the LP scaled to unit size (:mod:`._rank2plan_scaling`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from infpush_cvx._logging import log_progress, logs_progress
from infpush_cvx._validation import (check_choice, check_int, check_not_complex, check_not_text, check_scalar, check_time_limit, check_unused_options, check_vector, renamed_argument)
from infpush_cvx.data.containers import PairData
from infpush_cvx.formulations.objectives import rank2plan_objective
from infpush_cvx.solvers.engines.common import column_shift, shifted
from infpush_cvx.solvers.engines.cvxpy_backend import REL_GAP_OPTIONS as _CVXPY_REL_GAP
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.rank2plan.ccg import check_ccg_options, solve_ccg
from infpush_cvx.solvers.rank2plan.ops import PairOperator
from infpush_cvx.solvers.rank2plan.scaling import PairScaling
from infpush_cvx.solvers.rank2plan.smoothed import check_smoothed_options, solve_smoothed
from infpush_cvx.solvers.result import SolverResult, status_for_gap, warn_if_not_converged

METHODS = ("ccg", "smoothed", "cvxpy")

#: Iteration budget of the smoothed warm start inside "ccg": enough to find the support roughly.
_CCG_WARM_ITER = 300


def _as_pairdata(X, i, j, margin, weight, gap=None, stacklevel=4) -> PairData:
    """The PairData of a call: ``X`` itself, or ``PairData(X, i, j, margin, weight)`` for the
    raw arrays (``gap``: the deprecated name of ``margin``, warned at the solver's caller,
    ``stacklevel`` frames up)."""
    margin = renamed_argument(margin, "margin", gap, "gap", stacklevel=stacklevel)
    if isinstance(X, PairData):
        if any(a is not None for a in (i, j, margin, weight)):
            raise TypeError("when the first argument is a PairData, i, j, margin and weight must "
                            "be omitted (they are part of the PairData)")
        return X
    if i is None or j is None:
        raise TypeError("i and j (the pair indices) are required when X is a matrix")
    return PairData(X, i, j, margin, weight)


def rank2plan_lambda_max(X: ArrayLike | PairData, i: ArrayLike | None = None,
                         j: ArrayLike | None = None, margin: ArrayLike | None = None,
                         weight: ArrayLike | None = None, *, gap: ArrayLike | None = None
                         ) -> float:
    """``||D^T (s * 1[g > 0])||_inf``: for any lam at or above this value beta = 0 is optimal.

    Useful to pick lam as a fraction of it (a smaller fraction gives a denser beta). Computed on
    the data scaled to unit size, so it neither overflows nor underflows before the result does.
    """
    data = _as_pairdata(X, i, j, margin, weight, gap)
    scaling = PairScaling.of(data)
    return scaling.reduced_cost(PairOperator(scaling.data(data)).lambda_max())


@logs_progress
def rank2plan_lp(X: ArrayLike | PairData, i: ArrayLike | None = None,
                 j: ArrayLike | None = None, lam: float | None = None,
                 margin: ArrayLike | None = None, weight: ArrayLike | None = None, *,
                 method: str = "ccg", tol: float | None = None, max_iter: int | None = None,
                 warm_start: SolverResult | ArrayLike | None = None, tau: float | None = None,
                 solver: str | None = None, form: str | None = None,
                 time_limit: float | None = None, verbose: bool = False,
                 beta0: ArrayLike | None = None, gap: ArrayLike | None = None,
                 **options) -> SolverResult:
    """Fit the Rank2Plan weighted-pair LP.

    Parameters
    ----------
    X : array (N x p), scipy.sparse matrix, or PairData
        State features; if a :class:`PairData`, omit ``i, j, margin, weight``
        (``rank2plan_lp(data, lam)``: the second argument is then lam).
    i, j : int arrays
        Pair k prefers state ``i[k]`` (lower score) over ``j[k]``.
    lam : float >= 0
        l1 penalty weight (required; pass it by name when X is a PairData).
    margin, weight : arrays, optional
        Required score margins ``g_k >= 0`` (default 1) and importances ``s_k >= 0`` (default 1).
        ``gap=`` is the deprecated name of ``margin`` (one release).
    method : {"ccg", "smoothed", "cvxpy"}
    tol : float, optional
        Target certified relative gap (default 1e-6). For "cvxpy" it becomes the solver's
        relative-gap tolerance (Clarabel ``tol_gap_rel``, ECOS ``reltol``, SCS ``eps_rel``;
        other solvers refuse it) as well as the certified gap its answer must reach to be
        "optimal" (default 1e-6 there too).
    max_iter : int, optional
        Restricted LPs for "ccg" (default 100), gradient steps for "smoothed" (default 2000).
    warm_start : SolverResult or array, optional
        A previous result or a weight vector beta ("ccg" skips its smoothed warm start when
        given; "smoothed" starts there). ``beta0`` is its deprecated name (one release).
    tau : float or decreasing sequence, optional
        Smoothing parameters for "smoothed" and for the warm start of "ccg" (default:
        :func:`default_tau_schedule`).
    solver, form : str, optional
        For "cvxpy" only: the CVXPY solver name (default: CVXPY's choice; Clarabel when a
        ``time_limit`` or ``tol`` is given) and the formulation form (default "compact").
    time_limit : float, optional
        Wall-clock seconds from the call (None or ``inf``: no limit), shared by every stage and
        handed to HiGHS and to the CVXPY solver; a run that reaches it reports status
        "time_limit". With "cvxpy", a large problem or a solver without a time-limit option is
        solved in a child process stopped at the limit (:mod:`._cvxpy_backend`).
    verbose : bool, default False
        True prints the progress to stderr (through the logger ``infpush_cvx.solvers`` at INFO,
        or the application's own logging configuration when it shows INFO records): a header,
        one line per restricted LP for "ccg" (features, explicit and linearised pairs, seconds
        in HiGHS), at most about 50 lines for "smoothed" (tau; its gap is certified at the end
        only), and a summary. Iteration objectives are those of the LP scaled to unit size (the
        header gives the factor to the caller's units). For "cvxpy", ``verbose=True`` is passed
        to ``Problem.solve`` (CVXPY's and the solver's own output). False prints nothing.
    **options
        Method-specific options: "ccg" takes ``n_pairs_init``, ``n_features_init``,
        ``max_features_add``, ``max_pairs_add``, ``lp_algorithm``, ``highs_options`` (see
        :func:`solve_ccg`); "smoothed" ``stage_tol``, ``record_every`` (see
        :func:`solve_smoothed`); "cvxpy" passes them to ``Problem.solve``.

    An option the chosen method does not use is refused with a TypeError naming it.

    Every method solves the LP on the data scaled to unit size by powers of two
    (:mod:`._rank2plan_scaling`, exact), so badly scaled ``X``, ``gap`` or ``weight`` give the
    same answer as well scaled ones; data whose LP cannot be represented in float64 are refused
    with a ValueError. For ``lam >= rank2plan_lambda_max(...)`` every method returns the exact
    answer ``beta = 0`` with its certificate, without solving.

    Returns
    -------
    SolverResult
        ``w`` (also ``beta``), ``objective`` (recomputed), ``gap`` (certified relative gap),
        ``status``, ``iterations``, ``time``, ``history``, ``dual`` (pair multipliers pi), ``info``.
    """
    deadline = Deadline(check_time_limit(time_limit))
    if isinstance(X, PairData) and lam is None and j is None and np.ndim(i) == 0:
        lam, i = i, None  # rank2plan_lp(data, lam): the solver front's data-first form
    data = _as_pairdata(X, i, j, margin, weight, gap, stacklevel=5)  # 5: through logs_progress
    if lam is None:
        raise TypeError("lam is required (the l1 penalty weight, >= 0)")
    lam = check_scalar(lam, "lam", nonnegative=True)
    check_choice(method, "method", METHODS)
    warm_start = renamed_argument(warm_start, "warm_start", beta0, "beta0", stacklevel=4)
    check_unused_options(method, {"max_iter": max_iter, "warm_start": warm_start, "tau": tau,
                                  "solver": solver, "form": form},
                         {"max_iter": ("ccg", "smoothed"), "warm_start": ("ccg", "smoothed"),
                          "tau": ("ccg", "smoothed"), "solver": ("cvxpy",),
                          "form": ("cvxpy",)})
    if method == "ccg":
        check_ccg_options(options)
    elif method == "smoothed":
        check_smoothed_options(options)
    if tol is not None:
        tol = check_scalar(tol, "tol", positive=True)
    if max_iter is not None:
        max_iter = check_int(max_iter, "max_iter", minimum=1)
    if isinstance(warm_start, SolverResult):
        warm_start = warm_start.w
    if warm_start is not None:
        warm_start = check_vector(warm_start, "warm_start", length=data.n_features)
    taus = None if tau is None else _check_tau(tau)

    data = _centred(data)
    scaling = PairScaling.of(data)
    scaling.check(data)
    unit = scaling.data(data)
    lam_unit = scaling.lam(lam)
    op = PairOperator(unit)
    factor = scaling.objective(1.0)  # unit-LP objective -> the caller's units
    log_progress(f"rank2plan_lp {method}: {data.n_states} states, {data.n_features} features, "
                 f"{data.n_pairs} pairs, lambda {lam:.4g}, tol "
                 f"{'default' if tol is None else format(tol, 'g')}"
                 + ("" if factor == 1.0 else f"; the objectives of the iterations are those of "
                                             f"the LP scaled to unit size, times {factor:g} in "
                                             f"the caller's units"))
    if lam_unit >= op.lambda_max():
        res = _zero_solution(op, lam_unit, method)
    elif method == "cvxpy":
        res = _solve_cvxpy(unit, lam_unit, solver=solver, form=form or "compact", tol=tol,
                           deadline=deadline, verbose=verbose, **options)
    else:
        tol = 1e-6 if tol is None else tol
        beta_unit = None if warm_start is None else scaling.beta_in(warm_start)
        tau_unit = None if taus is None else scaling.tau_in(taus)
        if method == "smoothed":
            res = solve_smoothed(op, lam_unit, beta0=beta_unit, tau=tau_unit, tol=tol,
                                 max_iter=2000 if max_iter is None else max_iter,
                                 deadline=deadline, **options)
        else:
            res = _solve_ccg(op, lam_unit, beta0=beta_unit, tau=tau_unit, tol=tol,
                             max_iter=100 if max_iter is None else max_iter, deadline=deadline,
                             options=options)
    return _in_caller_units(res, scaling, data, lam, tol, deadline)


def _centred(data: PairData) -> PairData:
    """The same LP with every column of X far from zero shifted towards it
    (:func:`._common.centred`): it sees X only through the differences ``X_j - X_i``, so a
    common shift of the rows changes nothing in exact arithmetic, but an offset of 1e4 on a
    column turned a certified solve into "failed" (the LP's entries lost their digits, and
    the unit scaling divided by the offset rather than by the spread)."""
    shift = column_shift(data.X)
    if shift is None:
        return data
    return PairData(shifted(data.X, shift), data.i, data.j, data.margin, data.weight)


def _check_tau(tau) -> np.ndarray:
    """A positive number or a nonincreasing sequence of them, as a 1-D array (strings, which
    NumPy would parse, booleans and complex numbers are refused with a TypeError)."""
    if isinstance(tau, (bool, np.bool_)):
        raise TypeError(f"tau must be a number or a sequence of numbers, got {tau!r}")
    check_not_text(tau, "tau", "number or sequence")
    check_not_complex(tau, "tau")
    try:
        taus = np.atleast_1d(np.asarray(tau, dtype=np.float64))
    except (TypeError, ValueError):
        raise TypeError(f"tau must be a number or a sequence of numbers, got {tau!r}") from None
    if taus.ndim != 1 or taus.size == 0 or not np.all(np.isfinite(taus)) \
            or np.any(taus <= 0) or np.any(np.diff(taus) > 0):
        raise ValueError(f"tau must be a positive number or a nonincreasing sequence of "
                         f"positive numbers, got {tau!r}")
    return taus


def _solve_ccg(op, lam, *, beta0, tau, tol, max_iter, deadline, options) -> SolverResult:
    """Column and constraint generation, warm-started by a short smoothed run unless beta0."""
    pi0 = None
    warm = None
    if beta0 is None:
        log_progress(f"rank2plan_lp ccg: warm start by the smoothed method (at most "
                     f"{_CCG_WARM_ITER} steps)")
        warm = solve_smoothed(op, lam, tau=tau, tol=tol, max_iter=_CCG_WARM_ITER,
                              deadline=deadline, record_every=0)
        if warm.status == "optimal":
            warm.method = "ccg"
            warm.info["warm_start"] = "smoothed (already certified)"
            return warm
        beta0, pi0 = warm.w, warm.dual
    res = solve_ccg(op, lam, beta0=beta0, pi0=pi0, tol=tol, max_iter=max_iter,
                    deadline=deadline, **options)
    if warm is not None:
        res.info["warm_start_time"] = warm.time
        res.info["warm_start_iterations"] = warm.iterations
        res.info["warm_start_objective"] = warm.objective
    return res


def _zero_solution(op: PairOperator, lam: float, method: str) -> SolverResult:
    """beta = 0, certified by ``pi = s 1[g > 0]`` (feasible for lam >= lambda_max, and
    ``g^T pi = P(0)``: a zero gap)."""
    pi = op.s * (op.g > 0)
    cert = op.certificate(np.zeros(op.p), pi, lam)
    return SolverResult(w=np.zeros(op.p), objective=cert["primal"], gap=cert["gap"],
                        status="optimal", iterations=0, time=0.0, method=method,
                        history={"objective": [cert["primal"]], "gap": [cert["gap"]]},
                        dual=cert["pi"],
                        info={"lower_bound": cert["dual"], "lambda_max": op.lambda_max(),
                              "dual_infeasibility": cert["dual_infeasibility"]})


#: ``info`` entries and ``history`` columns in objective units (times ``b c``).
_OBJECTIVE_KEYS = ("lower_bound", "smoothed_objective", "smoothing_bound",
                   "warm_start_objective", "cvxpy_value")
_HISTORY_OBJECTIVE_KEYS = ("objective", "lower_bound", "smoothed_objective")


def _in_caller_units(res: SolverResult, scaling: PairScaling, data: PairData, lam: float,
                     tol, deadline: Deadline) -> SolverResult:
    """The result of the unit-sized LP for the caller's data (:mod:`._rank2plan_scaling`).

    The objective is recomputed from the caller's data; the relative gap is unchanged; the
    status is made to agree with the gap (:func:`~.result.status_for_gap`).
    """
    info = dict(res.info)
    for key in _OBJECTIVE_KEYS:
        if info.get(key) is not None:
            info[key] = scaling.objective(info[key])
    for key in ("dual_infeasibility", "lambda_max"):
        if info.get(key) is not None:
            info[key] = scaling.reduced_cost(info[key])
    if info.get("sigma_max") is not None:  # sigma_max(Xt^T Xt), Xt = s D: (a c)^2
        info["sigma_max"] = scaling.reduced_cost(scaling.reduced_cost(info["sigma_max"]))
    if info.get("tau") is not None:
        info["tau"] = scaling.tau_out(info["tau"])
    if info.get("tau_schedule") is not None:
        info["tau_schedule"] = [scaling.tau_out(t) for t in info["tau_schedule"]]
    if info.get("trust_radius") is not None:
        info["trust_radius"] = float(scaling.beta_out(info["trust_radius"]))
    history = dict(res.history)
    for key in _HISTORY_OBJECTIVE_KEYS:
        if key in history:
            history[key] = [scaling.objective(v) for v in history[key]]
    if "tau" in history:
        history["tau"] = [scaling.tau_out(t) for t in history["tau"]]
    # the LP was solved on X / 2**ex, gap / 2**eg, weight / 2**es
    info["unit_scaling_exponents"] = {"X": scaling.ex, "gap": scaling.eg, "weight": scaling.es}
    w = scaling.beta_out(res.w)
    objective = rank2plan_objective(data, w, lam) if np.all(np.isfinite(w)) else np.nan
    status = res.status if tol is None else status_for_gap(res.status, res.gap, tol)
    result = SolverResult(w=w, objective=objective, gap=res.gap, status=status,
                          iterations=res.iterations, time=deadline.elapsed(), method=res.method,
                          history=history,
                          dual=None if res.dual is None else scaling.dual(res.dual),
                          info=info, message=res.message)
    warn_if_not_converged(result)
    return result


#: The solver used by "cvxpy" when a time limit or tol is given without one.
_CVXPY_DEFAULT = "CLARABEL"
#: The certified relative gap at which a CVXPY answer is "optimal" when no ``tol`` is given.
_CVXPY_CERTIFY_TOL = 1e-6


def _cvxpy_solver_options(solver, tol, deadline: Deadline, solve_options: dict):
    """``(solver, options)`` with ``tol`` translated into the solver's own option name; a
    TypeError for a solver without one. (The time left is added by the backend.)"""
    options = dict(solve_options)
    if solver is None and (tol is not None or deadline.limit is not None):
        solver = _CVXPY_DEFAULT
    name = None if solver is None else str(solver).upper()
    if tol is not None:
        if name not in _CVXPY_REL_GAP:
            raise TypeError(f"tol is not supported with method='cvxpy' and solver={solver!r}; "
                            f"use one of {sorted(_CVXPY_REL_GAP)} or pass the solver's own "
                            f"tolerance options")
        options[_CVXPY_REL_GAP[name]] = tol
    return name, options


def _solve_cvxpy(data: PairData, lam: float, *, solver=None, form="compact", tol=None,
                 deadline: Deadline, verbose: bool = False, **solve_options) -> SolverResult:
    """Solve :func:`infpush_cvx.formulations.rank2plan_lp_problem` through the CVXPY backend
    (:mod:`._cvxpy_backend`: statuses, time limit) and certify its answer.

    The certificate is the project's (:meth:`PairOperator.certificate`): ``P(beta)`` at CVXPY's
    beta against the dual bound of its hinge multipliers pi (``problem.constraints[-1]``),
    clipped to ``[0, s]`` and scaled into ``||D^T pi||_inf <= lam``, or of the same pi repaired
    first (:meth:`PairOperator.repaired_dual`), whichever bound is sharper. "optimal" only when that
    relative gap is at most ``tol`` (default 1e-6); without multipliers the answer is
    "unverified". A failed solve has no point: beta is NaN and the message names the cause."""
    from infpush_cvx.solvers.engines import cvxpy_backend as backend

    solver, options = _cvxpy_solver_options(solver, tol, deadline, solve_options)
    size = int(data.X.nnz if hasattr(data.X, "nnz") else data.X.size) + data.n_pairs
    # the builder by name: imported (with CVXPY) where the problem is built
    out = backend.solve("infpush_cvx.formulations:rank2plan_lp_problem", (data, lam),
                        {"form": form}, solver=solver, options=options, deadline=deadline,
                        verbose=verbose, size=size)
    info = {"cvxpy_status": out.cvxpy_status, "cvxpy_value": out.value,
            "solver": out.info.get("solver", solver), "solve_time": out.info.get("solve_time"),
            "solver_options": out.info.get("solver_options", options),
            "stage_times": out.info.get("stage_times"),
            "isolated": out.info.get("isolated", False)}
    if not out.has_point:
        status = "time_limit" if out.status == "time_limit" else "failed"
        return SolverResult(w=np.full(data.n_features, np.nan), objective=np.nan, gap=None,
                            status=status, iterations=out.iterations, time=deadline.elapsed(),
                            method="cvxpy", info=info,
                            message=backend.failure_message(out, solver))
    w = out.values["w"].ravel()
    pi = out.duals[-1]
    op = PairOperator(data)
    if pi is None or not np.all(np.isfinite(pi)) or not np.all(np.isfinite(w)):
        gap, dual, cert = None, None, None
    else:
        cert = min((op.certificate(w, p, lam)  # two valid bounds: the sharper one
                    for p in (pi.ravel(), op.repaired_dual(w, pi.ravel(), lam))),
                   key=lambda c: c["gap"])
        gap, dual = cert["gap"], cert["pi"]
        info["lower_bound"] = cert["dual"]
        info["dual_infeasibility"] = cert["dual_infeasibility"]
    status = backend.certified_status(out.status, gap,
                                      _CVXPY_CERTIFY_TOL if tol is None else tol)
    message = out.message
    if status == "unverified":
        message = "CVXPY gave no finite multipliers: its answer could not be certified"
    elif status == "stalled" and out.status == "optimal":
        message = (f"CVXPY reported 'optimal', but the certified relative gap at its point is "
                   f"{gap:.3g}")
    objective = op.objective(w, lam) if np.all(np.isfinite(w)) else np.nan
    return SolverResult(w=w, objective=objective, gap=gap, status=status,
                        iterations=out.iterations, time=deadline.elapsed(), method="cvxpy",
                        history={"objective": [objective], "gap": [gap]}, dual=dual, info=info,
                        message=message)
