"""Column and constraint generation for the Rank2Plan LP (Dedieu, Mazumder & Wang, JMLR 2022).

The full LP (formulations.md section 4) is solved through a sequence of small restricted LPs, each
solved exactly by HiGHS. Features are split into a working set F (the others are fixed at 0) and
pairs into three sets, guessed from a warm start and corrected as the solve goes:

- W: pairs near their margin, kept as explicit hinge constraints ``D_k beta + xi_k >= g_k``;
- L: pairs assumed violated (``g_k > D_k beta``); their hinge is linear, ``s_k (g_k - D_k beta)``,
  so they enter only through one aggregated cost vector ``-D_L^T s_L`` and have multiplier s_k;
- Z: pairs assumed satisfied with room to spare; they are dropped (multiplier 0).

Restricted LP over (beta_F, xi_W)::

    minimise  sum_W s_k xi_k - (D_L^T s_L)_F . beta_F + lam ||beta_F||_1 + s_L . g_L
    s.t.      D_{W,F} beta_F + xi_W >= g_W,  xi_W >= 0.

Its dual is the full dual restricted to F with pi_L = s_L and pi_Z = 0, so the full multiplier vector
``pi = (pi_W, s_L, 0)`` from HiGHS gives the certificate of the FULL LP: if every L pair is still
violated and every Z pair satisfied at beta, the restricted objective equals P(beta); if moreover
``|D^T pi| <= lam`` for every feature, then ``g^T pi = P(beta)`` is attained by a dual feasible point
and beta is optimal. Otherwise the offending pairs move to W and the most violated features
(reduced cost ``|sum_k pi_k (X_jk - X_ik)| > lam``) join F, and the LP is solved again. The stopping
test is the certified relative gap of the full LP (see :meth:`PairOperator.certificate`).

A box ``|beta_k| <= B`` keeps a restricted LP bounded while L is still wrong (its linear cost can
otherwise push beta to infinity); it is enlarged whenever a coordinate reaches it, so it is inactive
at the returned solution, which the certificate checks independently.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from .result import SolverResult
from ._rank2plan_ops import PairOperator

#: HiGHS feasibility tolerances: tighter than the defaults (1e-7) so that the duals certify 1e-6.
HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9}


def _initial_sets(op: PairOperator, beta0, pi0, lam, n_pairs_init, n_features_init):
    """Working features: support of beta0 plus the largest reduced costs of pi0.
    Working pairs: the ``n_pairs_init`` pairs closest to their margin; the rest go to L or Z."""
    absb = np.abs(beta0)
    support = np.flatnonzero(absb > 1e-9 * max(absb.max(initial=0.0), 1e-300))
    rho = np.abs(op.rmatvec(pi0)) if pi0 is not None else np.zeros(op.p)
    rho[support] = -np.inf
    extra = max(n_features_init - support.size, min(10, op.p - support.size), 0)
    cand = np.argsort(-rho)[:extra]
    cand = cand[rho[cand] > 0.5 * lam] if support.size else cand
    F = np.union1d(support, cand)
    if F.size == 0:
        F = np.argsort(-np.abs(op.rmatvec(op.s * (op.g > 0))))[:min(10, op.p)]
    z = op.g - op.matvec(beta0)
    k = min(op.n, n_pairs_init)
    W = np.zeros(op.n, dtype=bool)
    W[np.argpartition(np.abs(z), k - 1)[:k]] = True
    L = ~W & (z > 0)
    return np.sort(F), W, L


def _solve_restricted(op, lam, F, W, L, B, options):
    """One restricted LP. Returns (beta_F, pi_W, lp result)."""
    Wi = np.flatnonzero(W)
    f, w = F.size, Wi.size
    q = -op.rmatvec(op.s * L)[F]
    c = np.concatenate([lam + q, lam - q, op.s[Wi]])
    D = op.rows(Wi, F)
    D = sp.csc_matrix(D) if not sp.issparse(D) else D
    A = sp.hstack([-D, D, -sp.identity(w, format="csc")], format="csc")
    bounds = np.zeros((2 * f + w, 2))
    bounds[:2 * f, 1] = B
    bounds[2 * f:, 1] = np.inf
    res = linprog(c, A_ub=A, b_ub=-op.g[Wi], bounds=bounds, method="highs", options=options)
    if res.status != 0:
        return None, None, res
    x = res.x
    return x[:f] - x[f:2 * f], -res.ineqlin.marginals, res


def solve_ccg(op: PairOperator, lam: float, *, beta0, pi0=None, tol: float = 1e-6,
              max_iter: int = 100, n_pairs_init: int | None = None,
              n_features_init: int | None = None, max_features_add: int | None = None,
              time_limit: float = np.inf, highs_options: dict | None = None) -> SolverResult:
    """Column and constraint generation from a warm start ``beta0`` (and multipliers ``pi0``).

    ``max_iter`` bounds the number of restricted LPs. Status "optimal" means the certified relative
    gap of the full LP is at most ``tol`` (for lam = 0, where no scaling makes pi feasible, the
    raw gap and the dual infeasibility must both be at most ``tol``).
    """
    t0 = time.perf_counter()
    options = dict(HIGHS_OPTIONS, **(highs_options or {}))
    beta0 = np.asarray(beta0, dtype=np.float64)
    if n_pairs_init is None:
        n_pairs_init = max(1000, 20 * max(1, np.count_nonzero(beta0)))
    if n_features_init is None:
        n_features_init = np.count_nonzero(beta0) + 10
    if max_features_add is None:
        max_features_add = max(10, op.p // 20)
    F, W, L = _initial_sets(op, beta0, pi0, lam, n_pairs_init, n_features_init)
    # Box large enough to be inactive at any sensible solution; enlarged if ever reached.
    gmax = float(op.g.max()) if op.g.size else 1.0
    xmax = float(abs(op.X).max()) if op.X.size else 1.0
    B = 1e3 * max(float(np.abs(beta0).max(initial=0.0)), gmax / max(xmax, 1e-300), 1e-6)
    eps_pair = 1e-10 * max(1.0, gmax)
    history = {"iteration": [], "objective": [], "lower_bound": [], "gap": [], "n_features": [],
               "n_pairs_explicit": [], "n_pairs_linear": [], "lp_time": []}
    beta = beta0.copy()
    status, cert, it = "max_iter", None, 0
    pi = np.zeros(op.n)
    for it in range(1, max_iter + 1):
        t_lp = time.perf_counter()
        beta_F, pi_W, res = _solve_restricted(op, lam, F, W, L, B, options)
        t_lp = time.perf_counter() - t_lp
        if beta_F is None:
            status = "failed"
            history.setdefault("message", []).append(res.message)
            break
        beta = np.zeros(op.p)
        beta[F] = beta_F
        pi = np.zeros(op.n)
        pi[W] = pi_W
        pi[L] = op.s[L]
        cert = op.certificate(beta, pi, lam)
        history["iteration"].append(it)
        history["objective"].append(cert["primal"])
        history["lower_bound"].append(cert["dual"])
        history["gap"].append(cert["gap"])
        history["n_features"].append(int(F.size))
        history["n_pairs_explicit"].append(int(W.sum()))
        history["n_pairs_linear"].append(int(L.sum()))
        history["lp_time"].append(t_lp)
        if lam > 0:
            done = cert["gap"] <= tol
        else:
            done = cert["raw_gap"] <= tol and cert["dual_infeasibility"] <= tol
        if done:
            status = "optimal"
            break
        # Pairs whose guessed set is wrong at beta join the explicit working set.
        z = op.g - op.matvec(beta)
        wrong = (L & (z < -eps_pair)) | (~W & ~L & (z > eps_pair))
        W |= wrong
        L &= ~wrong
        # Features with violated reduced cost, most violated first.
        viol = np.abs(cert["reduced_costs"]) - lam
        viol[F] = -np.inf
        new = np.flatnonzero(viol > 0)
        if new.size > max_features_add:
            new = new[np.argsort(-viol[new])[:max_features_add]]
        at_box = np.abs(beta_F).max(initial=0.0) >= B * (1 - 1e-9)
        if at_box:
            B *= 100.0
        if not wrong.any() and new.size == 0 and not at_box:
            status = "stalled"  # nothing left to add, yet the certificate misses tol
            break
        F = np.union1d(F, new)
        if time.perf_counter() - t0 > time_limit:
            status = "time_limit"
            break
    info = {
        "lower_bound": cert["dual"] if cert else None,
        "dual_infeasibility": cert["dual_infeasibility"] if cert else None,
        "raw_gap": cert["raw_gap"] if cert else None,
        "n_features_working": int(F.size),
        "n_pairs_explicit": int(W.sum()),
        "n_pairs_linear": int(L.sum()),
        "box": B,
        "lp_solver": "HiGHS (scipy.optimize.linprog)",
    }
    objective = cert["primal"] if cert else op.objective(beta, lam)
    return SolverResult(w=beta, objective=objective, gap=cert["gap"] if cert else None,
                        status=status, iterations=it, time=time.perf_counter() - t0, method="ccg",
                        history=history, dual=pi, info=info)
