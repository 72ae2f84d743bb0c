"""RankSVM by Newton's method on a smoothed hinge, certified by an implicit dual point.

The bipartite RankSVM (Agarwal, SDM 2011, eq. 4.18; weighted rows, ``W = M N``)::

    P(w) = lam/2 ||w||^2 + (1/W) sum_ij p_i q_j h(x_ij),   x_ij = 1 - s_i + t_j,  h(x) = max(0, x)

With ``c = mu/2`` the smoothed hinge
``h_mu(x) = max_{0<=a<=1} a (x + c) - mu a^2 / 2`` equals the hinge outside ``|x| < c`` and
exceeds it by at most ``mu/8`` inside; its derivative is the ramp ``a(x) = clip((x + c)/mu, 0, 1)``.
``F_mu = lam/2 ||w||^2 + (1/W) sum p q h_mu`` is differentiable with a piecewise constant Hessian

    lam I + (1/(W mu)) sum_{|x_ij| < c} p_i q_j z_ij z_ij^T,     z_ij = x_i - x_j,

so Newton's method with a backtracking line search minimises it in a few steps (Chapelle,
"Training a support vector machine in the primal", Neural Computation 2007, for the same
piecewise quadratic structure). Every sum over the m n pairs is over the pairs on one side of, or
within ``c`` of, a threshold, so sorting the scores makes it a prefix sum (:mod:`._pair_sums`):
the ramp sums, the objective and the gradient cost O(nnz(X) + (m + n) log(m + n)), the Hessian
one sweep over the sorted scores (:class:`~infpush_cvx.solvers.engines.pair_gram.PairGram`,
O(nnz(X) d) for sparse rows; Lee & Lin, "Large-scale linear RankSVM", Neural Computation 2014,
use order statistics the same way). No m x n array.

Certificate: ``alpha_ij = (C/W) p_i q_j a(x_ij)`` lies in RankSVM's dual box for every w and mu,
and is held implicitly by the scores and mu; ``w(alpha)`` and ``sum(alpha)`` are ramp sums too.
At the minimiser of ``F_mu``, ``w = w(alpha)`` and the duality gap of the original problem is at
most ``mu/8`` times the (weighted) fraction of pairs within ``c`` of the margin, so mu is
divided by 10 until the certified relative gap is below ``tol``. The zone's sums divide by mu:
they are summed pair by pair while the zone is small (:class:`._ramp_sums.RampSums`), so their
round-off is not magnified by 1/mu, and mu stops where it would be lost in the round-off of the
margins (status "stalled").

Schedule: a cold start begins at ``mu = 4`` (:data:`COLD_MU`), where every pair is in the zone,
a warm start at 0.1 (:data:`WARM_MU`). Each ``F_mu`` is minimised until its Newton decrement is
negligible, or, while every line search has taken the full Newton step, only until the
decrement ``g' H^-1 g`` (about twice ``F_mu(w) - min F_mu``) is below the smoothing's own error
bound ``(mu/8) (1/W) sum_zone p_i q_j`` (:func:`smoothing_bound`) and the step moved no score by
more than the zone's width ``mu`` (:func:`score_shift`): solving ``F_mu`` further would not
lower the gap its smoothing allows (on a8a: 7-10 Newton steps instead of 18-19). After a
shortened step (nearly separable data, small lambda) the remaining values of mu are each
minimised fully, which those solves need.

Time: the deadline is looked at before every pass over the data (each certificate, each
line-search trial, each block of the Hessian's rows), so a ``time_limit`` is overrun by at
most one such stage.
"""

from __future__ import annotations


import numpy as np
import scipy.linalg

from infpush_cvx._logging import log_iteration
from infpush_cvx.solvers.base import data_size, record
from infpush_cvx.solvers.engines.common import dense
from infpush_cvx.solvers.engines.deadline import Deadline, fresh_write_seconds, round_end
from infpush_cvx.solvers.engines.pair_gram import PairGram
from infpush_cvx.solvers.engines.ramp_sums import RampSums
from infpush_cvx.solvers.engines.implicit_dual import (best_multiple, dense_from_columns,
                                                       dual_value, expand_column)
