"""TopPush by an interior-point method over a working set of negatives, certified on all of them.

The TopPush primal (:mod:`.problem`) with ``tau = max_j t_j`` and ``xi_i`` the margin excess is
the quadratic program, in ``x = (w, tau, xi)``::

    min  (lam/2) ||w||^2 + sum_i c_i xi_i^2   (truncated quadratic)   or  + sum_i c_i xi_i (hinge)
    s.t. 1 + tau - x_i^+ . w - xi_i <= 0      (multiplier alpha_i, every positive i)
         -xi_i <= 0                            (multiplier mu_i, hinge only: for the truncated
                                                quadratic xi >= 0 holds at the optimum anyway)
         x_j^- . w - tau <= 0                  (multiplier beta_j, negatives j in the working set J)

Its KKT conditions are those of the dual of :mod:`.problem` (``lam w = Xp^T alpha - Xn_J^T beta``,
``sum alpha = sum beta``, ``alpha_i = 2 c_i xi_i`` or ``alpha_i + mu_i = c_i``), so the
multipliers, with ``beta_j = 0`` outside J, are a dual point of the full problem: its gap
``P(w) - D(alpha, beta)``, with P over every negative, certifies every iterate.

Mehrotra's predictor-corrector method (Nocedal & Wright, Numerical Optimization, 2nd ed.,
section 16.6) solves the QP. Its Newton system ``(P + G^T W G) dx = r`` is reduced exactly to
(d + 1) x (d + 1) in ``y = (w, tau)``: each ``xi_i`` appears in one margin row (and its sign
row), so it is eliminated coordinate by coordinate. With ``g_i = (-x_i^+, 1)``,
``h_j = (x_j^-, -1)`` and ``W_A, W_B, W_C`` the scalings of the three row kinds::

    S = diag(lam I_d, 0) + sum_i omega_i g_i g_i^T + sum_{j in J} W_Cj h_j h_j^T,
    omega_i = W_Ai (p_i + W_Bi) / (p_i + W_Ai + W_Bi)      (p_i = 2 c_i or 0)

An iteration costs O((m + |J|) d^2) for S plus O(n d) for the full certificate. Only the
negatives that can reach the top enter J (at the optimum the support of beta is the set of
negatives tied at the maximum, generically at most d + 1 of them): J starts from the negatives
ranked highest by ``mean(Xp) - mean(Xn)`` (or by a warm start), and when the restricted problem
is solved but the full gap is not closed, the negatives scoring above ``tau`` join J.
"""

from __future__ import annotations


import numpy as np
import scipy.linalg
import scipy.sparse as sp

from infpush_cvx._logging import log_iteration
from infpush_cvx.solvers.base import record
from infpush_cvx.solvers.engines.deadline import fresh_write_seconds
from infpush_cvx.solvers.toppush.problem import certifier, positive_weights

#: Working-set rounds (the interior-point iterations are bounded by ``max_iter`` in all).
_MAX_ROUNDS = 50


def _gram(X, weights) -> np.ndarray:
    """``X^T diag(weights) X`` as a dense d x d array (upper triangle only for dense X: BLAS
    syrk, half the flops of a product; the Cholesky factorisation reads only that triangle)."""
    if sp.issparse(X):
        return np.asarray((X.T @ X.multiply(weights[:, None])).todense())
    Y = np.asfortranarray(X * np.sqrt(weights)[:, None])
    return scipy.linalg.blas.dsyrk(1.0, Y, trans=1)


#: The fraction of the rows whose matrix :func:`_gram_seconds` times.
_PROBE_FRACTION = 16


