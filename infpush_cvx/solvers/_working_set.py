"""Certified working-set solver shared by the Infinite Push (l2, l1) and RankSVM.

Idea (constraint generation; cf. formulations.md section 1, "active negatives"): at an optimum only
a few negatives attain the max of the hinge sums, and only pairs near the margin ``s_i - t_j = 1``
need their hinge written out. So the full objective is replaced by a *lower model*:

- negatives outside a working set W are dropped (Infinite Push only: they lie below the max);
- for j in W each pair (i, j) is either in the band B (hinge kept exactly), in L (margin < 1 when
  classified: hinge replaced by its linear piece ``1 - s_i + t_j``), or in U (replaced by 0).

Every replacement is <= the true hinge, so ``model <= P`` everywhere and the model's minimiser w_r
is optimal for the full problem as soon as the model is exact at w_r (no L pair with margin > 1, no
U pair with margin < 1, no negative outside W above the max). Otherwise the offending negatives are
added and the model re-centred at w_r: band = pairs within ``band`` of the margin at w_r plus the
misclassified ones, L/U re-classified at w_r (this keeps the band small, a few hundred pairs).
After ``recentre_rounds`` rounds the band only grows (the misclassified pairs are added to it),
so the sets only grow and the loop is finite.

Proximal steps (l2, ``prox > 0``): the model's linear pieces are exact only near the reference
point, and a plain model step from a poor point jumps far, misclassifies many pairs and makes the
band oscillate. So each restricted QP adds ``prox/2 ||w - w_ref||^2`` (a proximal-bundle step on
the model; measured at m = n = 1000, d = 100: 10 rounds instead of 11 and a band of ~5,000 pairs
instead of ~9,000, half the time; RankSVM 12 rounds where plain steps stall at gap ~1). The
multipliers stay feasible for the full dual (the prox term only moves w), so the certificate is
unchanged; when a round adds nothing the model is exact at w_r and the next step is a plain one,
which is what ends the loop. From a warm start the first step is plain.

The l1 model is stabilised the same way (``prox=10`` by default) and re-centred for the first 3
rounds only: at m = n = 1000, d = 100, lam = 0.01 that converged in 19 rounds, where plain LP
steps (``prox=0``, then by HiGHS) oscillated with a band of ~10,000 pairs and stopped at gap 0.43
after 30 s (prox 1 and re-centring for 20 rounds were both about twice as slow).

The restricted problem is solved to high accuracy by the structured interior-point method of
:mod:`._restricted_ipm`, which reduces each Newton system to a dense (d + 1) x (d + 1) one (m = n
= 1000, d = 100: 40-100 ms per step where Clarabel with qdldl took 250-600 ms). If it fails, or
d > 2000, the step goes to Clarabel, and a plain l1 step (an LP) that Clarabel fails on too to
HiGHS through ``scipy.optimize.linprog``; ``history["step_solver"]`` records which one solved each
round. For Clarabel the problem is written in compact form (score variables ``u = Xp[I] w``,
``v = Xn[J] w``, three nonzeros per band pair). The step's multipliers extend to a feasible
``alpha`` of the full dual (``alpha_ij`` = group multiplier on L, pair multiplier on B, 0 on U),
and the stopping test is the full relative duality gap of :mod:`infpush_cvx.solvers.duality`,
not the model.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..data import BipartiteData
from ..objectives import bipartite_objective, negative_hinge_sums
from . import duality
from ._restricted_ipm import RestrictedProblem, solve_restricted


def _rows(X, idx):
    return X[idx]


def _as_dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


class _Model:
    """The restricted problem assembled from the current working sets (C-scaling, C = 1/lam)."""

    def __init__(self, data, cols, L, Bi, Bj, coef, loss):
        self.data, self.cols, self.L, self.Bi, self.Bj = data, cols, L, Bi, Bj
        self.coef, self.loss = coef, loss
        Xp, Xn = data.Xp, data.Xn
        # Linear pieces, per group (Infinite Push: one group per negative in W; RankSVM: one).
        cnt_i = L.sum(axis=1)  # per positive, number of L pairs (summed over groups)
        cnt_j = L.sum(axis=0)  # per group column
        if loss == "infinite_push":
            self.a = cnt_j.astype(float)
            Lf = L.T.astype(np.float64)
            self.g = np.asarray(Lf @ Xp if not sp.issparse(Xp) else (Xp.T @ Lf.T).T) \
                - cnt_j[:, None] * _as_dense(_rows(Xn, cols))
        else:
            self.a = np.array([float(cnt_j.sum())])
            self.g = (np.asarray(Xp.T @ cnt_i.astype(float)).ravel()
                      - np.asarray(Xn[cols].T @ cnt_j.astype(float)).ravel())[None, :]
        self.I, self.bi = np.unique(Bi, return_inverse=True)
        self.J, self.bj = np.unique(Bj, return_inverse=True)  # positions in cols


_DIRECT_METHOD = "qdldl"  # "auto" picks faer, 2-3x slower on these KKT systems


def _solve_qp(model, d, prox=0.0, center=None, penalty="l2"):
    """Clarabel on ``pen(w) + coef * [model loss] + prox/2 ||w - center||^2`` (C-scaling).

    ``pen`` is ``||w||^2 / 2`` (l2) or ``||w||_1`` (l1, epigraph ``-p <= w <= p``: then the
    problem is an LP when ``prox = 0``). Returns w, group multipliers mu and pair multipliers nu.
    """
    import clarabel

    data = model.data
    nI, nJ, nb = model.I.size, model.J.size, model.Bi.size
    k = model.a.size
    ip = model.loss == "infinite_push"
    l1 = penalty == "l1"
    n_p = d if l1 else 0
    # x = [w (d), u (nI), v (nJ), xi_b (nb), xi (1, Infinite Push only), p (d, l1 only)]
    nx = d + nI + nJ + nb + (1 if ip else 0) + n_p
    o_u, o_v, o_b, o_x = d, d + nI, d + nI + nJ, d + nI + nJ + nb
    o_p = nx - n_p
    q = np.zeros(nx)
    if ip:
        q[o_x] = model.coef
    else:
        q[:d] = -model.coef * model.g[0]
        q[o_b:o_b + nb] = model.coef
    if l1:
        q[o_p:] = 1.0
    if prox > 0:
        q[:d] -= prox * center
    curv = (0.0 if l1 else 1.0) + prox
    P = sp.csc_matrix((np.full(d, curv), (np.arange(d), np.arange(d))), shape=(nx, nx))
    XI = data.Xp[model.I]
    XJ = data.Xn[model.cols[model.J]]
    rows, b_parts, cones = [], [], []
    if nI + nJ:  # zero cone: u - Xp[I] w = 0, v - Xn[J] w = 0
        A_eq = sp.bmat([[-sp.csr_matrix(XI), sp.identity(nI), None],
                        [-sp.csr_matrix(XJ), None, sp.identity(nJ)]], format="csr")
        A_eq = sp.hstack([A_eq, sp.csr_matrix((nI + nJ, nx - A_eq.shape[1]))], format="csr")
        rows.append(A_eq)
        b_parts.append(np.zeros(nI + nJ))
        cones.append(clarabel.ZeroConeT(nI + nJ))
    r = np.arange(nb)
    if ip:
        # group j:  -g_j.w + sum_{b in B_j} xi_b - xi <= -a_j
        G = sp.hstack([sp.csr_matrix(-model.g), sp.csr_matrix((k, nI + nJ)),
                       sp.csr_matrix((np.ones(nb), (model.Bj, r)), shape=(k, nb)),
                       sp.csr_matrix(-np.ones((k, 1))), sp.csr_matrix((k, n_p))], format="csr")
        rows.append(G)
        b_parts.append(-model.a)
    # pair b: -u_i + v_j - xi_b <= -1 ;  -xi_b <= 0
    Pr = sp.csr_matrix((np.concatenate([-np.ones(nb), np.ones(nb), -np.ones(nb)]),
                        (np.concatenate([r, r, r]),
                         np.concatenate([o_u + model.bi, o_v + model.bj, o_b + r]))),
                       shape=(nb, nx))
    Nn = sp.csr_matrix((-np.ones(nb), (r, o_b + r)), shape=(nb, nx))
    rows += [Pr, Nn]
    b_parts += [-np.ones(nb), np.zeros(nb)]
    if l1:  # w - p <= 0, -w - p <= 0
        e = np.arange(d)
        rows.append(sp.csr_matrix(
            (np.concatenate([np.ones(d), -np.ones(d), -np.ones(d), -np.ones(d)]),
             (np.concatenate([e, d + e, e, d + e]), np.concatenate([e, e, o_p + e, o_p + e]))),
            shape=(2 * d, nx)))
        b_parts.append(np.zeros(2 * d))
    n_ineq = (k if ip else 0) + 2 * nb + 2 * n_p
    cones.append(clarabel.NonnegativeConeT(n_ineq))
    A = sp.vstack(rows, format="csc")
    b = np.concatenate(b_parts)
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.direct_solve_method = _DIRECT_METHOD
    settings.tol_gap_abs = settings.tol_gap_rel = 1e-9
    settings.tol_feas = 1e-9
    solver = clarabel.DefaultSolver(P, q, A, b, cones, settings)
    sol = solver.solve()
    status = str(sol.status)
    if status not in ("Solved", "AlmostSolved"):
        raise RuntimeError(f"restricted QP not solved by Clarabel: {status}")
    z = np.asarray(sol.z)
    off = nI + nJ
    mu = z[off:off + k] if ip else np.full(1, model.coef)
    nu = z[off + (k if ip else 0):off + (k if ip else 0) + nb]
    return np.asarray(sol.x)[:d].copy(), mu, nu


def _solve_ipm(model, d, prox=0.0, center=None, penalty="l2"):
    """The same problem as :func:`_solve_qp` by the structured interior-point method."""
    data = model.data
    ip = model.loss == "infinite_push"
    l1 = penalty == "l1"
    q_w = np.zeros(d) if prox == 0 else -prox * np.asarray(center, float)
    XI = _as_dense(data.Xp[model.I])
    kappa = (0.0 if l1 else 1.0) + prox  # curvature of pen(w) + prox/2 ||w - center||^2
    if ip:  # one group per working negative: pairs indexed by their group
        prob = RestrictedProblem(XI, _as_dense(data.Xn[model.cols]), model.bi, model.Bj,
                                 coef=model.coef, groups=True, a=model.a, g=model.g,
                                 q_w=q_w, kappa=kappa, l1=l1)
    else:
        prob = RestrictedProblem(XI, _as_dense(data.Xn[model.cols[model.J]]), model.bi, model.bj,
                                 coef=model.coef, groups=False, c_e=model.coef,
                                 q_w=q_w - model.coef * model.g[0], kappa=kappa, l1=l1)
    w, mu, nu, info = solve_restricted(prob, center=center)
    if info["status"] not in ("optimal", "almost_optimal"):
        raise RuntimeError(f"restricted problem not solved by the interior-point method: "
                           f"{info['status']} after {info['iterations']} iterations")
    if not ip:
        mu = np.full(1, model.coef)
    return w, mu, nu


def _solve_lp(model, d):
    """HiGHS (scipy.optimize.linprog) on min ||w||_1 + coef * xi over the restricted model."""
    from scipy.optimize import linprog

    data = model.data
    nI, nJ, nb = model.I.size, model.J.size, model.Bi.size
    k = model.a.size
    # x = [w+ (d), w- (d), u (nI), v (nJ), xi_b (nb), xi (1)]
    nx = 2 * d + nI + nJ + nb + 1
    o_u, o_v, o_b, o_x = 2 * d, 2 * d + nI, 2 * d + nI + nJ, 2 * d + nI + nJ + nb
    c = np.zeros(nx)
    c[:2 * d] = 1.0
    c[o_x] = model.coef
    XI = sp.csr_matrix(data.Xp[model.I])
    XJ = sp.csr_matrix(data.Xn[model.cols[model.J]])
    A_eq = sp.bmat([[-XI, XI, sp.identity(nI), None, sp.csr_matrix((nI, nb + 1))],
                    [-XJ, XJ, None, sp.identity(nJ), sp.csr_matrix((nJ, nb + 1))]],
                   format="csr") if nI + nJ else None
    r = np.arange(nb)
    G = sp.hstack([sp.csr_matrix(-model.g), sp.csr_matrix(model.g),
                   sp.csr_matrix((k, nI + nJ)),
                   sp.csr_matrix((np.ones(nb), (model.Bj, r)), shape=(k, nb)),
                   sp.csr_matrix(-np.ones((k, 1)))], format="csr")
    Pr = sp.csr_matrix((np.concatenate([-np.ones(nb), np.ones(nb), -np.ones(nb)]),
                        (np.concatenate([r, r, r]),
                         np.concatenate([o_u + model.bi, o_v + model.bj, o_b + r]))),
                       shape=(nb, nx))
    A_ub = sp.vstack([G, Pr], format="csr")
    b_ub = np.concatenate([-model.a, -np.ones(nb)])
    bounds = [(0, None)] * (2 * d) + [(None, None)] * (nI + nJ) + [(0, None)] * (nb + 1)
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.zeros(nI + nJ) if nI + nJ else None,
                  bounds=bounds, method="highs",
                  options={"primal_feasibility_tolerance": 1e-10,
                           "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(f"restricted LP not solved by HiGHS: {res.message}")
    lam_ub = -np.asarray(res.ineqlin.marginals)
    x = res.x
    return x[:d] - x[d:2 * d], lam_ub[:k], lam_ub[k:k + nb]


_IPM_MAX_D = 2000  # the interior-point method factors a dense (d + 1) x (d + 1) matrix


def _restricted_step(model, d, prox, center, penalty):
    """One model step: the structured interior-point method, Clarabel if it fails (or d is large),
    and HiGHS for a plain l1 step (an LP) that Clarabel fails on too.

    Returns ``(w, mu, nu, name of the solver used)``; raises RuntimeError when all fail.
    """
    errors = []
    if d <= _IPM_MAX_D:
        try:
            return (*_solve_ipm(model, d, prox, center, penalty), "ipm")
        except RuntimeError as exc:
            errors.append(str(exc))
    try:
        return (*_solve_qp(model, d, prox, center, penalty), "clarabel")
    except RuntimeError as exc:
        errors.append(str(exc))
        if penalty == "l2" or prox > 0:
            raise RuntimeError("; ".join(errors)) from exc
    return (*_solve_lp(model, d), "highs")


def _keep_smallest(mask, key, k):
    """``mask`` with only its ``k`` entries of smallest ``key`` left set (all if it has <= k)."""
    idx = np.flatnonzero(mask)
    if idx.size <= k:
        return mask
    keep = idx[np.argpartition(key.ravel()[idx], k)[:k]]
    out = np.zeros(mask.size, dtype=bool)
    out[keep] = True
    return out.reshape(mask.shape)


def _initial_w(data, lam, loss, penalty):
    """Centroid direction ``mean(Xp) - mean(Xn)``, scaled by a 1-D search on the objective."""
    w0 = np.asarray(data.Xp.mean(axis=0)).ravel() - np.asarray(data.Xn.mean(axis=0)).ravel()
    nrm = float(np.linalg.norm(w0))
    if nrm == 0:
        return w0
    s0, t0 = np.asarray(data.Xp @ w0).ravel(), np.asarray(data.Xn @ w0).ravel()
    spread = max(float(s0.max() - t0.min()), 1e-300)
    best, best_c = np.inf, 0.0
    for c in np.geomspace(1e-3, 1e3, 61) / spread:
        v = bipartite_objective(data, c * w0, lam, loss=loss, penalty=penalty)
        if v < best:
            best, best_c = v, c
    return best_c * w0


def solve(data: BipartiteData, lam: float, *, loss: str, penalty: str, tol: float,
          max_iter: int, w0=None, band: float = 0.2, max_new_pairs: int = 5000,
          max_new_negatives: int | None = None, sticky: bool = False,
          recentre_rounds: int | None = None, prox: float | None = None,
          time_limit: float | None = None):
    """Run the working-set loop; returns a dict with w, alpha, gap, status, history, info.

    Defaults by penalty (module docstring): l2 ``prox=1``, ``recentre_rounds=20``; l1
    ``prox=10``, ``recentre_rounds=3`` (``prox=0``: plain model steps, for l1 an LP).
    """
    t_start = time.perf_counter()
    m, n, d = data.m, data.n, data.d
    Xp, Xn = data.Xp, data.Xn
    C = 1.0 / lam
    coef = C / m if loss == "infinite_push" else C / (m * n)
    w = _initial_w(data, lam, loss, penalty) if w0 is None else np.asarray(w0, float).copy()
    s, t = np.asarray(Xp @ w).ravel(), np.asarray(Xn @ w).ravel()

    if max_new_negatives is None:  # negatives added per round (and in the first working set)
        max_new_negatives = max(100, n // 50)  # 100: fewest rounds at n = 300 to 2788
    inW = np.zeros(n, dtype=bool)
    if loss == "infinite_push":
        H = negative_hinge_sums(s, t)
        order = np.argsort(-H)
        inW[order[:min(n, max_new_negatives)]] = True
        inW |= H >= H.max() - 1e-3 * max(H.max(), 1.0)
    else:
        inW[:] = True
    Bmask = np.zeros((m, n), dtype=bool)

    def near_margin(M):
        """Pairs within ``band`` of the margin, at most ``max_new_pairs`` (the closest)."""
        dist = np.abs(M - 1.0)
        return _keep_smallest(dist <= band, dist, max_new_pairs)

    def classify_new(cols_new):
        M = s[:, None] - t[None, cols_new]
        Bmask[:, cols_new] |= near_margin(M)
        Lref[:, cols_new] = M < 1.0

    Lref = np.zeros((m, n), dtype=bool)  # margin < 1 at the reference w (for non-band pairs)
    classify_new(np.flatnonzero(inW))

    history = {"objective": [], "gap": [], "time": [], "working_negatives": [], "band_pairs": [],
               "step_solver": []}
    status, best, best_dual = "max_iter", None, None
    it = 0
    if prox is None:  # stabilise the model steps
        prox = 1.0 if penalty == "l2" else 10.0
    if recentre_rounds is None:
        recentre_rounds = 20 if penalty == "l2" else 3
    prox_now = 0.0 if w0 is not None else prox  # from a warm start, try a plain step first
    for it in range(1, max_iter + 1):
        cols = np.flatnonzero(inW)
        Bm = Bmask[:, cols]
        L = Lref[:, cols] & ~Bm
        Bi, Bj = np.nonzero(Bm)
        model = _Model(data, cols, L, Bi, Bj, coef, loss)
        w_r, mu, nu, used = _restricted_step(model, d, prox_now, w, penalty)
        # Extend the multipliers to a feasible dual point of the full problem.
        sub = L * (mu[None, :] if loss == "infinite_push" else mu[0])
        sub[Bi, Bj] = nu
        if cols.size == n:
            alpha = sub
        else:
            alpha = np.zeros((m, n))
            alpha[:, cols] = sub
        alpha = duality.make_feasible(data, alpha, lam, loss=loss, penalty=penalty)
        cands = [w_r]
        if penalty == "l2":
            cands.append(duality.w_of_alpha(Xp, Xn, alpha))
        dual = duality.dual_value(data, alpha, lam, penalty=penalty)
        for wc in cands:
            p = bipartite_objective(data, wc, lam, loss=loss, penalty=penalty)
            if best is None or p < best[0]:
                best = (p, wc)
        if best_dual is None or dual > best_dual[0]:
            best_dual = (dual, alpha)
        gap = duality.relative_gap(best[0], best_dual[0])
        history["objective"].append(best[0])
        history["gap"].append(gap)
        history["time"].append(time.perf_counter() - t_start)
        history["working_negatives"].append(int(cols.size))
        history["band_pairs"].append(int(Bi.size))
        history["step_solver"].append(used)
        if gap <= tol:
            status = "optimal"
            break
        if time_limit is not None and time.perf_counter() - t_start > time_limit:
            status = "time_limit"
            break
        # Make the model exact at w_r: add misclassified pairs and negatives above the max.
        w = w_r
        s, t = np.asarray(Xp @ w).ravel(), np.asarray(Xn @ w).ravel()
        M = s[:, None] - t[None, cols]
        wrong = ~Bm & ((L & (M > 1.0 + 1e-12)) | (~L & (M < 1.0 - 1e-12)))
        n_wrong = int(wrong.sum())
        if n_wrong > max_new_pairs:  # the most violated ones
            wrong = _keep_smallest(wrong, -np.abs(M - 1.0), max_new_pairs)
        if sticky or it > recentre_rounds:
            Bmask[:, cols] |= wrong
        else:  # re-centre the model at w_r: band around the margin plus the misclassified pairs
            Bmask[:, cols] = wrong | near_margin(M)
            Lref[:, cols] = M < 1.0
        added = n_wrong
        if loss == "infinite_push":
            H = negative_hinge_sums(s, t)
            top = H[cols].max()
            viol = np.where(~inW, H - top, -np.inf)
            new = viol > -1e-9 * max(top, 1.0)
            if new.sum() > max_new_negatives:  # the most violated ones first
                keep = np.argpartition(-viol, max_new_negatives)[:max_new_negatives]
                new = np.zeros(n, dtype=bool)
                new[keep] = True
            if new.any():
                inW |= new
                classify_new(np.flatnonzero(new))
                added += int(new.sum())
        if added == 0:
            if prox_now > 0:  # the model is exact at w_r: take the full (unstabilised) step
                prox_now = 0.0
                continue
            status = "stalled"
            break
        prox_now = prox
    p, w_best = best
    return {"w": w_best, "alpha": best_dual[1], "gap": gap, "status": status,
            "iterations": it, "history": history, "objective_paper": p}