from infpush_cvx.solvers.engines.duality import dual_bound, relative_gap


class RampDual:
    """``alpha_ij = scale p_i q_j a(x_ij)`` at reference scores and mu: RankSVM's implicit dual
    (``scale``: ``C/(M N)`` times the factor that makes it feasible, times the rescaled problem's
    ``alpha_scale``). ``collapsed``: set by :func:`run` when repeated rows were collapsed."""

    def __init__(self, s_ref, t_ref, p, q, mu, scale, roundoff_amplification=1.0):
        self.s_ref, self.t_ref, self.p, self.q, self.mu, self.scale = s_ref, t_ref, p, q, mu, scale
        #: how much the ramp sums magnified the round-off of w(alpha) and sum(alpha)
        #: (:attr:`._ramp_sums.RampSums.amplification`, :func:`~.duality.gap_roundoff`)
        self.roundoff_amplification, self.collapsed = roundoff_amplification, None

    def _reduced_column(self, J: int) -> np.ndarray:
        x = 1.0 - self.s_ref + self.t_ref[J]
        ramp = np.clip((x + 0.5 * self.mu) / self.mu, 0.0, 1.0)
        return (self.scale * self.q[J]) * ramp * self.p

    def column(self, j: int) -> np.ndarray:
        """Column j of ``alpha`` (length m) for the caller's data, in O(m) memory."""
        return expand_column(self, j, self._reduced_column, self.p, self.q)

    def to_dense(self) -> np.ndarray:
        """``alpha`` (m x n) for the caller's data: O(m n) memory, for small problems only."""
        return dense_from_columns(self)


#: The smoothing of a cold start. At w = 0 every margin ``x_ij`` is 1, so a zone ``|x| < mu/2 = 2``
#: holds every pair and the first Newton step has their curvature; at mu = 1 the zone was empty,
#: the Hessian ``lam I`` alone, and the first step (1/lam long) was halved 7-14 times on a8a.
COLD_MU = 4.0
#: The smoothing of a warm start (a nearby lambda's solution): near the optimum's scores, not
#: within a narrow band of them. From 1e-2 (before the early schedule) a path of 4 lambdas took
#: 162-232 Newton steps where cold starts took 139-182; from 0.1, 128-164.
WARM_MU = 0.1


def smoothing_bound(mu: float, zone_weight: float, W: float) -> float:
    """The smoothing's error bound ``(mu/8) (1/W) sum_{|x_ij| < c} p_i q_j``: ``F_mu`` exceeds
    the RankSVM objective by at most this at the same w (module docstring), and at the
    minimiser of ``F_mu`` it bounds the duality gap."""
    return 0.125 * mu * float(zone_weight) / W


def score_shift(s, t, s_new, t_new) -> float:
    """The largest change of a score between two points."""
    return max(float(np.abs(s_new - s).max(initial=0.0)),
               float(np.abs(t_new - t).max(initial=0.0)))


def below_round_off(mu: float, s, t) -> bool:
    """Whether a smoothing ``mu`` is lost in the round-off of the margins ``1 - s_i + t_j``
    (1000 ulps of the largest): the ramp's sums divide by mu, so their round-off would then
    exceed their values (at tol=1e-14 mu fell to 0 and the sums became NaN)."""
    scale = 1.0 + max(float(np.abs(s).max(initial=0.0)), float(np.abs(t).max(initial=0.0)))
    return mu < 1000.0 * np.finfo(float).eps * scale


