"""Projected-gradient methods on the dual ``Q(alpha)`` (Agarwal, SDM 2011, Figures 2 and 3).

Both methods see the problem only through ``project`` (Euclidean projection onto the feasible set
Omega) and the data; the gradient ``s_i - t_j - 1`` costs O((m + n) d + m n) (duality.py).

- :func:`paper_gradient_projection`: the papers' algorithm, faithfully: alpha initialised to
  ``C/(1000 m n)``, step ``eta_0 / sqrt(t)``, projection every step, output the iterate with the
  smallest Q. It stops after ``max_iter`` steps, or earlier once the duality gap of the best iterate
  is below ``tol`` (checked every ``check_every`` steps).
- :func:`fista`: accelerated projected gradient (Beck & Teboulle 2009) with step 1/L and function
  value restart (O'Donoghue & Candes 2015), stopped by the relative duality gap.

When the Lipschitz constant ``L = lambda_max(Z^T Z)`` is 0 (every pair difference is zero, or
too small for float64 to square), ``Q(alpha) = -sum(alpha)`` is linear and both methods return
its exact minimiser (:func:`_without_steps`); when L overflows they return at once with
status "failed". Both stop with status "time_limit" once their :class:`~._deadline.Deadline`
has passed (checked every step), and with "failed" if an iterate stops being finite.

Time: a step makes several passes that write a fresh m x n array (on a8a's 95 million pairs,
0.5-2 s each on a loaded 2-core machine: first-touch page faults dominate), so a step is begun
only when it and the certificate of the answer fit in the time left. The start is filled in
blocks of rows that look at the clock (:func:`_filled`); its pace gives the first step's
estimate, and when not even one step would fit, the solve stops there with the dual point 0.
"""

from __future__ import annotations

import numpy as np

from infpush_cvx._logging import log_every, log_iteration
from infpush_cvx.solvers.engines import duality

#: Entries of the start filled between two looks at the clock (8 MB of float64).
_BLOCK_ENTRIES = 1 << 20
#: Passes that write a fresh m x n array in one step: FISTA's gradient, step, projection,
#: momentum (three); the papers' gradient, step and projection (at least).
FISTA_PASSES, PAPER_PASSES = 8, 5


def _gap(data, alpha, lam, loss):
    w = duality.w_of_alpha(data.Xp, data.Xn, alpha)
    p, _, gap = duality.duality_gap(data, w, alpha, lam, loss=loss)
    return w, p, gap


def _without_steps(data, lam, project, L, *, loss, alpha0):
    """The dict of a method whose Lipschitz constant ``L`` leaves no step to take, or None:
    the exact answer when L = 0, "failed" when L overflows float64 (the data are too large).

    L = 0 means ``w(alpha) = 0`` for every alpha: then ``Q(alpha) = -sum(alpha)``, minimised
    over Omega by ``project(C 1)``: every column (Infinite Push) or every entry (RankSVM) at its
    bound, ``sum(alpha) = C``, so the dual value ``lam C = 1`` equals the primal value at
    ``w = 0``, where every hinge is 1.
    """
    if L == 0:
        alpha = project(np.full((data.m, data.n), 1.0 / lam))
        objective = _gap(data, alpha, lam, loss)[1]
        return _answer(data, alpha, "optimal", "", 0, {"objective": [objective]})
    if np.isfinite(L):
        return None
    alpha = np.zeros((data.m, data.n)) if alpha0 is None else project(alpha0)
    return _answer(data, alpha, "failed", f"the Lipschitz constant of the dual gradient is "
                   f"{L!r}: the data are too large for float64; rescale them or use "
                   f"method='working_set'", 0, {})


