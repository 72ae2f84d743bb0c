"""The Infinite Push (Agarwal, SDM 2011), l2 or l1 penalty, by first-order and certified methods.

Paper scaling (docs/mathematics.md, sections 1.2 and 2.1)::

    P(w) = lam pen(w) + max_j (1/m) sum_i max(0, 1 - (x_i^+ - x_j^-) . w),
    pen(w) = ||w||^2 / 2 (l2)  or  ||w||_1 (l1, Rakotomamonjy, ICML 2012)

Methods (``method=``):

- ``"working_set"`` (default, l2 and l1): constraint generation over the negatives and the pairs
  near the margin, each restricted problem (proximal steps) solved exactly by a structured
  interior-point method, stopped by the full relative duality gap (:mod:`._working_set`).
  Degenerate instances (``w* = 0``) are detected up front and answered exactly
  (:mod:`infpush_cvx.data.degeneracy`).
- ``"fista"`` (l2): accelerated projected gradient with restart on the dual (eq. 3.9).
- ``"paper"`` (l2): the paper's gradient projection (Figure 2), ``eta_0 / sqrt(t)`` steps.
- ``"admm"`` (l1 and l2): Rakotomamonjy's ADMM (:mod:`.sparse_infinite_push`).

Kernels (l2): ``kernel="linear" | "rbf" | "poly" | callable`` with ``gamma``, ``degree``,
``coef0`` as in scikit-learn's ``SVC`` learns ``f = sum_k beta_k K(z_k, .)`` over the training
rows ``[Xp; Xn]``: every method above runs on the rows of a factor ``K = L L^T``, which is the
same problem (:mod:`infpush_cvx.data.kernels`, :mod:`._kernel`); the result's ``w`` is beta.
"""

from __future__ import annotations

import time

from numpy.typing import ArrayLike

from infpush_cvx._logging import log_progress, logs_progress
from infpush_cvx._validation import (check_bool, check_choice, check_scalar, check_time_limit, check_unused_options)
from infpush_cvx.data.degeneracy import (DegeneracyCheckFailed, check_degeneracy, separating_direction)
from infpush_cvx.prox import project_l1inf
from infpush_cvx.solvers.engines import (dual_gradient as _dual_gradient, working_set as _working_set, duality)
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.engines.common import (blas_threads_for, call_start, centred, check_working_set_options, data_first, finish, prepare, require_unweighted, unit_weights, warm_alpha, warm_weights)
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.engines.working_set import WorkingSetOptions
from infpush_cvx.solvers.result import SolverResult

METHODS = {"l2": ("working_set", "fista", "paper", "admm"), "l1": ("working_set", "admm")}
_DEFAULT_MAX_ITER = {"working_set": 200, "fista": 20000, "paper": 1000, "admm": 5000}


def _projector(lam, m, n):
    radius = duality.dual_bound(lam, m, n, "infinite_push")  # C/m

    def project(V):
        return project_l1inf(V, radius, axis=0, nonneg=True)
    return project


