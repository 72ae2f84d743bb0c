"""The methods of the P-Norm Push: Newton's method (certified), Rudin's boosting, and CVXPY.

Every method ends the same way (:meth:`_PNormPushMethod._solve`): the certificate of
:mod:`.problem` at its final w gives the result's objective, gap and status, so a boosting or a
CVXPY answer is certified by the same gap as Newton's.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from infpush_cvx._logging import log_iteration
from infpush_cvx._validation import caller_stacklevel
from infpush_cvx.solvers.base import CVXPYMethod, Solver, cvxpy_message, data_size, record
from infpush_cvx.solvers.engines.common import blas_threads_for, warm_weights
from infpush_cvx.solvers.engines.cvxpy_backend import certified_status
from infpush_cvx.solvers.pnorm_push.problem import (PNormPushProblem, State, log_sum_exp,
                                                    loss_only, loss_parts)
from infpush_cvx.solvers.result import SolverResult

#: Armijo constant and the smallest step of Newton's backtracking line search. The step can
#: be tiny and right: where the softmax weights saturate the Hessian is about ``lam I`` and a
#: Newton step overshoots by up to 1 / lam (columns of size 1e4 at lam = 1e-6 needed 1e-15;
#: stopping at 1e-10 "stalled" at a relative gap of 1e11).
_ARMIJO = 0.25
_MIN_STEP = 1e-30
#: Boosting: the largest change of the scores one round may make along a feature, when the
#: unregularised loss decreases without bound along it (the feature separates the classes);
#: exp(-50) ~ 2e-22 is below double precision relative to 1.
_MAX_SCORE_STEP = 50.0
#: Floating-point operations of one block of the Hessian's product, between deadline checks
#: (about 0.1 s on one core).
_HESSIAN_BLOCK_FLOPS = 2e8


@dataclass(frozen=True, kw_only=True)
class _PNormPushMethod(Solver):
    """What the methods share: the problem, the default ``tol`` (1e-8), the warm start, the
    final certificate and the result."""

    tol: float = 1e-8

    problem = PNormPushProblem
    weights = True
    kernels = False
    default_max_iter = 100

    def _solve(self, problem, warm_start, deadline) -> SolverResult:
        data, lam, p, logs = problem.solved, problem.lam_paper, problem.p, problem.logs
        w0 = self._start(problem, warm_start)
        self._log_start(problem, data, f" (p {p:g})")
        with blas_threads_for(data.d):
            out = self._run(problem, w0, deadline)
            w = out["w"]  # NaN where a CVXPY solve gave no point: nothing to certify
            final = State(data, w, lam, p, logs) if np.all(np.isfinite(w)) else None
        cert = {"objective": np.nan, "gap": None} if final is None else final.certificate()
        objective, gap = cert.pop("objective"), cert.pop("gap")
        info = {"p": p, "lam_paper": lam, "scaling": "paper", **out.get("info", {}), **cert}
        status = certified_status(out["status"], gap, self.tol)
        return self._result(deadline, w=w, objective=objective, gap=gap, status=status,
                            iterations=out["iterations"], history=out["history"], dual=None,
                            info=info, message=self._message(out, status, gap))

    def _start(self, problem, warm_start) -> np.ndarray:
        """A copy of the warm start's w to start from, or ``w = 0``: without a warm start, and
        with a warning when the objective there is not finite (``np.full(d, 1e200)``:
        ``||w||^2`` overflows), since no step from it can be measured."""
        data = problem.solved
        w0 = warm_weights(data, warm_start)
        if w0 is None:
            return np.zeros(data.d)
        with np.errstate(over="ignore", invalid="ignore"):
            value = 0.5 * problem.lam_paper * float(w0 @ w0) + loss_only(
                data.Xp @ w0, data.Xn @ w0, problem.p, problem.logs)
        if np.isfinite(value):
            return w0.astype(np.float64, copy=True)
        warnings.warn(f"warm_start: the objective there is {value!r} (not finite); starting "
                      f"from w = 0 instead", UserWarning, stacklevel=caller_stacklevel())
        return np.zeros(data.d)

    def _message(self, out, status, gap) -> str:
        return "" if status == "optimal" else out["message"]

    def _run(self, problem, w0, deadline) -> dict:
        raise NotImplementedError


def _record(history, k, objective, gap, deadline, method, **figures):
    seconds = deadline.elapsed()
    record(history, iteration=k, objective=float(objective),
           gap=None if gap is None else float(gap), time=seconds, **figures)
    log_iteration(method, k, objective, gap, seconds, **figures)


@dataclass(frozen=True, kw_only=True)
class Newton(_PNormPushMethod):
    """Newton's method with a backtracking (Armijo) line search on the d x d Hessian
    ``lam I + p Xn^T (diag sigma - sigma sigma^T) Xn + Xp^T (diag rho - rho rho^T) Xp``,
    ``O((m + n) d^2 + d^3)`` per step, from ``w = 0`` (or a warm start); the objective is smooth
    and ``lam``-strongly convex, so it converges quadratically. Stops when the certified
    relative gap is at most ``tol``."""

    name = "newton"

    def _run(self, problem, w, deadline) -> dict:
        data, lam, p, logs = problem.solved, problem.lam_paper, problem.p, problem.logs
        state = State(data, w, lam, p, logs)
        history = {}  # (the result completes its standard columns)
        _record(history, 0, state.objective, state.gap, deadline, "newton")
        status, message, k = "max_iter", f"{self.iterations} Newton steps", 0
        stacked = None if data.is_sparse else Stacked(data.Xn, data.Xp)
        last_step = 0.0  # seconds of the last step: a step is not started that cannot end in time
        while k < self.iterations:
            if state.gap <= self.tol:
                # the scores were updated step by step (s + step ds): the certificate is that
                # of the scores recomputed from w, and the steps go on if it does not hold
                state = State(data, state.w, lam, p, logs)
                if state.gap <= self.tol:
                    status, message = "optimal", ""
                    break
            if not deadline.allows(last_step):
                status, message = "time_limit", (deadline.message() if deadline.expired()
                                                 else deadline.message_before(last_step))
                break
            started = deadline.elapsed()
            H = _hessian(data, state, lam, p, stacked, deadline)
            if H is None or deadline.expired():  # the step's largest cost: do not solve with it
                status, message = "time_limit", deadline.message()
                break
            direction = newton_direction(H, state.grad, lam)
            if direction is None:
                status, message = "failed", "the Newton system could not be solved"
                break
            slope = float(state.grad @ direction)
            if not slope < 0:  # round-off floor: no descent direction is left
                status, message = "stalled", "no descent direction (round-off floor)"
                break
            # Backtracking on the scores (no product with X per trial), by safeguarded quadratic
            # interpolation: large p makes the first steps overshoot by orders of magnitude.
            ds, dt = data.Xp @ direction, data.Xn @ direction
            wd, dd = float(state.w @ direction), float(direction @ direction)
            step, trials = 1.0, 0
            while True:
                trials += 1
                value = 0.5 * lam * (float(state.w @ state.w) + 2 * step * wd + step * step * dd) \
                    + loss_only(state.s + step * ds, state.t + step * dt, p, logs)
                if value <= state.objective + _ARMIJO * step * slope:
                    break
                excess = value - state.objective - step * slope
                guess = -slope * step * step / (2.0 * excess) if excess > 0 else 0.5 * step
                step = min(max(guess, 0.1 * step), 0.5 * step)
                if step < _MIN_STEP:
                    break
            k += 1
            if step < _MIN_STEP:
                status, message = "stalled", (f"the line search found no decrease (relative gap "
                                              f"{state.gap:.1e})")
                break
            state = State(data, state.w + step * direction, lam, p, logs,
                          scores=(state.s + step * ds, state.t + step * dt))
            last_step = deadline.elapsed() - started
            _record(history, k, state.objective, state.gap, deadline, "newton", step=step,
                    decrement=-slope, trials=trials)
        return {"w": state.w, "status": status, "message": message, "iterations": k,
                "history": history}


class Stacked:
    """The rows of ``np.vstack([top, bottom])`` by slices or indices, gathered from the two
    blocks when asked for: the stacked copy of all the data (50,000 + 50,000 x 300) took 1.2 s
    on a loaded machine before the deadline was first looked at."""

    def __init__(self, top: np.ndarray, bottom: np.ndarray):
        self.top, self.bottom, self.split = top, bottom, top.shape[0]

    def __getitem__(self, rows) -> np.ndarray:
        split = self.split
        if isinstance(rows, slice):
            start, stop, _ = rows.indices(split + self.bottom.shape[0])
            if stop <= split:
                return self.top[start:stop]
            if start >= split:
                return self.bottom[start - split:stop - split]
            return np.vstack([self.top[start:], self.bottom[:stop - split]])
        rows = np.asarray(rows)
        out = np.empty((rows.size, self.top.shape[1]))
        upper = rows < split
        out[upper] = self.top[rows[upper]]
        out[~upper] = self.bottom[rows[~upper] - split]
        return out


def _hessian(data, state, lam: float, p: float, stacked, deadline):
    """``lam I + p Xn^T (diag sigma - sigma sigma^T) Xn + Xp^T (diag rho - rho rho^T) Xp``, or
    None when ``deadline`` passed while it was being computed.

    Dense data: the symmetric product ``Y^T Y`` of the stacked rows scaled by the square roots
    of ``[p sigma; rho]`` (BLAS syrk; measured 0.27 ms against 0.34 ms for two general products
    at 1000 + 1000 rows and d = 50), summed over blocks of rows of about
    :data:`_HESSIAN_BLOCK_FLOPS` each, begun only when the time left exceeds what the previous
    one took (one product at m + n = 10,000 and d = 1,500 took a second). Sparse data:
    ``X^T diag(v) X`` per class.
    """
    v = np.concatenate([p * state.sigma, state.rho])
    if stacked is not None:
        # Rows whose weight is below 1e-17 of the largest change H by less than rounding (2,000
        # of them by under 2e-14 relative); at large p most negatives' weights are that small.
        keep = np.flatnonzero(v > 1e-17 * v.max())
        if keep.size >= 0.75 * v.size:  # (then scaling every row costs less than the gather)
            keep = np.arange(v.size)  # (blocks of consecutive rows: slices, no gather)
        rows = max(32, int(_HESSIAN_BLOCK_FLOPS / max(data.d, 1) ** 2))
        H, last = np.zeros((data.d, data.d)), 0.0
        # each block's rows are gathered and scaled where they are used (the whole scaled copy
        # of 50,000 x 500 rows took 0.6 s before the deadline was looked at), and a block is
        # begun only when the time left exceeds what the previous one took
        for start in range(0, keep.size, rows):
            if not deadline.allows(last):
                return None
            begun = deadline.elapsed()
            block = slice(start, start + rows) if keep.size == v.size else keep[start:start + rows]
            Y = stacked[block] * np.sqrt(v[block])[:, None]
            H += Y.T @ Y
            last = deadline.elapsed() - begun
    else:
        H = np.zeros((data.d, data.d))
        for X, u in ((data.Xn, v[:data.n]), (data.Xp, v[data.n:])):
            H += (X.T @ X.multiply(u[:, None]).tocsr()).toarray() if sp.issparse(X) \
                else X.T @ (X * u[:, None])
    xn, xp = data.Xn.T @ state.sigma, data.Xp.T @ state.rho
    H -= p * np.outer(xn, xn) + np.outer(xp, xp)
    H[np.diag_indices_from(H)] += lam
    return H


def newton_direction(H: np.ndarray, grad: np.ndarray, lam: float) -> np.ndarray | None:
    """``-H^-1 grad`` by Cholesky, or None when H is not finite.

    H is at least ``lam I`` in exact arithmetic, but it is a Gram matrix minus the outer
    products of the weighted means, entries of the size of the columns' squares: with columns of
    sizes 1e-4 and 1e4 at lam = 1e-10 their cancellation left H indefinite to Cholesky, and the
    solve "failed". Then the eigenvalues below ``lam`` (round-off) are raised to ``lam``: the
    nearest matrix to the computed H with the bound the exact H has.
    """
    if not np.all(np.isfinite(H)):
        return None
    try:
        with warnings.catch_warnings():  # ill-conditioned at a tiny lam: the gap judges the step
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            return -scipy.linalg.solve(H, grad, assume_a="pos", check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        pass
    try:
        values, vectors = scipy.linalg.eigh(H, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None
    return -vectors @ ((vectors.T @ grad) / np.maximum(values, lam))


@dataclass(frozen=True, kw_only=True)
class Boosting(_PNormPushMethod):
    """Rudin's P-Norm Push algorithm ([Rudin2009]), run as in [Agarwal2011]'s experiments: the
    weak rankers are the features, 100 rounds (``max_iter``), unregularised.

    Rudin minimises ``F(lambda) = sum_k (sum_i exp(-(M lambda)_ik))^p`` with
    ``M_ik,j = h_j(x_i^+) - h_j(x_k^-)`` by coordinate descent over the weak rankers h_j. Here
    ``h_j(x) = x_j`` (the features; [Agarwal2011], section 6, "individual features were used as
    weak rankers"), so ``f = X w``. Each round t:

    1. the distribution ``d_t,ik`` proportional to ``exp(-(s_i - t_k)) (sum_i' exp(-(s_i' -
       t_k)))^(p-1)``; ``(d_t^T M)_j`` is proportional to minus the j-th partial derivative of F,
       which with the factorisation of :mod:`.problem` is ``-(Xn^T sigma - Xp^T rho)_j`` (softmax
       weights at the current w; the constant factor does not change the choice);
    2. the weak ranker ``j_t = argmax_j |(d_t^T M)_j|``: Rudin's argmax over the features and
       their negations ``-x_j`` (so a feature that ranks the negatives higher is used with a
       negative coefficient; the sign goes into the step);
    3. the line search: the alpha solving ``dF(lambda + alpha e_j)/dalpha = 0`` (Rudin's
       equation), found as the root of the derivative of ``log F``, a convex function of alpha
       with the same minimiser, by a bracketed, safeguarded Newton iteration to machine
       precision. When F decreases without bound along e_j (the feature separates the classes)
       the step is capped so the scores change by at most ``_MAX_SCORE_STEP`` (50) along it;
    4. ``lambda_{t+1} = lambda_t + alpha_t e_{j_t}``.

    Everything is computed in log space (log F is ``p (loss + const)``), so F itself never
    overflows even at p = 64. Sample weights enter as weighted sums. Each round minimises
    exactly along a coordinate, so the loss never increases. ``lam`` does not change the
    iterates: the result's objective, gap and status are those of the regularised problem at
    the final w (so it ends with status ``"max_iter"`` and a ConvergenceWarning unless that w
    happens to be certified), and ``history["loss"]`` holds the unregularised loss. Stops early
    only when every partial derivative is 0 (an unregularised stationary point).
    """

    name = "boosting"

    def _run(self, problem, w, deadline) -> dict:
        data, lam, p, logs = problem.solved, problem.lam_paper, problem.p, problem.logs
        history = {}  # (the result completes its standard columns)
        loss, sigma, rho, s, t = loss_parts(data, w, p, logs)
        _record(history, 0, 0.5 * lam * float(w @ w) + loss, None, deadline, "boosting",
                loss=loss)
        status, message, capped, k = "max_iter", f"{self.iterations} boosting rounds", 0, 0
        while k < self.iterations:
            if deadline.expired():
                status, message = "time_limit", deadline.message()
                break
            g = data.Xn.T @ sigma - data.Xp.T @ rho
            j = int(np.argmax(np.abs(g)))
            if g[j] == 0.0:
                status, message = "stalled", ("every partial derivative of the unregularised "
                                              "loss is 0")
                break
            xp_j, xn_j = (X[:, [j]].toarray().ravel() if sp.issparse(X)
                          else np.ascontiguousarray(X[:, j]) for X in (data.Xp, data.Xn))
            alpha, hit_cap = _line_search(s, t, xp_j, xn_j, p, logs, g[j])
            capped += hit_cap
            w[j] += alpha
            loss, sigma, rho, s, t = loss_parts(data, w, p, logs,
                                                scores=(s + alpha * xp_j, t + alpha * xn_j))
            k += 1
            _record(history, k, 0.5 * lam * float(w @ w) + loss, None, deadline, "boosting",
                    loss=loss, feature=j, alpha=alpha)
        if capped:
            message += (f"; {capped} of the rounds took the capped step (the loss decreases "
                        f"without bound along their feature)")
        return {"w": w, "status": status, "message": message, "iterations": k,
                "history": history, "info": {"capped_rounds": capped}}


def _line_search(s, t, xp, xn, p, logs, g0) -> tuple[float, bool]:
    """The minimiser alpha of ``phi(alpha) = (1/p) LSE(p (t + alpha xn) + log b)
    + LSE(-(s + alpha xp) + log a)`` (convex; ``logs``: ``(log a, log b)``), and whether the
    step cap was taken.

    ``phi'(alpha) = sigma . xn - rho . xp``, ``phi'' = p Var_sigma(xn) + Var_rho(xp)``.
    """
    direction = -1.0 if g0 > 0 else 1.0  # phi decreases along this sign of alpha
    spread = float(max(xp.max(), xn.max()) - min(xp.min(), xn.min()))  # both non-empty
    cap = _MAX_SCORE_STEP / spread if spread > 0 else 0.0

    def derivatives(a):
        alpha = direction * a
        _, sigma = log_sum_exp(p * (t + alpha * xn), logs[1])
        _, rho = log_sum_exp(-(s + alpha * xp), logs[0])
        mn, mp = sigma @ xn, rho @ xp
        d1 = direction * (mn - mp)  # derivative in a (>= 0 direction)
        d2 = p * (sigma @ (xn - mn) ** 2) + rho @ (xp - mp) ** 2
        return d1, d2

    d1, d2 = derivatives(0.0)
    lo, a = 0.0, (min(-d1 / d2, cap) if d2 > 0 else cap)
    # bracket the root of phi' in a: [lo, hi] with phi'(lo) < 0 <= phi'(hi)
    while derivatives(a)[0] < 0:
        lo = a
        if a >= cap:
            return direction * cap, True
        a = min(2.0 * a, cap)
    hi = a
    # safeguarded Newton inside the bracket
    a = 0.5 * (lo + hi)
    for _ in range(100):
        d1a, d2a = derivatives(a)
        lo, hi = (a, hi) if d1a < 0 else (lo, a)
        if d1a == 0 or hi - lo <= 1e-15 * max(1.0, abs(hi)):
            break
        step = a - d1a / d2a if d2a > 0 else None
        a = step if step is not None and lo < step < hi else 0.5 * (lo + hi)
    return direction * a, False


@dataclass(frozen=True, kw_only=True)
class CVXPY(_PNormPushMethod, CVXPYMethod):
    """:func:`infpush_cvx.formulations.pnorm_push_problem` through the CVXPY backend
    (:class:`~infpush_cvx.solvers.base.CVXPYMethod`), solved by ``solver`` (default Clarabel);
    its w is certified by the same gap as Newton's (NaN when the solve gave no point). No warm
    start."""

    default_max_iter = 1
    builder = "infpush_cvx.formulations._pnorm_push:pnorm_push_problem"

    _start = CVXPYMethod._start  # no warm start (the model base class reads one)

    def _message(self, out, status, gap) -> str:
        return cvxpy_message(out["status"], status, gap, super()._message(out, status, gap))

    def _run(self, problem, w0, deadline) -> dict:
        from infpush_cvx.solvers.engines.cvxpy_backend import check_solver

        data = problem.solved
        name = check_solver(self.solver or "CLARABEL", "solver", "EXP")
        out, info = self._cvxpy((data, problem.lam_paper), {"p": problem.p}, solver=name,
                                options={}, deadline=deadline, size=data_size(data.Xp, data.Xn))
        w, status, message = self._answer(out, name, data.d)
        return {"w": w, "status": status, "iterations": out.iterations, "message": message,
                "history": {}, "info": info}