def _filled(shape, value, deadline, passes):
    """``(x, seconds)``: an array of ``shape`` (m x n) holding ``value`` (the bits of
    ``np.full``), and the seconds one pass writing such an array takes at the pace of its fill.

    The rows are filled in blocks of about :data:`_BLOCK_ENTRIES`, looking at the clock after
    each; ``x`` is None, and no more is filled, once the rest of the fill and ``passes`` more
    passes would not end before the ``deadline``."""
    m, n = shape
    x = np.empty(shape)
    rows = max(1, _BLOCK_ENTRIES // max(n, 1))
    begun, seconds = deadline.elapsed(), 0.0
    for lo in range(0, m, rows):
        x[lo:lo + rows].fill(value)
        done = min(lo + rows, m)
        seconds = (deadline.elapsed() - begun) * m / done
        if not deadline.allows(seconds * ((m - done) / m + passes)):
            return None, seconds
    return x, seconds


def _stopped_at_start(deadline, seconds, passes) -> tuple[str, str]:
    """``("time_limit", message)`` of a solve whose start left no time for a step."""
    return "time_limit", (deadline.message() if deadline.expired()
                          else deadline.message_before(passes * seconds))


def _answer(data, alpha, status, message, iterations, history, **extra) -> dict:
    """A method's answer at ``alpha`` (its ``w(alpha)`` too) as the dict the solvers read
    (``extra``: its own entries)."""
    return {"w": duality.w_of_alpha(data.Xp, data.Xn, alpha), "alpha": alpha, "status": status,
            "iterations": iterations, "history": history, "message": message, **extra}


def _iterate(name, step, data, lam, loss, *, max_iter, tol, deadline, check_every,
             record=(), first_step=0.0):
    """The loop both methods share: (status, message, steps taken, history).

    ``step(t)`` takes step t and returns the iterate whose gap is checked with the extra values
    to log (those named in ``record`` also go into the history), or a string, the message of a
    failed step. Every ``check_every`` steps (and at the last) the relative duality gap of that
    iterate goes into the history and the loop stops once it is below ``tol``; it stops with
    "time_limit" once the deadline has passed, or before a step that would leave too little
    time: a step takes as long as the last one (the first: ``first_step`` seconds, an estimate),
    and the certificate of the answer after the loop (w(alpha), the dual value, a feasible
    dual) about as long again.
    """
    hist = {key: [] for key in ("objective", "gap", "time", *record)}
    every = log_every(max_iter, check_every)
    last = first_step  # the seconds of the last step
    for t in range(1, max_iter + 1):
        if not deadline.allows(2.0 * last):  # the step, then the certificate
            message = (deadline.message() if deadline.expired()
                       else deadline.message_before(2.0 * last))
            return "time_limit", message, t - 1, hist
        begun = deadline.elapsed()
        out = step(t)
        if isinstance(out, str):
            return "failed", out, t, hist
        x, extra = out
        if t % check_every == 0 or t == max_iter:
            _, p, gap = _gap(data, x, lam, loss)
            row = {**extra, "objective": p, "gap": gap, "time": deadline.elapsed()}
            for key in hist:  # (the extra values named in record among them)
                hist[key].append(row[key])
            if t % every == 0 or t == max_iter or gap <= tol:
                log_iteration(name, t, p, gap, row["time"], **extra)
            if gap <= tol:
                return "optimal", "", t, hist
        last = deadline.elapsed() - begun
    return "max_iter", "", max(max_iter, 0), hist


def paper_gradient_projection(data, lam, project, *, loss, max_iter, tol, deadline, eta0=None,
                              alpha0=None, check_every=10):
    """Figure 2 (Infinite Push) / Figure 3 (RankSVM) of Agarwal 2011; returns a dict.

    ``eta0`` defaults to ``1/L`` (then ``info["eta0"]`` reports it)."""
    if eta0 is None:
        L = duality.lipschitz_constant(data.Xp, data.Xn)
        if (out := _without_steps(data, lam, project, L, loss=loss, alpha0=alpha0)) is not None:
            return dict(out, eta0=np.inf if L == 0 else 0.0)
        eta0 = 1.0 / L
    m, n = data.m, data.n
    C = 1.0 / lam
    if alpha0 is None:
        # a step, then the certificate of the answer (about as long again)
        alpha, seconds = _filled((m, n), C / (1000.0 * m * n), deadline, 2 * PAPER_PASSES)
        if alpha is None:
            status, message = _stopped_at_start(deadline, seconds, 2 * PAPER_PASSES)
            return _answer(data, np.zeros((m, n)), status, message, 0, {}, eta0=eta0)
        first_step = PAPER_PASSES * seconds
    else:
        begun = deadline.elapsed()
        alpha = project(alpha0)
        # a step makes about four passes over the m x n dual for this one (a dual value, the
        # gradient, the step and its projection): the estimate of the first step's seconds
        first_step = 4.0 * (deadline.elapsed() - begun)
    # the iterate with the smallest Q(alpha) is the one with the largest dual value
    # D = -lam Q, compared instead of Q: finite at a tiny lambda, where ||w(alpha)||^2 overflows
    best_d, best = -np.inf, alpha

    def step(t):
        nonlocal alpha, best_d, best
        d = duality.dual_value(data, alpha, lam)
        if not np.isfinite(d):
            return f"the dual objective became {-d / lam!r} at step {t}"
        if d > best_d:
            best_d, best = d, alpha
        grad = duality.dual_gradient(data.Xp, data.Xn, alpha)
        alpha = project(alpha - (eta0 / np.sqrt(t)) * grad)
        return best, {"Q": -best_d / lam, "step": eta0 / np.sqrt(t)}

    status, message, t, hist = _iterate("paper", step, data, lam, loss, max_iter=max_iter,
                                        tol=tol, deadline=deadline, check_every=check_every,
                                        record=("Q",), first_step=first_step)
    if status != "failed" and duality.dual_value(data, alpha, lam) > best_d:
        best = alpha
    return _answer(data, best, status, message, t, hist, eta0=eta0)


def fista(data, lam, project, *, loss, max_iter, tol, deadline, alpha0=None, check_every=10):
    """Accelerated projected gradient with restart on Q, gap-certified; returns a dict."""
    L = duality.lipschitz_constant(data.Xp, data.Xn)
    if (out := _without_steps(data, lam, project, L, loss=loss, alpha0=alpha0)) is not None:
        return dict(out, lipschitz=L)
    step_size = 1.0 / L
    if alpha0 is None:
        # 0 is feasible (its projection is itself); a step, then the certificate of the answer
        x, seconds = _filled((data.m, data.n), 0.0, deadline, 2 * FISTA_PASSES)
        if x is None:
            status, message = _stopped_at_start(deadline, seconds, 2 * FISTA_PASSES)
            return _answer(data, np.zeros((data.m, data.n)), status, message, 0, {},
                           lipschitz=L)
        first_step = FISTA_PASSES * seconds
    else:
        begun = deadline.elapsed()
        x = project(alpha0)
        # a step repeats this work with a gradient, a dual value and the momentum's passes
        # over the m x n arrays: about twice its time (at 3,000 x 4,000, 0.4 s and 0.9 s)
        first_step = 2.0 * (deadline.elapsed() - begun)
    y, theta = x, 1.0  # (no step changes an iterate in place)
    # the dual value D = -lam Q, compared instead of Q (finite where ||w(alpha)||^2 overflows)
    d_prev = duality.dual_value(data, x, lam)

    def step(t):
        nonlocal x, y, theta, d_prev
        x_new = project(y - step_size * duality.dual_gradient(data.Xp, data.Xn, y))
        d = duality.dual_value(data, x_new, lam)
        if d < d_prev:  # restart: drop the momentum, take a plain projected step from x
            theta = 1.0
            x_new = project(x - step_size * duality.dual_gradient(data.Xp, data.Xn, x))
            d = duality.dual_value(data, x_new, lam)
            y = x_new
        else:
            theta_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * theta * theta))
            y = x_new + ((theta - 1.0) / theta_new) * (x_new - x)
            theta = theta_new
        if not np.isfinite(d):
            return f"the dual objective became {-d / lam!r} at step {t}"
        x, d_prev = x_new, d
        return x, {"Q": -d / lam}

    status, message, it, hist = _iterate("fista", step, data, lam, loss, max_iter=max_iter,
                                         tol=tol, deadline=deadline, check_every=check_every,
                                         first_step=first_step)
    return _answer(data, x, status, message, it, hist, lipschitz=L)
