"""Bipartite RankSVM (Agarwal, SDM 2011, eq. 4.18 and Figure 3), certified and first-order methods.

Paper scaling (docs/mathematics.md, section 3.1; its dual: section 3.2)::

    P(w) = (lam/2) ||w||^2 + (1/(m n)) sum_ij max(0, 1 - (x_i^+ - x_j^-) . w)

with dual ``min Q(alpha)`` over the box ``0 <= alpha_ij <= C/(m n)`` (projection = clipping).

Methods: ``"smoothing_newton"`` (default; Newton's method on a hinge smoothed near the margin,
every pair sum a prefix sum of sorted scores, certified by an implicit dual point:
:mod:`._ranksvm_newton`), ``"working_set"`` (pairs near the margin kept exactly, the others
replaced by their linear or zero piece, proximal steps by a structured interior-point method,
stopped by the full duality gap: :mod:`._working_set`),
``"fista"`` (accelerated projected gradient with restart on the dual) and ``"paper"`` (Figure 3:
``eta_0 / sqrt(t)`` steps from ``C/(1000 m n)``).

Kernels: ``kernel="linear" | "rbf" | "poly" | callable`` (scikit-learn ``SVC``'s ``gamma``,
``degree``, ``coef0``) solves the RKHS problem over ``f = sum_k beta_k K(z_k, .)`` by any method
above on the rows of a factor ``K = L L^T`` (:mod:`infpush_cvx.data.kernels`, :mod:`._kernel`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from infpush_cvx._logging import log_progress, logs_progress
from infpush_cvx._validation import (check_choice, check_scalar, check_time_limit, check_unused_options)
from infpush_cvx.solvers.engines import (dual_gradient as _dual_gradient, working_set as _working_set, duality)
from infpush_cvx.solvers.ranksvm import newton as _ranksvm_newton
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.solvers.engines.common import (blas_threads_for, call_start, centred, check_working_set_options, data_first, finish, prepare, require_unweighted, unit_weights, warm_alpha, warm_weights)
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.engines.working_set import WorkingSetOptions
from infpush_cvx.solvers.result import SolverResult

METHODS = ("smoothing_newton", "working_set", "fista", "paper")
_DEFAULT_MAX_ITER = {"smoothing_newton": 500, "working_set": 200, "fista": 20000, "paper": 1000}


@logs_progress
@data_first
def ranksvm(data: BipartiteData, lam: float, scaling: str = "paper",
             method: str = "smoothing_newton", tol: float = 1e-6, max_iter: int | None = None,
             warm_start: SolverResult | ArrayLike | None = None, *,
             wp: ArrayLike | None = None, wn: ArrayLike | None = None,
             eta0: float | None = None, time_limit: float | None = None,
             options: WorkingSetOptions | None = None, kernel=None, gamma="scale",
             degree: int = 3, coef0: float = 0.0, nystroem: int | str | None = None,
             nystroem_seed: int = 0, verbose: bool = False) -> SolverResult:
    """Minimise the bipartite RankSVM objective; returns a :class:`~.result.SolverResult`.

    Arguments as in :func:`infpush_cvx.solvers.infinite_push.infinite_push`: the data first
    (``ranksvm(data, lam)``, or the arrays ``ranksvm(Xp, Xn, lam)``); the l2 penalty only;
    ``eta0`` is used by ``"paper"``, ``options`` by ``"working_set"``, and refused otherwise).
    ``verbose=True`` prints a header, one line per iteration (with mu and the step size for
    ``"smoothing_newton"``; at most about 50 lines for ``"fista"`` and ``"paper"``) and a
    summary to stderr, as for the Infinite Push; False (the default) prints nothing.
    With sample weights ``wp``, ``wn`` (``working_set`` only) the loss is
    ``(1/(M N)) sum_ij wp_i wn_j h_ij``, ``M = sum wp``, ``N = sum wn``.
    ``kernel``, ``gamma``, ``degree``, ``coef0``, ``nystroem``, ``nystroem_seed``: as for the
    Infinite Push (the result's ``w`` holds the coefficients beta over ``[Xp; Xn]``).
    """
    started = call_start()  # the time limit counts from the call
    if kernel is not None:
        from infpush_cvx.solvers.engines.kernel import kernel_solve
        return kernel_solve(ranksvm.__wrapped__, data, None, lam, kernel=kernel, gamma=gamma,
                            degree=degree, coef0=coef0, nystroem=nystroem, seed=nystroem_seed,
                            wp=wp, wn=wn, warm_start=warm_start, time_limit=time_limit,
                            loss="ranksvm", scaling=scaling, method=method, tol=tol,
                            max_iter=max_iter,
                            eta0=eta0, options=options, verbose=verbose)
    if nystroem is not None:
        raise TypeError(f"nystroem={nystroem!r} is used only with a kernel (kernel=...)")
    deadline = Deadline(check_time_limit(time_limit), start=started)
    check_choice(method, "method", METHODS)
    check_unused_options(method, {"eta0": eta0, "options": options},
                         {"eta0": ("paper",), "options": ("working_set",)})
    options = check_working_set_options(options)
    if eta0 is not None:
        eta0 = check_scalar(eta0, "eta0", positive=True)
    data, lam_p, max_iter = prepare(data, None, lam, loss="ranksvm", penalty="l2", scaling=scaling,
                                    tol=tol, max_iter=max_iter, wp=wp, wn=wn)
    data = centred(data)  # the same problem, without digits lost to a common offset
    if method not in ("working_set", "smoothing_newton"):
        require_unweighted(data, method)
    max_iter = _DEFAULT_MAX_ITER[method] if max_iter is None else max_iter
    common = dict(loss="ranksvm", penalty="l2", scaling=scaling, tol=tol)
    log_progress(f"ranksvm {method}: {data.m} positives, {data.n} negatives, {data.d} features, "
                 f"lambda {lam_p:.4g} in paper scaling, tol {tol:g}, max_iter {max_iter}")
    if method in ("working_set", "smoothing_newton"):
        w0 = warm_weights(data, warm_start)
        solve_data = unit_weights(data)  # the same problem (paper scaling), weights near 1
        with blas_threads_for(data.d):
            if method == "smoothing_newton":
                out = _ranksvm_newton.run(solve_data, lam_p, tol=tol, max_iter=max_iter, w0=w0,
                                          deadline=deadline)
                if out["status"] in ("max_iter", "stalled") and not deadline.expired():
                    out = _finish_by_working_set(out, solve_data, lam_p, tol, deadline)
            else:
                out = _working_set.solve(solve_data, lam_p, loss="ranksvm", penalty="l2", tol=tol,
                                         max_iter=max_iter, w0=w0,
                                         time_limit=deadline.for_solver(), options=options)
        return finish(data, lam_p, lam, w=out["w"], alpha=out["dual"], gap=out["gap"],
                      status=out["status"], iterations=out["iterations"], t0=deadline.start,
                      method=method, history=out["history"], message=out["message"], **common)
    upper = duality.dual_bound(lam_p, data.m, data.n, "ranksvm")

    def project(V):
        return np.clip(V, 0.0, upper)

    alpha0 = warm_alpha(data, warm_start)
    if method == "fista":
        out = _dual_gradient.fista(data, lam_p, project, loss="ranksvm", max_iter=max_iter,
                                   tol=tol, alpha0=alpha0, deadline=deadline)
        info = {"lipschitz": out["lipschitz"]}
    else:
        out = _dual_gradient.paper_gradient_projection(
            data, lam_p, project, loss="ranksvm", eta0=eta0, max_iter=max_iter, tol=tol,
            alpha0=alpha0, deadline=deadline)
        info = {"eta0": out["eta0"]}
    return finish(data, lam_p, lam, w=out["w"], alpha=out["alpha"], status=out["status"],
                  iterations=out["iterations"], t0=deadline.start, method=method,
                  history=out["history"], info=info, message=out["message"], **common)


def _finish_by_working_set(newton: dict, data, lam_p: float, tol: float, deadline) -> dict:
    """Continue an uncertified smoothing-Newton solve with the working set from its best point.

    Nearly separable data (d >= m, a loss near 0: planted 50 x 50 x 50 at lambda 1e-2) can
    stall the smoothing schedule 500 Newton steps short of the gap; the working set, certified
    the same way, finishes in a few rounds. The better certified result is returned, with both
    stages in its message and iteration count.
    """
    log_progress(f"ranksvm smoothing_newton: stopped ({newton['status']}, gap "
                 f"{newton['gap']:.2e} after {newton['iterations']} steps); the working set "
                 f"continues from its best point")
    rescue = _working_set.solve(data, lam_p, loss="ranksvm", penalty="l2", tol=tol,
                                max_iter=_DEFAULT_MAX_ITER["working_set"], w0=newton["w"],
                                time_limit=deadline.for_solver())
    if not rescue["gap"] < newton["gap"]:
        return newton
    stage = (f"smoothing Newton stopped ({newton['status']}, gap {newton['gap']:.1e} after "
             f"{newton['iterations']} steps); finished by the working set")
    rescue["message"] = f"{stage}: {rescue['message']}" if rescue["message"] else stage
    rescue["iterations"] += newton["iterations"]
    return rescue