@logs_progress
@data_first
def infinite_push(data: BipartiteData, lam: float, penalty: str = "l2",
                  scaling: str = "paper", method: str = "working_set", tol: float = 1e-6,
                  max_iter: int | None = None, warm_start: SolverResult | ArrayLike | None = None,
                  *, wp: ArrayLike | None = None, wn: ArrayLike | None = None,
                  eta0: float | None = None, rho: float | None = None,
                  time_limit: float | None = None, detect_degenerate: bool = True,
                  options: WorkingSetOptions | None = None,
                  kernel=None, gamma="scale", degree: int = 3, coef0: float = 0.0,
                  nystroem: int | str | None = None, nystroem_seed: int = 0,
                  verbose: bool = False) -> SolverResult:
    """Minimise the Infinite Push objective; returns a :class:`~.result.SolverResult`.

    Parameters
    ----------
    data : BipartiteData
        The positives and negatives (and their sample weights). The raw arrays work as well:
        ``infinite_push(Xp, Xn, lam, ...)`` with (m, d) and (n, d) arrays or scipy.sparse
        matrices is ``infinite_push(BipartiteData(Xp, Xn), lam, ...)``
        (:func:`~infpush_cvx.solvers.engines.common.data_first`).
    wp, wn : optional sample weights of the positives and negatives (``working_set`` only).
        The loss becomes ``max_j (1/M) sum_i wp_i h_ij``, ``M = sum wp``: a max over negatives,
        so ``wn`` does not enter it. Collapse repeated rows into weights with
        :func:`infpush_cvx.data.reductions.collapse_duplicates`.
    lam : float, regularisation in ``scaling`` (converted internally to paper scaling).
    penalty : "l2" or "l1".
    scaling : "paper" or "seed" (see :mod:`infpush_cvx.formulations.scaling`).
    method : see the module docstring; unknown methods raise ValueError.
    tol : target relative duality gap (``status="optimal"`` only when it is certified).
    max_iter : iteration cap (method-specific default).
    warm_start : a previous SolverResult or dual array alpha (m x n); for ``working_set`` the
        primal w of a SolverResult (or a length-d vector) is used.
    eta0 : step scale of ``method="paper"`` (default ``1/L``, L the Lipschitz constant of grad Q).
    rho : ADMM penalty parameter (``method="admm"`` only).
    time_limit : seconds (None or ``inf``: no limit), counted from the call and shared by every
        stage, HiGHS and Clarabel included; the solve stops with status "time_limit".
    detect_degenerate : bool; ``working_set`` first decides whether ``w* = 0`` (scale-invariant
        test, :mod:`infpush_cvx.data.degeneracy`) and then certifies it with a dual point.
    options : a :class:`infpush_cvx.solvers.WorkingSetOptions`, or a dict of its field names
        (``{"new_negatives": 200}``), for ``working_set``; unknown names are a TypeError.
    kernel : None (default: the linear primal over ``w`` in feature space) or ``"linear"``,
        ``"rbf"``, ``"poly"`` or a callable ``kernel(A, B)`` (l2 penalty only): the RKHS
        problem ``(lam/2) beta^T K beta + loss(K beta)`` over the training rows ``[Xp; Xn]``.
        The result's ``w`` (= ``beta``) holds the N = m + n coefficients; ``info`` holds ``v``
        (weights on the factor rows), ``rank``, the resolved ``gamma`` and ``factor_time``.
        The certified gap is the RKHS problem's (:mod:`infpush_cvx.data.kernels`).
    gamma, degree, coef0 : kernel parameters with scikit-learn ``SVC``'s meaning (``gamma``:
        ``"scale"``, ``"auto"`` or a number ``>= 0``).
    nystroem : None (exact factor of the N x N Gram matrix), a number of landmarks for a
        Nystroem factor (the RKHS problem restricted to their span), drawn with
        ``np.random.default_rng(nystroem_seed)``, or ``"adaptive"``: a span grown round by
        round until the gap on the exact problem, certified with the full Gram matrix, is at
        most ``tol`` (:func:`._kernel.adaptive_solve`).
    verbose : bool (default False). True prints the progress to stderr (through the logger
        ``infpush_cvx.solvers`` at INFO; an application's own logging configuration, when it
        shows INFO records, is used instead): a header, one line per iteration (per round for
        ``working_set``, at most about 50 lines for the first-order methods and ADMM) with the
        objective in paper scaling, the certified relative gap, the seconds and the method's
        own figures, and a summary. False prints nothing; the same lines are DEBUG records
        (:mod:`infpush_cvx._logging`). Anything but a bool is refused with a TypeError.

    An option the chosen method does not use (``eta0``, ``rho``, ``options``) is refused with a
    TypeError rather than ignored. Data and lambda whose problem cannot be represented in float64
    (the data's scale squared against lambda) are refused with a ValueError.

    A solve that stops before its certificate holds returns its best point with the status and a
    ``message`` saying why, and warns with a :class:`~.result.ConvergenceWarning`.
    """
    started = call_start()  # the time limit counts from the call
    if kernel is not None:
        if penalty != "l2":
            raise ValueError(f"kernel={kernel!r} needs penalty='l2' (the RKHS norm), got "
                             f"penalty={penalty!r}")
        from infpush_cvx.solvers.engines.kernel import kernel_solve
        return kernel_solve(infinite_push.__wrapped__, data, None, lam, kernel=kernel, gamma=gamma,
                            degree=degree, coef0=coef0, nystroem=nystroem, seed=nystroem_seed,
                            wp=wp, wn=wn, warm_start=warm_start, time_limit=time_limit,
                            loss="infinite_push", penalty=penalty, scaling=scaling,
                            method=method, tol=tol,
                            max_iter=max_iter, eta0=eta0, rho=rho,
                            detect_degenerate=detect_degenerate, options=options,
                            verbose=verbose)
    if nystroem is not None:
        raise TypeError(f"nystroem={nystroem!r} is used only with a kernel (kernel=...)")
    deadline = Deadline(check_time_limit(time_limit), start=started)
    check_choice(penalty, "penalty", tuple(METHODS))
    check_choice(method, "method", METHODS[penalty])
    check_unused_options(method, {"eta0": eta0, "rho": rho, "options": options},
                         {"eta0": ("paper",), "rho": ("admm",), "options": ("working_set",)})
    detect_degenerate = check_bool(detect_degenerate, "detect_degenerate")
    options = check_working_set_options(options)
    if eta0 is not None:
        eta0 = check_scalar(eta0, "eta0", positive=True)
    if rho is not None:
        rho = check_scalar(rho, "rho", positive=True)
    data, lam_p, max_iter = prepare(data, None, lam, loss="infinite_push", penalty=penalty,
                                    scaling=scaling, tol=tol, max_iter=max_iter, wp=wp, wn=wn)
    data = centred(data)  # the same problem, without digits lost to a common offset
    if method != "working_set":
        require_unweighted(data, method)
    max_iter = _DEFAULT_MAX_ITER[method] if max_iter is None else max_iter
    common = dict(loss="infinite_push", penalty=penalty, scaling=scaling, tol=tol)
    log_progress(f"infinite_push {method} ({penalty} penalty): {data.m} positives, {data.n} "
                 f"negatives, {data.d} features, lambda {lam_p:.4g} in paper scaling, tol {tol:g}, "
                 f"max_iter {max_iter}")

    if method == "working_set":
        return _certified_solve(data, lam_p, lam, method=method, penalty=penalty, tol=tol,
                                max_iter=max_iter, w0=warm_weights(data, warm_start),
                                deadline=deadline, detect_degenerate=detect_degenerate,
                                options=options, common=common)

    alpha0 = warm_alpha(data, warm_start)
    if method == "admm":
        from infpush_cvx.solvers.infinite_push.admm import admm
        out = admm(data, lam_p, penalty=penalty, tol=tol, max_iter=max_iter, rho=rho,
                   alpha0=alpha0, deadline=deadline)
        info = {"rho": out["rho"]}
    elif method == "fista":
        out = _dual_gradient.fista(data, lam_p, _projector(lam_p, data.m, data.n),
                                   loss="infinite_push", max_iter=max_iter, tol=tol,
                                   alpha0=alpha0, deadline=deadline)
        info = {"lipschitz": out["lipschitz"]}
    else:
        out = _dual_gradient.paper_gradient_projection(
            data, lam_p, _projector(lam_p, data.m, data.n), loss="infinite_push", eta0=eta0,
            max_iter=max_iter, tol=tol, alpha0=alpha0, deadline=deadline)
        info = {"eta0": out["eta0"]}
    return finish(data, lam_p, lam, w=out["w"], alpha=out["alpha"], status=out["status"],
                  iterations=out["iterations"], t0=deadline.start, method=method,
                  history=out["history"], info=info, message=out["message"], **common)


