"""ADMM for the (sparse) Infinite Push (Rakotomamonjy, ICML 2012; docs/mathematics.md,
section 2.4).

Split ``a = 1 - Z w`` (``(Z w)_ij = s_i - t_j``) and minimise ``lam pen(w) + l(a)`` with
``l(a) = max_j (1/m) sum_i max(a_ij, 0)``. Scaled ADMM with penalty rho::

    w-step  argmin_w lam pen(w) + rho/2 ||Z w - (1 - a - U)||^2
            l2: (lam I + rho Z^T Z) w = rho Z^T R;  l1: a lasso on the d x d Gram Z^T Z
            (coordinate descent, warm-started, run to a tolerance that shrinks with the iterations)
    a-step  a = prox_{l/rho}(1 - Z w - U) = V - P_{K/rho}(V)   (one l1,inf projection)
    U      += a + Z w - 1

After each a-step ``-rho U`` lies in the subdifferential of l, i.e. in
``K = {u >= 0 : sum_j max_i u_ij <= 1/m}``, so ``alpha = -rho U / lam`` is a feasible point of the
paper's dual (after shrinking to ``||w(alpha)||_inf <= 1`` for l1): every iterate carries a duality
gap, which is the stopping test. rho is adapted by residual balancing (Boyd et al. 2011, 3.4.1).
"""

from __future__ import annotations

import time

import numba
import numpy as np

from infpush_cvx._logging import log_every, log_iteration
from infpush_cvx.formulations.objectives import bipartite_objective
from infpush_cvx.prox import prox_infinite_push_loss
from infpush_cvx.solvers.base import record
from infpush_cvx.solvers.engines import duality


@numba.njit(cache=True)
def _gram_product(G, w):
    """``G w``, the gradient's start of :func:`_lasso_sweeps` (compiled, as it always was, so
    that its bits do not change)."""
    return G @ w


@numba.njit(cache=True)
def _lasso_sweeps(G, b, t, w, g, sweeps, tol):
    """Up to ``sweeps`` sweeps of cyclic coordinate descent on
    ``min_w 1/2 w^T G w - b^T w + t ||w||_1``, updating ``w`` and ``g = G w`` in place; returns
    the sweeps made and whether the last one moved no coordinate by more than ``tol``."""
    d = w.shape[0]
    for sweep in range(sweeps):
        change = 0.0
        for k in range(d):
            gkk = G[k, k]
            if gkk <= 0.0:
                continue
            r = b[k] - g[k] + gkk * w[k]
            new = np.sign(r) * max(abs(r) - t, 0.0) / gkk  # soft thresholding
            delta = new - w[k]
            if delta != 0.0:
                w[k] = new
                for q in range(d):
                    g[q] += G[q, k] * delta
                change = max(change, abs(delta) * np.sqrt(gkk))
        if change <= tol:
            return sweep + 1, True
    return sweeps, False


#: Seconds of coordinate descent between two looks at the clock.
_CD_CHUNK_SECONDS = 0.05


def _lasso_cd(G, b, t, w, max_sweeps, tol, deadline=None, reserve=0.0):
    """:func:`_lasso_sweeps` from ``w`` (in place) for up to ``max_sweeps`` sweeps or until a
    sweep moves no coordinate by more than ``tol``; returns ``(w, finished)``.

    The compiled sweeps cannot read the clock, so they run in chunks, the first of one sweep,
    then as many as take about ``_CD_CHUNK_SECONDS`` at the last chunk's pace; between chunks
    the descent stops unfinished (``finished`` False) once ``deadline`` leaves no more than
    ``reserve`` seconds and a chunk. The sweeps and their arithmetic are those of one call, so
    ``w`` is the same, bit for bit, however the sweeps are chunked.
    """
    clock = time.perf_counter if deadline is None else deadline.elapsed
    g = _gram_product(G, w)
    done, chunk = 0, 1
    while done < max_sweeps:
        begun = clock()
        made, converged = _lasso_sweeps(G, b, t, w, g, min(chunk, max_sweeps - done), tol)
        done += made
        if converged:
            return w, True
        per_sweep = (clock() - begun) / made
        chunk = max(1, int(_CD_CHUNK_SECONDS / max(per_sweep, 1e-9)))
        if done < max_sweeps and deadline is not None and not deadline.allows(
                reserve + chunk * per_sweep):
            return w, False
    return w, True


#: Entries of the m x n arrays filled between two looks at the clock (8 MB of float64).
_BLOCK_ENTRIES = 1 << 20


class _Abandoned(Exception):
    """An iteration given up before it changed the iterates (the time left would not hold it)."""


