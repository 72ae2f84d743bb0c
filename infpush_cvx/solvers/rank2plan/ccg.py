"""Column and constraint generation for the Rank2Plan LP (Dedieu, Mazumder & Wang, JMLR 2022).

The full LP (docs/mathematics.md, sections 4.1 and 4.4) is solved through a sequence of small
restricted LPs, each solved exactly by HiGHS. Features are split into a working set F (the
others are fixed at 0) and pairs into three sets, guessed from a warm start and corrected as the
solve goes:

- W: pairs near their margin, kept as explicit hinge constraints ``D_k beta + xi_k >= g_k``;
- L: pairs assumed violated (``g_k > D_k beta``); their hinge is linear, ``s_k (g_k - D_k beta)``,
  so they enter only through one aggregated cost vector ``-D_L^T s_L`` and have multiplier s_k;
- Z: pairs assumed satisfied with room to spare; they are dropped (multiplier 0).

Restricted LP over (beta_F, xi_W)::

    minimise  sum_W s_k xi_k - (D_L^T s_L)_F . beta_F + lam ||beta_F||_1 + s_L . g_L
    s.t.      D_{W,F} beta_F + xi_W >= g_W,  xi_W >= 0.

Its dual is the full dual restricted to F with pi_L = s_L and pi_Z = 0, so the full multiplier
vector ``pi = (pi_W, s_L, 0)`` from HiGHS gives the certificate of the FULL LP: if every L pair
is still violated and every Z pair satisfied at beta, the restricted objective equals P(beta);
if moreover ``|D^T pi| <= lam`` for every feature, then ``g^T pi = P(beta)`` is attained by a
dual feasible point and beta is optimal. Otherwise the offending pairs move to W and the most
violated features (reduced cost ``|sum_k pi_k (X_jk - X_ik)| > lam``) join F, and the LP is
solved again. The stopping test is the certified relative gap of the full LP (see
:meth:`PairOperator.certificate`).

A trust region ``|beta - c|_inf <= radius`` around the warm start keeps a restricted LP bounded
while L is still wrong (its linear cost could otherwise push beta to infinity, flipping thousands of
pairs). When it binds at a solution where every pair is in its right set, the model is exact there,
so the centre moves to that solution and the radius doubles; at the returned solution it is
inactive, which the certificate checks independently (a binding region shows up as reduced costs
above lam).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from infpush_cvx._logging import log_iteration
from infpush_cvx.solvers.base import record
from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.rank2plan.ops import PairOperator
from infpush_cvx.solvers.result import SolverResult

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
    # sorted; never empty: for an empty support, extra >= 1 and no candidate is dropped
    F = np.union1d(support, cand)
    z = op.g - op.matvec(beta0)
    k = min(op.n, n_pairs_init)
    W = np.zeros(op.n, dtype=bool)
    W[np.argpartition(np.abs(z), k - 1)[:k]] = True
    L = ~W & (z > 0)
    return F, W, L


class RestrictedLPError(RuntimeError):
    """HiGHS refused an edit of the restricted LP (the solve then ends with status "failed")."""


#: HiGHS's presolve for each algorithm unless ``highs_options`` sets it: IPX solved the first
#: restricted LP (a few hundred rows, dense-ish columns) 15-30% faster without it (presolve
#: removed only a few columns); the simplex solved it faster with it.
PRESOLVE = {"ipm": "off", "simplex": "choose"}

#: The HiGHS algorithms of the first restricted LP ("auto": interior point for large ones).
LP_ALGORITHMS = ("auto", "simplex", "ipm")


class RestrictedDual:
    """The restricted LP, held by HiGHS in its dual form so that every round is a warm start.

    Columns: multipliers pi_k in [0, s_k] of the pairs in W (cost -g_k), and two slacks per working
    feature, the multipliers of the trust region ``c_f - radius <= beta_f <= c_f + radius`` (costs
    ``c_f + radius`` and ``radius - c_f``). Rows, one per working
    feature f: ``-lam - a_f <= (D_W^T pi_W)_f - e+_f + e-_f <= lam - a_f`` with ``a = D_L^T s_L``.
    Then ``beta_F = -(row duals)``. Adding a pair adds a column, adding a feature adds a row, and a
    pair leaving L only shifts row bounds, so HiGHS restarts the simplex from the previous basis.
    The dual form has |F| rows instead of |W|, which is what makes it several times faster.
    """

    def __init__(self, op: PairOperator, lam: float, radius: float, options: dict):
        import highspy

        from infpush_cvx.solvers.engines.cvxpy_backend import quiet_highs

        quiet_highs()  # the first Highs() of a process prints it before any option
        self.op, self.lam, self.radius, self.highspy = op, lam, radius, highspy
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        for key, value in options.items():
            if self.h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
                raise ValueError(f"highs_options: HiGHS refused option {key!r} = {value!r}")
        self.options_time_limit = float(options.get("time_limit", np.inf))
        self.presolve = {algorithm: options.get("presolve", default)
                         for algorithm, default in PRESOLVE.items()}
        self.features = np.zeros(0, dtype=np.int64)   # row order
        self.pairs = np.zeros(0, dtype=np.int64)      # pair columns, in column order
        self.pair_col = np.zeros(0, dtype=np.int64)   # HiGHS column of each entry of self.pairs
        self.slack_col = np.zeros(0, dtype=np.int64)  # HiGHS columns of the slacks (2 per row)
        self.n_cols = 0

    def add_features(self, new: np.ndarray, a: np.ndarray):
        """Rows for features ``new`` (bounds from ``a = D_L^T s_L``) and their slack columns.

        A new feature enters at beta_f = 0, so its trust region is centred at 0."""
        if new.size == 0:
            return
        f0 = self.features.size
        block = sp.csc_matrix(self.op.rows(self.pairs, new))
        cols = self.pair_col[block.indices]  # row r of the new rows = column r of the block
        self._check(self.h.addRows(new.size, -self.lam - a[new], self.lam - a[new], block.nnz,
                                   block.indptr[:-1].astype(np.int32), cols.astype(np.int32),
                                   block.data.astype(np.float64)), "adding feature rows")
        self.features = np.concatenate([self.features, new])
        rows = np.arange(f0, f0 + new.size)
        k = 2 * new.size
        starts = np.arange(k, dtype=np.int32)
        self._check(self.h.addCols(k, np.full(k, self.radius), np.zeros(k), np.full(k, np.inf), k,
                                   starts, np.repeat(rows, 2).astype(np.int32),
                                   np.tile([-1.0, 1.0], new.size)), "adding trust-region slacks")
        self.slack_col = np.concatenate([self.slack_col, self.n_cols + np.arange(k)])
        self.n_cols += k

    def add_pairs(self, new: np.ndarray):
        """Columns for pairs ``new`` (entries ``D_k`` on the working features)."""
        if new.size == 0:
            return
        op = self.op
        block = sp.csr_matrix(op.rows(new, self.features))
        self._check(self.h.addCols(new.size, -op.g[new], np.zeros(new.size), op.s[new], block.nnz,
                                   block.indptr[:-1].astype(np.int32),
                                   block.indices.astype(np.int32),
                                   block.data.astype(np.float64)), "adding pair columns")
        self.pairs = np.concatenate([self.pairs, new])
        self.pair_col = np.concatenate([self.pair_col, self.n_cols + np.arange(new.size)])
        self.n_cols += new.size

    def set_linear(self, a: np.ndarray):
        """New ``a = D_L^T s_L`` after pairs left L: only the row bounds move (the rows exist:
        the initial feature set is never empty)."""
        F = self.features
        self._check(self.h.changeRowsBounds(F.size, np.arange(F.size, dtype=np.int32),
                                            -self.lam - a[F], self.lam - a[F]), "moving row bounds")

    def set_trust_region(self, center: np.ndarray, radius: float):
        """Trust region ``|beta_f - center_f| <= radius`` on the working features."""
        self.radius = radius
        c = center[self.features]
        cost = np.column_stack([c + radius, radius - c]).ravel()  # (e+_f, e-_f) per feature
        self._check(self.h.changeColsCost(cost.size, self.slack_col.astype(np.int32), cost),
                    "moving the trust region")

    def _check(self, status, what: str) -> None:
        """HiGHS refuses a model edit (an entry it deems infinite, say) by a status, not an
        exception: raise it, so that the model never silently loses a row or column."""
        if status == self.highspy.HighsStatus.kError:
            raise RestrictedLPError(f"HiGHS refused {what}")

    def solve(self, algorithm: str, time_limit: float | None = None):
        """Run HiGHS within ``time_limit`` seconds (None: the options' limit, by default none);
        returns (beta_F, pi_W) or None if it did not reach an optimum (see :meth:`stop_reason`)."""
        self.h.setOptionValue("solver", algorithm)
        self.h.setOptionValue("presolve", self.presolve[algorithm])
        if time_limit is not None:
            self.h.setOptionValue("time_limit", min(float(time_limit), self.options_time_limit))
        self.h.run()
        if self.h.getModelStatus() != self.highspy.HighsModelStatus.kOptimal:
            return None
        sol = self.h.getSolution()
        return -np.asarray(sol.row_dual), np.asarray(sol.col_value)[self.pair_col]

    def stop_reason(self) -> tuple[str, str]:
        """``(status, message)`` of a run that reached no optimum within the deadline."""
        model_status = self.h.getModelStatus()
        if model_status == self.highspy.HighsModelStatus.kTimeLimit:
            return "time_limit", "HiGHS reached highs_options['time_limit']"
        return "failed", f"HiGHS: {self.h.modelStatusToString(model_status)}"


def solve_ccg(op: PairOperator, lam: float, method, *, beta0: np.ndarray, deadline: Deadline,
              pi0=None) -> SolverResult:
    """Column and constraint generation from a warm start ``beta0`` (and multipliers ``pi0``)
    with the options of ``method`` (a :class:`.methods.CCG`: ``tol``, ``max_iter``, the
    working-set sizes, ``lp_algorithm``, ``highs_options``; each size None: from the warm start).

    ``max_iter`` bounds the number of restricted LPs. Status "optimal" means the certified relative
    gap of the full LP is at most ``tol`` (for lam = 0, where no scaling makes pi feasible, the
    raw gap and the dual infeasibility must both be at most ``tol``). ``lp_algorithm`` is the
    HiGHS algorithm of the first LP ("simplex", "ipm", or "auto": interior point for large working
    sets); later rounds always warm-start the simplex. Every HiGHS run gets the time left of
    ``deadline``; "time_limit" when it runs out, "failed" when HiGHS stops otherwise. A warm start
    that is not finite is replaced by zeros (HiGHS does not stop on NaN costs).
    """
    options = dict(HIGHS_OPTIONS, **(method.highs_options or {}))
    if not np.all(np.isfinite(beta0)):
        beta0, pi0 = np.zeros(op.p), None
    if pi0 is not None and not np.all(np.isfinite(pi0)):
        pi0 = None
    nnz0 = max(1, np.count_nonzero(beta0))  # the sizes default to the warm start's support
    n_pairs_init = method.n_pairs_init or max(500, 5 * nnz0)
    n_features_init = method.n_features_init or nnz0 + 10
    max_features_add = method.max_features_add or max(10, op.p // 20)
    max_pairs_add = method.max_pairs_add or max(500, 5 * nnz0)
    tol, max_iter, lp_algorithm = method.tol, method.iterations, method.lp_algorithm
    F, W, L = _initial_sets(op, beta0, pi0, lam, n_pairs_init, n_features_init)
    gmax = float(op.g.max()) if op.g.size else 1.0
    xmax = float(abs(op.X).max()) if op.X.size else 1.0
    # Trust region around the warm start: keeps each restricted LP bounded and its linearised L
    # pairs honest; recentred and doubled whenever it binds at a consistent solution.
    center = beta0.copy()
    radius = max(float(np.abs(beta0).max(initial=0.0)), gmax / max(xmax, 1e-300), 1e-12)
    eps_pair = 1e-10 * max(1.0, gmax)
    a = op.rmatvec(op.s * L)
    history = {"iteration": [], "objective": [], "lower_bound": [], "gap": [], "n_features": [],
               "n_pairs_explicit": [], "n_pairs_linear": [], "lp_time": []}
    beta = beta0.copy()
    status, cert, it, n_recentre, message = "max_iter", None, 0, 0, ""
    lp = RestrictedDual(op, lam, radius, options)
    try:
        lp.add_features(F, a)
        lp.set_trust_region(center, radius)
        lp.add_pairs(np.flatnonzero(W))
    except RestrictedLPError as exc:
        status, message, max_iter = "failed", str(exc), 0
    if lp_algorithm == "auto":
        lp_algorithm = "ipm" if W.sum() >= 500 else "simplex"
    for it in range(1, max_iter + 1):
        if deadline.expired():
            status, message = "time_limit", deadline.message()
            break
        t_lp = time.perf_counter()
        out = lp.solve(lp_algorithm if it == 1 else "simplex", deadline.for_solver())
        t_lp = time.perf_counter() - t_lp
        if out is None:
            status, message = (("time_limit", deadline.message()) if deadline.expired()
                               else lp.stop_reason())
            break
        beta_F, pi_W = out
        beta = np.zeros(op.p)
        beta[lp.features] = beta_F
        pi = np.zeros(op.n)
        pi[lp.pairs] = pi_W
        pi[L] = op.s[L]
        cert = op.certificate(beta, pi, lam)
        sizes = int(lp.features.size), int(lp.pairs.size), int(L.sum())
        record(history, iteration=it, objective=cert["primal"], lower_bound=cert["dual"],
               gap=cert["gap"], n_features=sizes[0], n_pairs_explicit=sizes[1],
               n_pairs_linear=sizes[2], lp_time=t_lp)
        log_iteration("ccg", it, cert["primal"], cert["gap"], deadline.elapsed(),
                      features=sizes[0], explicit_pairs=sizes[1], linear_pairs=sizes[2],
                      lp_time=t_lp)
        if cert["gap"] <= tol:  # for lam = 0: raw gap and dual infeasibility both <= tol
            status = "optimal"
            break
        # Pairs whose guessed set is wrong at beta join the explicit working set, worst first.
        z = op.g - op.matvec(beta)
        wrong = np.flatnonzero((L & (z < -eps_pair)) | (~W & ~L & (z > eps_pair)))
        if wrong.size > max_pairs_add:
            wrong = wrong[np.argsort(-(op.s[wrong] * np.abs(z[wrong])))[:max_pairs_add]]
        # Features with violated reduced cost, most violated first.
        viol = np.abs(cert["reduced_costs"]) - lam
        viol[lp.features] = -np.inf
        new = np.flatnonzero(viol > 0)
        if new.size > max_features_add:
            new = new[np.argsort(-viol[new])[:max_features_add]]
        at_region = np.abs(beta_F - center[lp.features]).max(initial=0.0) >= radius * (1 - 1e-9)
        if not wrong.size and not new.size and not at_region:
            status = "stalled"  # nothing left to add, yet the certificate misses tol
            message = "nothing left to add to the working sets, yet the gap is above tol"
            break
        if at_region and not wrong.size:
            # The model is exact here but the region binds: move it, and let it grow.
            center, radius = beta, 2.0 * radius
            n_recentre += 1
        try:
            if wrong.size:
                left_L = wrong[L[wrong]]
                W[wrong] = True
                L[wrong] = False
                if left_L.size:
                    a = a - op.rmatvec(np.bincount(left_L, op.s[left_L], op.n))
                    lp.set_linear(a)
            lp.add_features(new, a)
            lp.add_pairs(wrong)
            lp.set_trust_region(center, radius)
        except RestrictedLPError as exc:
            status, message = "failed", str(exc)
            break
    if cert is None:  # no restricted LP was solved: certify the warm start itself
        cert = op.certificate(beta, np.zeros(op.n) if pi0 is None else pi0, lam)
        pi = cert["pi"]
    info = dict(lower_bound=cert["dual"], dual_infeasibility=cert["dual_infeasibility"],
                raw_gap=cert["raw_gap"], n_features_working=int(lp.features.size),
                n_pairs_explicit=int(lp.pairs.size), n_pairs_linear=int(L.sum()),
                trust_radius=radius, trust_region_moves=n_recentre,
                lp_solver="HiGHS (highspy), restricted dual, warm-started simplex")
    return SolverResult(w=beta, objective=cert["primal"], gap=cert["gap"], status=status,
                        iterations=it, time=deadline.elapsed(), method="ccg",
                        history=history, dual=pi, info=info, message=message)