def _certified_solve(data, lam_p, lam, *, method, penalty, tol, max_iter, w0, deadline,
                     detect_degenerate, options, common):
    t0 = deadline.start
    solve_data = unit_weights(data)  # the same problem (paper scaling), weights near 1
    # the cheap separation test certifies most non-degenerate instances without the LP
    reduced, collapsed = _working_set.collapse(solve_data)  # repeated rows into weights: exact
    if detect_degenerate and separating_direction(reduced) is None:
        try:
            report = check_degeneracy(reduced, time_limit=deadline.for_solver())
        except DegeneracyCheckFailed:
            report = None  # undecided (time limit, or HiGHS failed): the working set decides
        if report is not None and report.degenerate:
            cert = _working_set.degenerate_certificate(reduced, lam_p, penalty=penalty,
                                                       theta=report.weights,
                                                       collapsed=collapsed)
            if cert["gap"] <= tol:
                elapsed = time.perf_counter() - t0
                return finish(data, lam_p, lam, w=cert["w"], alpha=cert["dual"],
                              gap=cert["gap"], status="degenerate_optimal", iterations=0,
                              t0=t0, method=method,
                              history={"objective": [cert["objective_paper"]],
                                       "gap": [cert["gap"]], "time": [elapsed]},
                              info={"degenerate": True}, **common)
            # not certified to tol (an inaccurate LP): solve it like any other instance
    with blas_threads_for(data.d):
        out = _working_set.solve(solve_data, lam_p, loss="infinite_push", penalty=penalty,
                                 tol=tol, max_iter=max_iter, w0=w0,
                                 time_limit=deadline.for_solver(), options=options)
    return finish(data, lam_p, lam, w=out["w"], alpha=out["dual"], gap=out["gap"],
                  status=out["status"], iterations=out["iterations"], t0=t0,
                  method=method, history=out["history"], info={"degenerate": False},
                  message=out["message"], **common)