class _Budget:
    """The time an ADMM solve keeps for what must follow (the certificate of its answer) and
    what its steps took, to decide before each step whether it may begin (issue 29: a 1 s
    limit on a problem that needs 60 s ends within 1.5 s).

    ``certificate``: seconds of one certificate (the feasible dual, its value, the primal
    value), measured when one runs, else estimated; the answer needs one after the loop when
    no check has run (the last iterate's), else none (the best checked pair's gap).
    ``prox``: seconds of the last a-step (None until the first w-step estimates it)."""

    def __init__(self, deadline, certificate: float):
        self.deadline, self.certificate, self.prox = deadline, certificate, None

    def reserve(self, checked: bool) -> float:
        return 0.0 if checked else self.certificate

    def require(self, seconds: float, checked: bool) -> None:
        """Raise :class:`_Abandoned` unless ``seconds`` of work and the reserve fit."""
        if not self.deadline.allows(seconds + self.reserve(checked)):
            raise _Abandoned(seconds + self.reserve(checked))


def _fill_rows(out, fill, budget: _Budget, checked: bool) -> None:
    """``fill(rows)`` over blocks of rows of ``out`` (elementwise work, so the same bits as in
    one call), looking at the clock between blocks: :class:`_Abandoned` once only the reserve
    is left."""
    m, n = out.shape
    step = max(1, _BLOCK_ENTRIES // max(n, 1))
    for lo in range(0, m, step):
        fill(slice(lo, lo + step))
        if lo + step < m:
            budget.require(0.0, checked)


def admm(data, lam, *, penalty, tol, max_iter, deadline, rho=None, alpha0=None,
         check_every=10):
    """Rakotomamonjy's ADMM in paper scaling; returns a dict (w, dual, gap, status, ...): the
    best primal and dual points checked and their certified relative gap.

    Stops with status "time_limit" before the ``deadline`` (a :class:`~._deadline.Deadline`)
    passes: an iteration is begun only when it (as long as the last one) and the certificate of
    the answer fit in the time left, and given up, the iterates unchanged, when a look at the
    clock inside it (between blocks of rows, chunks of the coordinate descent, before and
    after the a-step) finds that they no longer do. Status "failed" when the Gram matrix or an
    iterate is not finite (data too large for float64). Returns the best certified point so far.
    Without a time limit the iterates are those of the plain loop, bit for bit; with one, a
    check also runs after the first iteration (to time the certificate).
    """
    Xp, Xn, m, n, d = data.Xp, data.Xn, data.m, data.n, data.d
    rho = 1.0 if rho is None else float(rho)  # (checked by the ADMM method)
    limited = deadline.limit is not None
    G = duality.pair_gram(Xp, Xn)
    w = np.zeros(d)
    U = np.zeros((m, n)) if alpha0 is None else -lam * alpha0 / rho
    a, R, V, Zw, resid = (np.empty((m, n)) for _ in range(5))  # reused by every iteration
    # Under a time limit their pages are touched first, in blocks of rows that look at the
    # clock, and as many again as the a-step and a certificate allocate (three arrays, then
    # freed, so that theirs reuse touched pages): a process's first touch of memory is its
    # slowest pass (0.45 s against 0.03 s for 96 MB on a loaded 2-core machine), and would
    # otherwise fall in the a-step and the certificate, which read no clock. One array's
    # seconds then scale the first estimates: the first iteration 10 (its blocks of rows look
    # at the clock), its a-step 4, a certificate 6 (their arrays and passes); after that, what
    # they took. Without a limit only a is filled (no estimate is needed, nor the memory).
    budget = _Budget(deadline, certificate=0.0)
    begun = deadline.elapsed()
    scratch = np.empty((3 * m if limited else 0, n))
    fills = [(a, 1.0)]
    if limited:
        fills += [(R, 0.0), (V, 0.0), (Zw, 0.0), (resid, 0.0), (scratch, 0.0)]
        fills += [(U, 0.0)] if alpha0 is None else []
    try:
        for buffer, value in fills:
            _fill_rows(buffer, lambda r, b=buffer, v=value: b[r].fill(v), budget, checked=True)
        setup_stop = None
    except _Abandoned:
        setup_stop = deadline.message()
    del scratch
    one_array = (deadline.elapsed() - begun) * m * n / sum(b.size for b, _ in fills)
    last = 10.0 * one_array  # then the last iteration's seconds
    budget.certificate, first_prox = 6.0 * one_array, 4.0 * one_array
    hist = {"objective": [], "gap": [], "time": [], "rho": []}
    status, message = "max_iter", ""
    best_p, best_w, best_d, best_alpha = np.inf, w.copy(), -np.inf, None
    every = log_every(max_iter, check_every)
    chol, it, moved = None, 0, False  # moved: U is no longer its start
    if not np.all(np.isfinite(G)):
        status, message = "failed", "the Gram matrix Z^T Z overflows float64 (data too large)"
        max_iter = 0
    elif setup_stop is not None:
        status, message, max_iter = "time_limit", setup_stop, 0
    for it in range(1, max_iter + 1):
        checked = best_alpha is not None
        begun = deadline.elapsed()
        w_before = w
        try:
            budget.require(last, checked)  # not begun: as long as the last one, it would not fit
            _fill_rows(R, lambda r: np.subtract(1.0 - a[r], U[r], out=R[r]), budget, checked)
            rhs = rho * duality.w_of_alpha(Xp, Xn, R)
            if penalty == "l2":
                if chol is None:
                    chol = np.linalg.cholesky(lam * np.eye(d) + rho * G)
                w = np.linalg.solve(chol.T, np.linalg.solve(chol, rhs))
            else:
                inner_tol = max(1e-12, 1e-2 / it ** 2)
                w, done = _lasso_cd(rho * G, rhs, lam, w.copy(), 1000, inner_tol,
                                    deadline=deadline, reserve=budget.reserve(checked))
                if not done:
                    raise _Abandoned(budget.reserve(checked))
            if not np.all(np.isfinite(w)):
                status, message = "failed", f"the w-step gave a non-finite w at iteration {it}"
                break
            s, t = np.asarray(Xp @ w).ravel(), np.asarray(Xn @ w).ravel()

            def scores_and_v(r):
                np.subtract(s[r, None], t[None, :], out=Zw[r])
                np.subtract(1.0 - Zw[r], U[r], out=V[r])

            _fill_rows(Zw, scores_and_v, budget, checked)
            # the a-step (one l1,inf projection) reads the clock nowhere: begun only when it
            # fits, as long as the last one (the first: twice the w-step and its passes)
            if budget.prox is None:
                budget.prox = max(2.0 * (deadline.elapsed() - begun), first_prox)
            budget.require(budget.prox, checked)
            prox_begun = deadline.elapsed()
            a_next = prox_infinite_push_loss(V, 1.0 / rho)
            budget.prox = deadline.elapsed() - prox_begun
            # an a-step that ran long (fresh memory on a loaded machine: 0.76 s against 0.08 s
            # at 3,000 x 4,000) is dropped when the update of U (two passes) and the reserve
            # no longer fit: the answer is then the last iterate's, at no further cost
            budget.require(2.0 * one_array, checked)
        except _Abandoned as stop:
            w, status, it = w_before, "time_limit", it - 1
            seconds = stop.args[0]
            message = (deadline.message() if deadline.expired()
                       else deadline.message_before(seconds))
            break
        a_old, a = a, a_next
        np.add(a, Zw, out=resid)
        np.subtract(resid, 1.0, out=resid)
        U += resid
        moved = True
        due = it % check_every == 0 or it == max_iter or (limited and it == 1)
        # under a limit a check is skipped when it and the answer's certificate would not fit
        # (it changes no iterate)
        if due and deadline.allows(budget.certificate + budget.reserve(True)):
            check_begun = deadline.elapsed()
            alpha = duality.make_feasible(data, -rho * U / lam, lam, loss="infinite_push",
                                          penalty=penalty)
            p = bipartite_objective(data, w, lam, loss="infinite_push", penalty=penalty)
            dval = duality.dual_value(data, alpha, lam, penalty=penalty)
            budget.certificate = deadline.elapsed() - check_begun
            if p < best_p:
                best_p, best_w = p, w.copy()
            if best_alpha is None or dval > best_d:
                best_d, best_alpha = dval, alpha
            gap = duality.relative_gap(best_p, best_d)
            record(hist, objective=p, gap=gap, time=deadline.elapsed(), rho=rho)
            if it % every == 0 or it == max_iter or gap <= tol:
                log_iteration("admm", it, best_p, gap, hist["time"][-1], rho=rho)
            if gap <= tol:
                status = "optimal"
                break
        if it % 100 == 0 and it <= 2000:
            # Residual balancing: keep primal and dual residuals within a factor 10; rarely, and
            # only early on, since changing rho too often stalls ADMM.
            r_norm = np.linalg.norm(resid)
            s_norm = rho * np.linalg.norm(duality.w_of_alpha(Xp, Xn, a - a_old))
            if r_norm > 10 * s_norm:
                rho, U, chol = 2 * rho, U / 2, None
            elif s_norm > 10 * r_norm:
                rho, U, chol = rho / 2, U * 2, None
        last = deadline.elapsed() - begun
    if best_alpha is None:  # no check ran (failed or stopped early): the last iterate's pair
        if not moved and alpha0 is None:  # U = 0: the dual point 0, of value 0 (both penalties)
            best_alpha, best_d = np.zeros((m, n)), 0.0
        else:
            best_alpha = duality.make_feasible(data, -rho * U / lam, lam,
                                               loss="infinite_push", penalty=penalty)
            best_d = duality.dual_value(data, best_alpha, lam, penalty=penalty)
        best_w = w if np.all(np.isfinite(w)) else best_w
        best_p = bipartite_objective(data, best_w, lam, loss="infinite_push", penalty=penalty)
    # the gap of a feasible dual point and a primal one, as every check computed it: the
    # answer needs no other pass over the m x n pairs
    return {"w": best_w, "dual": best_alpha, "gap": duality.relative_gap(best_p, best_d),
            "status": status, "iterations": it, "history": hist, "rho": rho,
            "message": message}