def solve(prob, *, tol: float, max_iter: int, deadline: Deadline, w0=None,
          mu0: float = COLD_MU):
    """Smoothing continuation with Newton steps on the rescaled problem ``prob``
    (a :class:`._working_set._Problem` of the RankSVM); returns the working set's result dict.

    ``deadline`` (a :class:`~._deadline.Deadline`) is looked at before every stage that costs
    a pass over the data: each certificate, each line-search trial, each block of the Hessian.
    ``history["step_size"]`` holds the step taken after each record (NaN when none was).
    """
    Xp, Xn, p, q = prob.Xp, prob.Xn, prob.p, prob.q
    zone_gram = PairGram(Xp, Xn, p, q)
    lam, W, mu = prob.lam, prob.M * prob.N, mu0
    w = np.zeros(prob.d) if w0 is None else np.asarray(w0, float).copy()
    history = {"objective": [], "gap": [], "time": [], "mu": [], "step_size": []}
    best_p, best_d = (np.inf, w), (-np.inf, None)
    status, message, gap, it = "max_iter", f"max_iter={max_iter} Newton steps reached", np.inf, 0
    on_track = True  # every line search so far took the full Newton step

    def smoothed(w):
        s, t = prob.scores(w)
        ramp = RampSums(s, t, p, q, mu)
        F = 0.5 * lam * (w @ w) + float(q @ ramp.col_h) / W
        return s, t, ramp, F

    if deadline.expired():  # (the rescaled copy took the time left): the start, no dual
        return stopped_before_start(w * prob.scale, deadline)
    s, t, ramp, F = smoothed(w)
    for it in range(1, max_iter + 1):
        # certificate at the current point: primal P(w) (and P(w(alpha))) and the ramp dual
        g_pairs = (np.asarray(Xp.T @ (p * ramp.row)).ravel()
                   - np.asarray(Xn.T @ (q * ramp.col)).ravel())  # sum p q a z
        coef = dual_bound(lam, prob.M, prob.N, "ranksvm")  # C/(M N)
        w_alpha, total = coef * g_pairs, coef * float(q @ ramp.col)
        factor = best_multiple(w_alpha, total)
        D = dual_value(factor * w_alpha, factor * total, lam, "l2")
        if D > best_d[0]:
            best_d = (D, RampDual(s, t, p, q, mu, coef * factor * prob.alpha_scale,
                                  ramp.amplification))
        # w(alpha) as a primal candidate too (the earliest of equal values is kept)
        P_a = prob.objective(factor * w_alpha) if np.any(w_alpha) else np.inf
        best_p = min(best_p, (prob.objective(w, s, t), w.copy()), (P_a, factor * w_alpha),
                     key=lambda point: point[0])
        gap = relative_gap(best_p[0], best_d[0])
        # step_size: the step from here, once taken
        record(history, objective=best_p[0], gap=gap, time=deadline.elapsed(), mu=mu,
               step_size=float("nan"))
        log_iteration("smoothing_newton", it, best_p[0], gap, history["time"][-1], mu=mu)
        end = round_end(gap, tol, deadline)
        if end is not None:
            status, message = end
            break
        grad = lam * w - g_pairs / W
        # the Hessian lam I + (1/(W mu)) sum_{|x_ij| < c} p_i q_j z_ij z_ij^T (module docstring)
        H = zone_gram.window(s, 1.0 + t, -0.5 * mu, 0.5 * mu, deadline)
        if H is None:
            status, message = "time_limit", deadline.message()
            break
        H /= W * mu
        H[np.diag_indices_from(H)] += lam
        try:
            step = -scipy.linalg.solve(H, grad, assume_a="pos", check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            step = -grad / lam
        decrement = -float(grad @ step)
        within_smoothing = decrement <= smoothing_bound(mu, q @ ramp.col_zone, W)
        if decrement <= 1e-14 * max(abs(F), 1e-300):
            history["step_size"][-1] = 0.0  # converged for this mu: smooth less (below)
        else:
            size = 1.0
            while not deadline.expired():  # backtracking (Armijo) on F_mu
                w_new = w + size * step
                s_n, t_n, ramp_n, F_n = smoothed(w_new)
                if F_n <= F - 1e-4 * size * decrement or size < 1e-10:
                    break
                size *= 0.5
            else:
                status, message = "time_limit", deadline.message()
                break
            history["step_size"][-1] = size
            if size >= 1e-6:
                on_track = on_track and size == 1.0
                # smooth less early while on track (module docstring, "Schedule")
                early = on_track and within_smoothing and score_shift(s, t, s_n, t_n) <= mu
                w, s, t, ramp, F = w_new, s_n, t_n, ramp_n, F_n
                if not early:
                    continue
            elif F_n < F:
                # (almost) no descent: the Newton direction is spoilt by round-off in a Hessian
                # whose curvature 1/mu is concentrated on few pairs (nearly separable data,
                # d >= m, stalled here for 400 steps at steps of 1e-9): smooth less
                w, s, t = w_new, s_n, t_n
        mu /= 10.0
        if below_round_off(mu, s, t):
            status, message = "stalled", (f"the smoothing mu={mu:.1e} reached the round-off of "
                                          f"the scores: no smaller gap can be certified")
            break
        s, t, ramp, F = smoothed(w)
    return {"w": best_p[1] * prob.scale, "dual": best_d[1], "gap": gap, "status": status,
            "message": message, "iterations": it, "history": history,
            "objective_paper": best_p[0]}


def run(data, lam: float, *, tol: float, max_iter: int, deadline: Deadline, w0=None):
    """Collapse repeated rows, rescale, solve; ``lam`` in paper scaling, ``w0`` in the caller's
    units. Returns the result dict of :func:`solve` (``dual`` maps back to the original rows).

    The collapse (a hash of every row) is skipped when a column already tells every row of a
    class apart (continuous features: no row can repeat), where it would cost as much as a
    Newton step and find nothing.
    """
    from infpush_cvx.solvers.engines.working_set import _Problem, collapse

    reduced, collapsed = (data, None) if no_repeated_rows(data) else collapse(data)
    if not fits_rescaled_copy(reduced, deadline):
        return stopped_before_start(np.zeros(data.d) if w0 is None else np.asarray(w0, float),
                                     deadline)
    prob = _Problem(reduced, lam, "ranksvm", "l2")
    out = solve(prob, tol=tol, max_iter=max_iter, deadline=deadline,
                w0=None if w0 is None else np.asarray(w0, float) / prob.scale,
                mu0=COLD_MU if w0 is None else WARM_MU)
    if out["dual"] is not None:
        out["dual"].collapsed = collapsed
    return out


def fits_rescaled_copy(data, deadline: Deadline) -> bool:
    """Whether the rescaled copy of ``data`` (:class:`._working_set._Problem`: a pass for the
    row norms, then a copy into new memory, which reads no clock) ends before the deadline: at
    least half the set-up so far (a check and passes over the data), and at least the time to
    write its entries into new memory (:func:`~.deadline.fresh_write_seconds`, measured only
    under a limit). Data arriving as read-only views, not copies, made the first estimate 0.13
    s for a copy of 0.8 s (50,000 + 50,000 x 300, a 1 s limit overrun by 0.4 s)."""
    if deadline.limit is None:
        return True
    if deadline.remaining() <= 0.5 * deadline.elapsed():
        return False
    return deadline.allows(fresh_write_seconds(data_size(data.Xp, data.Xn),
                                               clock=deadline.clock))


def stopped_before_start(w, deadline: Deadline) -> dict:
    """The result dict of a solve whose time ran out in its set-up (or whose next stage would
    not fit in the time left): its start, uncertified."""
    message = deadline.message() if deadline.expired() else (
        f"time limit of {deadline.limit:g} s: the set-up of the solve (a rescaled copy of the "
        f"data) would end past it")
    return {"w": w, "dual": None, "gap": None, "status": "time_limit", "message": message,
            "iterations": 0, "history": {}}


def no_repeated_rows(data, columns: int = 3) -> bool:
    """True when one of the first ``columns`` columns has distinct values within Xp and within
    Xn: rows that differ there differ, so no row of a class repeats. False proves nothing."""
    return any(all(np.unique(dense(X[:, [k]]).ravel()).size == X.shape[0]
                   for X in (data.Xp, data.Xn)) for k in range(min(columns, data.d)))