def _gram_seconds(X, weights, rows: int, deadline) -> float:
    """Seconds to form the matrix S of ``rows`` rows like those of ``X``, at the pace of
    :func:`_gram` on its first ``1/16`` (discarded), and for dense rows the time to write their
    scaled copy into new memory (:func:`~..engines.deadline.fresh_write_seconds`; the probe's
    small copy reuses memory): the first iteration's S is its largest work (at 50,000 + 50,000
    x 300 on a loaded machine, 0.3 s, or 1.3 s in a process that has not yet touched that much
    memory), and no earlier work predicts it."""
    probe = max(1, X.shape[0] // _PROBE_FRACTION)
    begun = deadline.elapsed()
    _gram(X[:probe], weights[:probe])
    seconds = (deadline.elapsed() - begun) * rows / probe
    if sp.issparse(X):
        return seconds
    return seconds + fresh_write_seconds(X.size, clock=deadline.clock)


def _above(t, tau, J, most=None) -> np.ndarray:
    """The negatives outside the working set ``J`` that score above ``tau``, highest first (at
    most ``most`` of them)."""
    above = np.setdiff1d(np.flatnonzero(t > tau), J)
    return above[np.argsort(-t[above], kind="stable")[:most]]


def _tmat(X, v) -> np.ndarray:
    return np.asarray(X.T @ v, dtype=np.float64).ravel()


def _mat(X, w) -> np.ndarray:
    return np.asarray(X @ w, dtype=np.float64).ravel()


def solve(data, lam, loss, *, tol, max_iter, deadline, w0=None):
    """Returns the dict of :func:`.methods.dual_agd` (w, dual, status, iterations, ...); every
    iterate is certified on the full problem by :func:`.problem.certifier`."""
    size = min(data.n, 2 * (data.d + 1) + 8)
    if w0 is None:  # mean(Xp) - mean(Xn)
        w0 = (_tmat(data.Xp, np.full(data.m, 1.0 / data.m))
              - _tmat(data.Xn, np.full(data.n, 1.0 / data.n)))
    J = np.sort(np.argsort(-_mat(data.Xn, w0), kind="stable")[:size])  # the top scores of w0
    best, total = None, 0
    hist, c, certify = {}, positive_weights(data), certifier(data, lam, loss)
    for _ in range(_MAX_ROUNDS):  # (every round sets status and message)
        out = _ipm(data, J, lam, loss, c, tol=tol, max_iter=max_iter - total, deadline=deadline,
                   certify=certify, hist=hist, first=total, grow=size)
        J = out["J"]
        total += out["iterations"]
        if best is None or out["gap"] < best["gap"]:
            best = out
        status, message = out["status"], out["message"]
        if status != "restricted":
            break
        # the restricted problem is solved but negatives outside J score above its top
        add = _above(out["t"], out["tau"], J, size)
        if add.size == 0:  # nothing to add: the gap is the round-off floor
            status, message = "stalled", ("the restricted problem is solved and no negative "
                                          "outside the working set is violated")
            break
        J = np.union1d(J, add)
    else:
        status, message = "max_iter", f"{_MAX_ROUNDS} working-set rounds"
    return {"w": best["w"], "dual": best["dual"], "status": status, "iterations": total,
            "history": hist, "message": message, "info": {"working_set": int(J.size)}}


def _ipm(data, J, lam, loss, c, *, tol, max_iter, deadline, certify, hist, first, grow):
    """Mehrotra's method on the QP restricted to the negatives J; see the module docstring."""
    Xp, XJ, Xn = data.Xp, data.Xn[J], data.Xn
    m, k, d = data.m, J.size, data.d
    hinge = loss == "hinge"
    p_xi = np.zeros(m) if hinge else 2.0 * c
    q_xi = c if hinge else np.zeros(m)
    # start: w = 0, tau = 0, xi = 1; slacks and multipliers at the scale of the dual (c, 1/k)
    w, tau, xi = np.zeros(d), 0.0, np.ones(m)
    sA, zA = np.ones(m), c.copy()
    sB, zB = (np.ones(m), c.copy()) if hinge else (np.zeros(0), np.zeros(0))
    sC, zC = np.ones(k), np.full(k, 1.0 / k)
    n_ineq = 2 * m + k if hinge else m + k
    best = {"gap": np.inf, "w": w, "dual": (np.zeros(m), np.zeros(data.n))}
    status, message, it = "max_iter", "", 0
    # seconds of the last iteration, of its certificate (the caller's final one costs as much)
    # and of its matrix S: an iteration is not begun, nor S formed, that cannot end in time
    last = certificate = gram = 0.0
    for it in range(1, max_iter + 1):
        if deadline.expired() or deadline.remaining() < last + certificate:
            status, it = "time_limit", it - 1
            message = deadline.message() if deadline.expired() else (
                f"time limit of {deadline.limit:g} s: the next interior-point iteration (about "
                f"{last:.2g} s) would end past it")
            break
        started = deadline.elapsed()
        s_p = _mat(Xp, w)
        t_J = _mat(XJ, w)
        # certificate on the full problem at the current point (beta = 0 outside J)
        beta = np.zeros(data.n)
        beta[J] = zC
        t_full = _mat(Xn, w)
        P, _, gap, dual_point = certify(w, s_p, t_full, zA, beta)
        if gap < best["gap"]:
            best = {"gap": gap, "w": w.copy(), "dual": dual_point}
        certificate = deadline.elapsed() - started
        record(hist, objective=P, gap=gap, time=deadline.elapsed())
        log_iteration("interior_point", first + it, P, gap, hist["time"][-1], working_set=k)
        if gap <= tol:
            status = "optimal"
            break
        if it > 1:
            # negatives outside J above the current top join J now, with the mean slack of J
            # and the multiplier that puts them on the central path (s z = mu)
            new = _above(t_full, tau, J, grow)
            if new.size:
                mu = (sA @ zA + sB @ zB + sC @ zC) / n_ineq
                s_new = np.full(new.size, sC.mean())
                J = np.concatenate([J, new])
                XJ = data.Xn[J]
                t_J = t_full[J]
                sC = np.concatenate([sC, s_new])
                zC = np.concatenate([zC, mu / s_new])
                k = J.size
                n_ineq += new.size
        # residuals of the restricted QP: r_d = P x + q + G^T z, r_p = G x + s - h
        rd_w = lam * w - _tmat(Xp, zA) + _tmat(XJ, zC)
        rd_tau = zA.sum() - zC.sum()
        rd_xi = p_xi * xi + q_xi - zA - (zB if hinge else 0.0)
        rpA = 1.0 + tau - s_p - xi + sA
        rpB = -xi + sB if hinge else np.zeros(0)
        rpC = t_J - tau + sC
        mu = (sA @ zA + sB @ zB + sC @ zC) / n_ineq
        restricted_P = 0.5 * lam * (w @ w) + (c @ xi if hinge else (c * xi * xi).sum())
        scale = max(1.0, abs(restricted_P))
        res = max(np.abs(r).max(initial=0.0) for r in (rd_w, rd_tau, rd_xi, rpA, rpC, rpB))
        if mu * n_ineq <= 0.1 * tol * scale and res <= 1e-9 * scale:
            if _above(t_full, tau, J).size:  # solved on J, not on every negative
                status = "restricted"
                break
        if mu * n_ineq <= 1e-15 * scale:
            status, message = "stalled", "the interior-point method reached round-off"
            break
        WA, WB, WC = zA / sA, (zB / sB if hinge else np.zeros(m)), zC / sC
        Dxi = p_xi + WA + WB
        omega = WA * (p_xi + WB) / Dxi
        if deadline.limit is not None:
            gram = gram or _gram_seconds(Xp, omega, m + k, deadline)
            if not deadline.allows(gram + certificate):
                status, it = "time_limit", it - 1
                message = (f"time limit of {deadline.limit:g} s: the interior-point matrix of "
                           f"the next iteration (about {gram:.2g} s) would end past it")
                break
        formed = deadline.elapsed()
        S = np.empty((d + 1, d + 1))
        S[:d, :d] = _gram(Xp, omega) + _gram(XJ, WC)
        S[:d, :d][np.diag_indices(d)] += lam
        S[:d, d] = -_tmat(Xp, omega) - _tmat(XJ, WC)
        S[d, d] = omega.sum() + WC.sum()
        gram = deadline.elapsed() - formed
        try:
            factor = scipy.linalg.cho_factor(S, lower=False, check_finite=False)
        except np.linalg.LinAlgError:
            factor = None

        def newton(rc_A, rc_B, rc_C):
            """Direction for the complementarity targets ``rc`` (= Z ds + S dz)."""
            # dz = (rc + z r_p + z G dx) / s ; rhs r = -r_d - G^T (rc + z r_p) / s
            rows = tuple(zip((rc_A, rc_B, rc_C), (sA, sB, sC), (zA, zB, zC), (rpA, rpB, rpC)))
            uA, uB, uC = ((rc + z * rp) / s for rc, s, z, rp in rows)
            # G^T u: w: -Xp^T uA + XJ^T uC; tau: sum uA - sum uC; xi: -uA - uB
            r_w = -rd_w + _tmat(Xp, uA) - _tmat(XJ, uC)
            r_tau = -rd_tau - uA.sum() + uC.sum()
            r_xi = -rd_xi + uA + (uB if hinge else 0.0)
            # eliminate xi: dxi = (r_xi + WA g^T dy) / Dxi, g_i = (-x_i, 1)
            v = WA * r_xi / Dxi
            rhs = np.concatenate([r_w - _tmat(Xp, v), [r_tau + v.sum()]])
            if factor is not None:
                dy = scipy.linalg.cho_solve(factor, rhs, check_finite=False)
            else:
                dy = np.linalg.lstsq(np.triu(S) + np.triu(S, 1).T, rhs, rcond=None)[0]
            dw, dtau = dy[:d], dy[d]
            Gdx_A_y = dtau - _mat(Xp, dw)  # g_i . dy
            dxi = (r_xi + WA * Gdx_A_y) / Dxi
            # G dx of each row kind (the sign rows B are empty without the hinge)
            Gdx = (Gdx_A_y - dxi, -dxi if hinge else np.zeros(0), _mat(XJ, dw) - dtau)
            return (dw, dtau, dxi, tuple(-rp - G for (_, _, _, rp), G in zip(rows, Gdx)),
                    tuple((rc + z * rp + z * G) / s for (rc, s, z, rp), G in zip(rows, Gdx)))

        # predictor (affine scaling): rc = -s z
        aff = newton(-sA * zA, -sB * zB, -sC * zC)
        a_aff = _step(sA, sB, sC, zA, zB, zC, aff[3], aff[4])
        mu_aff = sum(((s + a_aff * ds) @ (z + a_aff * dz))
                     for s, z, ds, dz in zip((sA, sB, sC), (zA, zB, zC), aff[3], aff[4])) / n_ineq
        sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
        # corrector: rc = -s z + sigma mu - ds_aff dz_aff
        cor = newton(*(-s * z + sigma * mu - ds * dz
                       for s, z, ds, dz in zip((sA, sB, sC), (zA, zB, zC), aff[3], aff[4])))
        a = 0.99 * _step(sA, sB, sC, zA, zB, zC, cor[3], cor[4])  # (_step is at most 1)
        w = w + a * cor[0]
        tau = tau + a * cor[1]
        xi = xi + a * cor[2]
        sA, sB, sC = (s + a * ds for s, ds in zip((sA, sB, sC), cor[3]))
        zA, zB, zC = (z + a * dz for z, dz in zip((zA, zB, zC), cor[4]))
        if not np.all(np.isfinite(w)):
            status, message = "failed", f"the iterate stopped being finite at step {it}"
            break
        last = deadline.elapsed() - started
    else:
        message = f"{max_iter} interior-point iterations"
    return {"w": best["w"], "dual": best["dual"], "gap": best["gap"], "status": status,
            "message": message, "iterations": it, "t": _mat(Xn, w), "tau": tau, "J": J}


def _step(sA, sB, sC, zA, zB, zC, ds, dz) -> float:
    """The largest step in (0, 1] keeping every slack and multiplier nonnegative."""
    a = 1.0
    for v, dv in zip((sA, sB, sC, zA, zB, zC), (*ds, *dz)):
        neg = dv < 0
        if np.any(neg):
            a = min(a, float(np.min(-v[neg] / dv[neg])))
    return a
