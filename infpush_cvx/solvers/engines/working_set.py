"""Certified working-set solver shared by the Infinite Push (l2, l1) and RankSVM, in linear memory.

Idea (constraint generation; cf. the "active negatives" of the Infinite Push): at an optimum
only a few negatives attain the max of the hinge sums, and only pairs near the margin
``s_i - t_j = 1`` need their hinge written out. So the objective is replaced by a *lower model*
built at a reference point ``w_c`` (the centre):

- negatives outside a working set W are dropped (Infinite Push only: they lie below the max);
- a *band* of pairs keeps its hinge exactly; every other pair (i, j) of a kept negative is
  replaced by its linear piece ``1 - s_i + t_j`` when it is below the margin at ``w_c``
  (``s_i < 1 + t_j``), and by 0 otherwise.

Every replacement is <= the true hinge, so ``model <= P`` everywhere, and the model is exact near
``w_c``. The pairs below the margin are a prefix of the sorted positive scores for each negative,
so their sums are prefix sums (:mod:`._pair_sums`): nothing of size m x n is ever formed, and a
round costs O(nnz(X) + (m + n) log m) plus the restricted problem.

Each round takes a proximal step ``min model(w) + kappa/2 ||w - w_c||^2`` (C-scaling,
C = 1/lambda), solved to high accuracy by the structured interior-point method of
:mod:`._restricted_ipm` (Clarabel, then HiGHS for an LP, if it fails). This is a proximal bundle
method with serious and null steps (Kiwiel 1990; Lemarechal's bundle methods): the step becomes
the new centre when the true objective drops by a fraction of the model's prediction (serious
step), and the proximal weight ``kappa`` shrinks when the model was exact there; otherwise
(null step) the missing negatives are added, the band is widened by the pairs near the margin at
the step, and ``kappa`` grows, so the next step stays where the model is exact. Any step's
multipliers extend to a feasible dual point of the full problem (:mod:`.implicit_dual`), so
every round gives a certified relative duality gap, the stopping test.

Real data (binary features, repeated rows, ties, bad scaling) shape three choices:

- the data are rescaled internally to unit largest row norm (lambda rescaled to match), so
  every tolerance is relative and the iterates do not depend on the units of X;
- identical rows should be collapsed into weights beforehand (:mod:`infpush_cvx.data.reductions`):
  the method takes sample weights ``p`` (positives) and ``q`` (negatives);
- many pairs can sit exactly at the margin (ties): they enter the band together, up to
  ``tie_cap``; beyond it they fall on one side (the model stays a lower bound); the band grows
  by up to half its size a round and sheds the pairs that are far from the margin at a new
  centre, and a restricted step that fails ends the solve with its best certified point and an
  honest status instead of an exception.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from infpush_cvx._logging import log_iteration
from infpush_cvx.data.containers import BipartiteData
from infpush_cvx.formulations.objectives import mean_loss, negative_hinge_sums, penalty_value
from infpush_cvx.data.reductions import collapse_duplicates
from infpush_cvx.solvers.engines.common import largest_row_norm
from infpush_cvx.solvers.engines.deadline import Deadline, round_end
from infpush_cvx.solvers.engines.kernel_span import span_step
from infpush_cvx.solvers.engines.pair_sums import (SortedScores, near_margin_pairs,
                                                   prefix_row_sums, weight_above)
from infpush_cvx.solvers.engines.restricted_ipm import RestrictedProblem, solve_restricted
from infpush_cvx.solvers.engines.duality import dual_bound, relative_gap
from infpush_cvx.solvers.engines.implicit_dual import ImplicitDual, best_multiple, pair_vector_sum


@dataclass(frozen=True)
class WorkingSetOptions:
    """Options of the working-set method (defaults chosen on planted, UCI and LIBSVM data).

    band : margin half-width of the band around ``s_i - t_j = 1`` at the centre.
    band_cap : most new band pairs per round, except pairs exactly at the margin (ties), of
        which up to ``tie_cap`` enter; max_band : most band pairs in a model.
    new_negatives : negatives added per round (Infinite Push; 100 gave the fewest rounds from
        n = 300 to 2,788, and n / 50 was 3x slower than 100 at n = 30,000).
    prox : initial proximal weight (C-scaling; the l2 penalty has curvature 1).
    prune : band pairs farther than ``prune * band`` from the margin at a new centre leave the
        band (0 keeps them all).
    exact_pairs, exact_after : an Infinite Push with at most ``exact_pairs`` (collapsed) pairs
        is solved whole, in one restricted step on the exact model (every negative and every
        pair, no proximal term), from the start when every negative is at the max there (l2;
        the a8a subsets, where every negative stays active and a third of the pairs sit near the
        margin, took 3-8 rounds of 20 interior-point iterations otherwise), or after
        ``exact_after`` rounds without a certificate (l1: one a8a subset took 46 rounds).
        ``exact_pairs=0`` turns it off.
    """

    band: float = 0.2
    band_cap: int = 5_000
    tie_cap: int = 100_000
    max_band: int = 500_000
    new_negatives: int = 100
    prox: float = 1.0
    prune: float = 1.0
    exact_pairs: int = 250_000
    exact_after: int = 12


class RestrictedStepFailed(RuntimeError):
    """Every solver of a restricted step failed (the message lists why)."""


def _dense_rows(X, idx):
    rows = X[idx]
    return rows.toarray() if sp.issparse(rows) else np.asarray(rows)


_LARGEST_LAMBDA = 1e200  # on the rescaled problem (unit largest row norm)


class _Problem:
    """The rescaled problem: data with unit largest row norm, weights, lambda, the objective."""

    def __init__(self, data: BipartiteData, lam: float, loss: str, penalty: str):
        Xp, Xn = data.Xp, data.Xn
        largest = largest_row_norm(data)
        self.scale = 1.0 / largest if largest > 0 else 1.0
        self.Xp = Xp * self.scale
        self.Xn = Xn * self.scale
        self.loss, self.penalty = loss, penalty
        # w . x is unchanged when x -> c x, w -> w / c: lam ||w||^2/2 -> lam c^2,
        # lam ||w||_1 -> lam c
        # (c times c, not c ** 2, which underflows first)
        self.alpha_scale = self.scale * self.scale if penalty == "l2" else self.scale
        self.lam = lam * self.scale * self.scale if penalty == "l2" else lam * self.scale
        # data of size 1e-300 at lambda 0.1 make the rescaled lambda overflow. With unit rows,
        # any lambda above 1e17 gives w* within 1e-17 of 0 and P* = 1 to every digit, so a
        # cap changes no float of the answer, and keeps C = 1/lambda clear of subnormals
        self.lam = min(self.lam, _LARGEST_LAMBDA)
        self.p = np.asarray(data.pos_weights, float)
        self.q = np.asarray(data.neg_weights, float)
        self.M, self.N = float(self.p.sum()), float(self.q.sum())
        self.m, self.n, self.d = data.m, data.n, data.d
        self.coef = dual_bound(self.lam, self.M, self.N, loss)  # C/M or C/(M N)

    def scores(self, w):
        return np.asarray(self.Xp @ w).ravel(), np.asarray(self.Xn @ w).ravel()

    def penalty_value(self, w) -> float:
        return penalty_value(w, self.penalty, "paper")

    def loss_parts(self, s, t):
        """Hinge sums per negative and the loss (paper scaling)."""
        H = negative_hinge_sums(s, t, self.p)
        return H, mean_loss(H, self.loss, self.M, self.q, self.N)

    def objective(self, w, s=None, t=None) -> float:
        if s is None:
            s, t = self.scores(w)
        return self.lam * self.penalty_value(w) + self.loss_parts(s, t)[1]


class _Model:
    """The lower model at a centre: working negatives, band pairs, and the aggregated rest."""

    def __init__(self, prob: _Problem, s_c, t_c, cols, bi, bj):
        self.prob, self.s_c, self.t_c = prob, s_c, t_c
        self.cols, self.bi, self.bj = cols, bi, bj
        p, q = prob.p, prob.q
        v = 1.0 + t_c
        ss = SortedScores(s_c, p)
        below_b = s_c[bi] < v[bj]  # band pairs that the aggregates would count
        self._g = None
        if prob.loss == "infinite_push":
            self.pi = p[bi]
            self.group = np.searchsorted(cols, bj)  # band pair -> its working negative
            self._ss, self._k = ss, ss.below(v[cols])
            self._wb = np.where(below_b, self.pi, 0.0)
            A = ss.cum_p[self._k] - np.bincount(self.group, self._wb, cols.size)
            # one more group with no pairs, a = 0 and g = 0: the loss is >= 0, which bounds the
            # model below (without it a plain l1 step can be unbounded)
            self.a = np.append(A, 0.0)
        else:
            self.pi = p[bi] * q[bj]
            P_j = ss.cum_p[ss.below(v)]
            Q_i = weight_above(t_c, q, s_c)
            wb = np.where(below_b, self.pi, 0.0)
            self.a = np.array([float(q @ P_j) - float(wb.sum())])
            self._g = (np.asarray(prob.Xp.T @ (p * Q_i)).ravel()
                       - np.asarray(prob.Xn.T @ (q * P_j)).ravel()
                       - pair_vector_sum(prob.Xp, prob.Xn, bi, bj, wb))[None, :]

    @property
    def g(self) -> np.ndarray:
        """The groups' slopes (k x d, dense; the Infinite Push's formed on first use): ``g_j =
        G_j - A_j x_j`` with ``G_j`` the weighted sum of the positives below the margin of
        negative j (a prefix of the sorted scores, less its band pairs) and ``A_j`` their
        weight, and a zero row for the "loss >= 0" group."""
        if self._g is None:
            prob, cols, A = self.prob, self.cols, self.a[:-1]
            G = prefix_row_sums(self._ss, prob.Xp, self._k)
            G = G - _group_row_sums(prob.Xp, self.bi, self.group, self._wb, cols.size)
            self._g = np.vstack([G - A[:, None] * _dense_rows(prob.Xn, cols),
                                 np.zeros(prob.d)])
        return self._g

    def g_transpose(self, mu) -> np.ndarray:
        """``g^T mu`` (Infinite Push), from g once it is formed, else without forming it:
        ``sum_j mu_j G_j`` weights each positive by the multipliers of the negatives whose
        prefix holds it, so it is ``Xp^T c`` with ``c_i = p_i sum_{j: k_j > rank(i)} mu_j``,
        less the band pairs' rows, and ``sum_j mu_j A_j x_j = Xn[cols]^T (A mu)``: O(nnz(X))
        instead of the k x d matrix (the dual point of ``w = 0`` has every negative a group:
        50,000 x 2,000 dense, 7 s)."""
        if self._g is not None:
            return self._g.T @ mu
        prob, ss, cols = self.prob, self._ss, self.cols
        mu_c = np.asarray(mu, float)[:cols.size]  # (the last group's g is 0)
        beyond = float(mu_c.sum()) - np.cumsum(np.bincount(self._k, mu_c, ss.m + 1))[:ss.m]
        c = np.empty(ss.m)
        c[ss.order] = ss.p_sorted * beyond  # sum of mu_j over the prefixes holding rank l
        c -= np.bincount(self.bi, self._wb * mu_c[self.group], ss.m)
        Xn_c = prob.Xn[cols]
        return (np.asarray(prob.Xp.T @ c).ravel()
                - np.asarray(Xn_c.T @ (self.a[:-1] * mu_c)).ravel())

    def restricted(self, kappa: float, centre) -> RestrictedProblem:
        prob = self.prob
        l1 = prob.penalty == "l1"
        curvature = (0.0 if l1 else 1.0) + kappa
        q_w = -kappa * centre
        if _explicit_pairs(prob, self.bi, self.bj):
            Z = sp.csr_matrix(prob.Xp[self.bi] - prob.Xn[self.bj]).multiply(self.pi[:, None])
            if prob.loss == "infinite_push":
                return RestrictedProblem(None, None, self.bi, self.group, coef=prob.coef,
                                         groups=True, a=self.a, g=self.g, q_w=q_w,
                                         kappa=curvature, l1=l1, pair_weight=self.pi, Z=Z)
            return RestrictedProblem(None, None, self.bi, self.bj, coef=prob.coef,
                                     groups=False, c_e=prob.coef,
                                     q_w=q_w - prob.coef * self.g[0], kappa=curvature, l1=l1,
                                     pair_weight=self.pi, Z=Z)
        I, bi_loc = np.unique(self.bi, return_inverse=True)
        XI = _dense_rows(prob.Xp, I)
        if prob.loss == "infinite_push":
            XJ = np.vstack([_dense_rows(prob.Xn, self.cols), np.zeros(prob.d)])
            return RestrictedProblem(XI, XJ, bi_loc, self.group,
                                     coef=prob.coef, groups=True, a=self.a, g=self.g, q_w=q_w,
                                     kappa=curvature, l1=l1, pair_weight=self.pi)
        J, bj_loc = np.unique(self.bj, return_inverse=True)
        return RestrictedProblem(XI, _dense_rows(prob.Xn, J), bi_loc, bj_loc, coef=prob.coef,
                                 groups=False, c_e=prob.coef, q_w=q_w - prob.coef * self.g[0],
                                 kappa=curvature, l1=l1, pair_weight=self.pi)

    def loss_value(self, w) -> float:
        """The model's loss at ``w`` (paper scaling): <= the true loss everywhere."""
        prob = self.prob
        sb, tb = prob.scores(w)
        hinge = self.pi * np.maximum(0.0, 1.0 - sb[self.bi] + tb[self.bj])
        if prob.loss == "infinite_push":
            groups = self.a - self.g @ w + np.bincount(self.group, hinge, self.a.size)
            return float(groups.max()) / prob.M
        return float(self.a[0] - self.g[0] @ w + hinge.sum()) / (prob.M * prob.N)

    def dual(self, mu, nu) -> ImplicitDual:
        """The feasible dual point of the multipliers (repaired for round-off), its aggregates."""
        prob = self.prob
        nu = np.maximum(np.asarray(nu, float), 0.0)
        if prob.loss == "infinite_push":
            mu = np.maximum(np.asarray(mu, float), 0.0)
            nu = np.minimum(nu, mu[self.group])
            factor = min(1.0, prob.coef / max(float(mu.sum()), np.finfo(float).tiny))
            w_alpha = self.g_transpose(mu)
            total = float(mu @ self.a)
        else:
            mu = np.zeros(0)
            nu = np.minimum(nu, prob.coef)
            factor = 1.0
            w_alpha = prob.coef * self.g[0]
            total = prob.coef * float(self.a[0])
        w_alpha = w_alpha + pair_vector_sum(prob.Xp, prob.Xn, self.bi, self.bj, nu * self.pi)
        total += float(nu @ self.pi)
        if prob.penalty == "l1":  # ||w(alpha)||_inf <= 1
            factor /= max(1.0, factor * float(np.abs(w_alpha).max(initial=0.0)))
        else:
            factor *= best_multiple(factor * w_alpha, factor * total)
        return ImplicitDual(loss=prob.loss, cols=self.cols, mu=mu[:self.cols.size],
                            coef=prob.coef, bi=self.bi,
                            bj=self.bj, pi=self.pi, nu=nu, s_ref=self.s_c, t_ref=self.t_c,
                            p=prob.p, q=prob.q, w_alpha=factor * w_alpha,
                            total=factor * total, factor=factor,
                            alpha_scale=prob.alpha_scale)


_SPARSE_FLOP_COST = 10.0  # a sparse product's multiply-add against a dense (BLAS) one


def _explicit_pairs(prob: _Problem, bi, bj) -> bool:
    """Whether sparse pair vectors (``nb r^2`` per factorisation, r nonzeros a pair) are cheaper
    than the Laplacian form (``(nI + nJ) d^2`` dense, nI and nJ the distinct rows).

    Measured on the a8a 150 x 1,500 subsets (r = 28, d = 123): the Laplacian form was 1.4-3x
    faster at every band size the working set reached, hence the weight on sparse work."""
    if not (sp.issparse(prob.Xp) and sp.issparse(prob.Xn)) or bi.size == 0:
        return False
    r = (prob.Xp.nnz / max(prob.m, 1) + prob.Xn.nnz / max(prob.n, 1))
    rows = np.unique(bi).size + np.unique(bj).size
    return _SPARSE_FLOP_COST * bi.size * r * r < rows * prob.d ** 2


def _group_row_sums(X, rows, groups, weights, k):
    """``sum over b in group r of weights_b x_{rows_b}`` for r < k (k x d)."""
    S = sp.csr_matrix((weights, (groups, rows)), shape=(k, X.shape[0]))
    out = S @ X
    return out.toarray() if sp.issparse(out) else np.asarray(out)


# ---- restricted steps ------------------------------------------------------------------------

_MAX_PROX = 1e12  # a null step beyond this proximal weight (C-scaling) ends the solve
_IPM_MAX_D = 2000  # the interior-point method factors a dense (d + 1) x (d + 1) matrix


_INEXACT_IPM = 1e-4
_INEXACT_UNTIL = 1e-3  # ... while the certified gap is above this, or the band is so large
_LARGE_BAND = 50_000  # that Clarabel's factorisations would take minutes
_CLARABEL_MAX_BAND = 200_000  # early rounds accept a stalled interior-point step this accurate


def _solve_ipm(rp: RestrictedProblem, centre, accept_inexact=False, deadline=None):
    w, mu, nu, info = solve_restricted(rp, center=centre, deadline=deadline)
    usable = info["status"] in ("optimal", "almost_optimal") or (
        accept_inexact and info["status"] == "stalled" and info["error"] <= _INEXACT_IPM)
    if not usable:
        raise RestrictedStepFailed(f"interior-point method: {info['status']} after "
                                   f"{info['iterations']} iterations")
    return w, mu, nu


def _pair_matrix(rp: RestrictedProblem):
    """The weighted pair vectors ``pi_b z_b`` as a sparse nb x d matrix (by sparse row
    selection: the dense nb x d difference took 2.6 s for 240,000 pairs of 100 features, this
    0.3 s, and 1.2 s instead of 3.6 s without a zero entry)."""
    if rp.Z is not None:
        return rp.Z
    rows = sp.csr_matrix(rp.XI)[rp.bi] - sp.csr_matrix(rp.XJ)[rp.bj]
    return sp.csr_matrix(sp.diags(rp.pi) @ rows)


def _conic_data(rp: RestrictedProblem):
    """The restricted problem as ``min 1/2 x'Px + c'x`` s.t. ``A_ub x <= b_ub`` over
    ``x = (w, e, xi, p)`` (xi for the groups, p the l1 epigraph)."""
    d, nb, k = rp.d, rp.nb, rp.k
    n_xi = 1 if rp.groups else 0
    n_p = d if rp.l1 else 0
    nx = d + nb + n_xi + n_p
    o_e, o_x, o_p = d, d + nb, d + nb + n_xi
    c = np.zeros(nx)
    c[:d] = rp.q_w
    c[o_e:o_e + nb] = rp.c_e
    if rp.groups:
        c[o_x] = rp.coef
    if rp.l1:
        c[o_p:] = 1.0
    P = sp.csc_matrix((np.full(d, rp.kappa), (np.arange(d), np.arange(d))), shape=(nx, nx))
    r = np.arange(nb)
    rows = []
    if rp.groups:  # -g_j.w + sum_{b in B_j} e_b - xi <= -a_j
        rows.append(sp.hstack([sp.csr_matrix(-rp.g),
                               sp.csr_matrix((np.ones(nb), (rp.bj, r)), shape=(k, nb)),
                               sp.csr_matrix(-np.ones((k, 1))), sp.csr_matrix((k, n_p))]))
    # -pi_b z_b.w - e_b <= -pi_b ;  -e_b <= 0
    rows.append(sp.hstack([-_pair_matrix(rp), -sp.identity(nb),
                           sp.csr_matrix((nb, n_xi + n_p))]))
    rows.append(sp.hstack([sp.csr_matrix((nb, d)), -sp.identity(nb),
                           sp.csr_matrix((nb, n_xi + n_p))]))
    if rp.l1:  # w - p <= 0, -w - p <= 0
        eye = sp.identity(d)
        rows.append(sp.hstack([eye, sp.csr_matrix((d, nb + n_xi)), -eye]))
        rows.append(sp.hstack([-eye, sp.csr_matrix((d, nb + n_xi)), -eye]))
    A_ub = sp.vstack(rows, format="csr")
    b_ub = np.concatenate(([-rp.a] if rp.groups else []) + [-rp.pi, np.zeros(nb)]
                          + ([np.zeros(2 * d)] if rp.l1 else []))
    return P, c, A_ub, b_ub


def _split_multipliers(rp, z_ub):
    k, nb = rp.k, rp.nb
    mu = z_ub[:k] if rp.groups else None
    return mu, z_ub[k:k + nb]


def _solve_clarabel(rp: RestrictedProblem, deadline):
    import clarabel

    _time_for_setup(deadline, _conic_nonzeros(rp), _BUILD + _CLARABEL_SETUP, "Clarabel")
    P, c, A_ub, b_ub = _conic_data(rp)
    A = A_ub.tocsc()
    cones = [clarabel.NonnegativeConeT(A_ub.shape[0])]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.direct_solve_method = "qdldl"  # "auto" picks faer, 2-3x slower on these systems
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-9
    left = _time_for_setup(deadline, A.nnz, _CLARABEL_SETUP, "Clarabel")
    if left is not None:  # (its clock starts after the set-up)
        settings.time_limit = max(left - A.nnz * _CLARABEL_SETUP, 1e-6)
    sol = clarabel.DefaultSolver(sp.triu(P, format="csc"), c, A, b_ub, cones, settings).solve()
    if str(sol.status) not in ("Solved", "AlmostSolved"):
        raise RestrictedStepFailed(f"Clarabel: {sol.status}")
    mu, nu = _split_multipliers(rp, np.asarray(sol.z))
    return np.asarray(sol.x)[:rp.d].copy(), mu, nu


def _solve_highs(rp: RestrictedProblem, deadline):
    """A plain l1 step (an LP) by HiGHS through scipy.optimize.linprog."""
    from scipy.optimize import linprog

    _time_for_setup(deadline, _conic_nonzeros(rp), _BUILD + _HIGHS_SETUP, "HiGHS")
    P, c, A_ub, b_ub = _conic_data(rp)
    d = rp.d
    bounds = [(None, None)] * A_ub.shape[1]
    options = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    left = _time_for_setup(deadline, A_ub.nnz, _HIGHS_SETUP, "HiGHS")
    if left is not None:  # (its clock starts after the set-up)
        options["time_limit"] = max(left - A_ub.nnz * _HIGHS_SETUP, 1e-6)
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs", options=options)
    if res.status != 0:
        raise RestrictedStepFailed(f"HiGHS: {res.message}")
    mu, nu = _split_multipliers(rp, -np.asarray(res.ineqlin.marginals))
    return res.x[:d].copy(), mu, nu


#: Seconds per constraint nonzero that an external solver's set-up takes before its own time
#: limit applies (scipy's linprog checks and passes the model to HiGHS; Clarabel factorises
#: its KKT matrix symbolically), measured with a 1e-6 s limit on exact l1 models of 30,000 to
#: 240,000 pairs (1.2 to 9.2 million nonzeros): HiGHS 2.0e-7 to 3.5e-7 (3.2 s), Clarabel 3.8e-7
#: to 1.1e-6 (10 s). The lower figures, so that only a hopeless start is skipped.
_HIGHS_SETUP, _CLARABEL_SETUP = 2e-7, 4e-7
#: Seconds per nonzero to build the constraint matrix (:func:`_conic_data`; 3e-7 to 5e-7
#: measured on the same models, the sparse stacking of its blocks).
_BUILD = 2e-7


def _conic_nonzeros(rp: RestrictedProblem) -> int:
    """An upper bound on the nonzeros of :func:`_conic_data`'s constraint matrix, from the
    rows' own nonzeros, before building it: the pair rows (a pair's nonzeros are at most its
    two rows'), two per pair for e, the group rows and the l1 epigraph."""
    if rp.Z is not None:
        pairs = rp.Z.nnz
    else:
        per_i = np.count_nonzero(rp.XI, axis=1)
        per_j = np.count_nonzero(rp.XJ, axis=1)
        pairs = int(per_i[rp.bi].sum() + per_j[rp.bj].sum())
    groups = int(np.count_nonzero(rp.g)) + rp.nb + rp.k if rp.groups else 0
    return pairs + 2 * rp.nb + groups + (4 * rp.d if rp.l1 else 0)


def _time_for_setup(deadline: Deadline | None, nonzeros: int, per_nonzero: float,
                    name: str) -> float | None:
    """The time limit to hand an external solver once its data are built (the time left; None
    without a limit), or :class:`RestrictedStepFailed` when that time cannot cover the
    solver's set-up (estimated as ``nonzeros * per_nonzero``; none once it has passed): the
    solver does not see its limit before the set-up ends, which overran a 0.5 s limit by 3 s
    on an exact l1 model of 240,000 pairs."""
    left = None if deadline is None else deadline.for_solver()
    if left is None:
        return None
    setup = nonzeros * per_nonzero
    if deadline.expired() or setup > left:
        raise RestrictedStepFailed(f"{name} not started: {max(left, 0.0):.2g} s left, its "
                                   f"set-up takes about {setup:.2g} s ({nonzeros} nonzeros)")
    return left


def restricted_step(rp: RestrictedProblem, centre, *, deadline: Deadline | None = None,
                    accept_inexact=False, simplex_first=False):
    """The structured interior-point method, then Clarabel, then (an LP) HiGHS, within the
    solve's ``deadline`` (a :class:`~._deadline.Deadline`; None: no limit).

    ``simplex_first``: an LP (l1 penalty, no proximal term) goes to HiGHS first, for a vertex
    solution without an interior point's round-off floor.

    ``accept_inexact``: take an interior-point step that stalled at the round-off floor of its
    Newton systems (relative error <= 1e-4) instead of falling back: in early rounds the step only
    needs to be good, and the certificate is computed from it honestly either way.
    A problem whose rows span far fewer than d dimensions (the kernel route: d is the rank of
    the Gram matrix's factor, 4,146 on Spambase, while a step's rows span 100 to 1,230) is
    solved on the coordinates of that span: the same problem in fewer variables
    (:mod:`._kernel_span`).
    Returns ``(w, mu, nu, name of the solver used)``; raises :class:`RestrictedStepFailed` when
    every solver fails, with each one's reason.
    """
    if rp.coef > _LARGEST_COEF and not rp.l1:
        # C = 1/lambda far above 1 (lambda 1e-12: InfinitePushRanker(C=1e12)): the same problem
        # divided by coef, whose multipliers are coef times smaller; undivided, the objective's
        # terms of size C made the interior-point method and Clarabel fail from C = 1e11 (the
        # l1 penalty's weight 1 is built into the solvers' data: not divided)
        f = rp.coef
        w, mu, nu, name = restricted_step(_divided(rp, f), centre, deadline=deadline,
                                          accept_inexact=accept_inexact,
                                          simplex_first=simplex_first)
        return w, None if mu is None else mu * f, nu * f, name
    span = span_step(rp)
    if span is not None:
        w, mu, nu, name = restricted_step(span.problem, span.to_span(centre),
                                          deadline=deadline, accept_inexact=accept_inexact,
                                          simplex_first=simplex_first)
        return span.from_span(w), mu, nu, name
    errors = []
    attempts = []
    if rp.d <= _IPM_MAX_D:
        attempts.append(("ipm", lambda: _solve_ipm(rp, centre, accept_inexact, deadline)))
    if rp.nb <= _CLARABEL_MAX_BAND:
        attempts.append(("clarabel", lambda: _solve_clarabel(rp, deadline)))
    else:
        errors.append(f"clarabel: not tried, {rp.nb} band pairs (its factorisations would take "
                      f"minutes)")
    if rp.l1 and rp.kappa == 0:
        highs = ("highs", lambda: _solve_highs(rp, deadline))
        if simplex_first:
            attempts.insert(0, highs)
        else:
            attempts.append(highs)
    for name, attempt in attempts:
        if deadline is not None and deadline.expired():
            errors.append(f"{name}: not tried, the time limit was reached")
            break
        try:
            w, mu, nu = attempt()
        except (RuntimeError, ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
            errors.append(f"{name}: {exc}")
            continue
        if np.all(np.isfinite(w)):
            return w, mu, nu, name
        errors.append(f"{name}: non-finite weights")
    raise RestrictedStepFailed("; ".join(errors))


#: Above this C/M (C/(M N) for RankSVM), an l2 step is solved with its objective divided by it.
_LARGEST_COEF = 1e6


def _divided(rp: RestrictedProblem, f: float) -> RestrictedProblem:
    """``rp`` with its objective divided by ``f`` (the same minimiser)."""
    import copy

    out = copy.copy(rp)
    out.coef, out.c_e, out.q_w, out.kappa = rp.coef / f, rp.c_e / f, rp.q_w / f, rp.kappa / f
    return out


# ---- the loop ----------------------------------------------------------------------------------

def _initial_w(prob: _Problem, deadline: Deadline | None = None):
    """Centroid direction ``mean(Xp) - mean(Xn)`` (weighted), scaled by a 1-D search (31
    scales, each an objective evaluation: 0.27 s at 100,000 x 2,000 sparse), cut short, with
    the best scale so far, once ``deadline`` has passed."""
    w0 = (np.asarray(prob.Xp.T @ prob.p).ravel() / prob.M
          - np.asarray(prob.Xn.T @ prob.q).ravel() / prob.N)
    if not np.any(w0):
        return w0
    s0, t0 = prob.scores(w0)
    spread = max(float(s0.max() - t0.min()), np.finfo(float).tiny)
    best, best_c = np.inf, 0.0
    for c in np.geomspace(1e-3, 1e3, 31) / spread:
        v = prob.objective(c * w0, c * s0, c * t0)
        if v < best:
            best, best_c = v, c
        if deadline is not None and deadline.expired():
            break
    return best_c * w0


def _new_near_margin(ss, v, cols, band, n, *, width, cap, tie_cap):
    """The ``cap`` pairs closest to the margin that are not in ``band`` yet (so the band grows
    by up to ``cap`` pairs whenever such pairs exist), or all pairs exactly at the margin when
    there are more of them (up to ``tie_cap``)."""
    i, j = near_margin_pairs(ss, v, cols, width=width, cap=cap + band[0].size,
                             tie_cap=tie_cap + band[0].size)
    if band[0].size and i.size:
        fresh = ~np.isin(i.astype(np.int64) * n + j, band[0].astype(np.int64) * n + band[1])
        i, j = i[fresh], j[fresh]
    if i.size > cap:
        dist = np.abs(ss.raw[i] - v[j])
        ties = int(np.count_nonzero(dist == 0))
        keep_n = min(max(cap, ties), tie_cap, i.size)
        if keep_n < i.size:
            keep = np.argpartition(dist, keep_n - 1)[:keep_n]
            i, j = i[keep], j[keep]
    return i, j


def _merge_band(old, new, s, t, max_band, n):
    """Union of two pair lists, the pairs closest to the margin at (s, t) kept when too many."""
    bi = np.concatenate([old[0], new[0]])
    bj = np.concatenate([old[1], new[1]])
    keys, first = np.unique(bi.astype(np.int64) * n + bj, return_index=True)
    bi, bj = bi[first], bj[first]
    if bi.size > max_band:
        dist = np.abs(s[bi] - t[bj] - 1.0)
        keep = np.sort(np.argpartition(dist, max_band)[:max_band])
        bi, bj = bi[keep], bj[keep]
    order = np.lexsort((bi, bj))  # by negative, then positive
    return bi[order], bj[order]


def _updated_band(band, prob, opt, ss, s_c, t_c, cols, extra, inW):
    """The band of a new round: pairs far from the margin at the centre pruned, the pairs
    nearest to it and those near the margin at the last rejected step (``extra``) added, and
    (Infinite Push, ``inW`` given) only pairs of working negatives kept."""
    n, v_c = prob.n, 1.0 + t_c
    if opt.prune and band[0].size:  # pairs now far from the margin are exact pieces again
        keep = np.abs(s_c[band[0]] - v_c[band[1]]) <= opt.prune * opt.band
        band = (band[0][keep], band[1][keep])
    # the band may grow by half its size a round: real data can need a large part of the
    # pairs near the margin (a8a subsets: up to a third of them), planted data few
    cap = max(opt.band_cap, band[0].size // 2)
    near = _new_near_margin(ss, v_c, cols, band, n, width=opt.band, cap=cap,
                            tie_cap=opt.tie_cap)
    band = _merge_band(band, (np.concatenate([near[0], extra[0]]),
                              np.concatenate([near[1], extra[1]])), s_c, t_c,
                       opt.max_band, n)
    if inW is not None:  # only pairs of working negatives (W only grows: nothing new is lost)
        keep = inW[band[1]]
        band = (band[0][keep], band[1][keep])
    return band


def collapse(data: BipartiteData):
    """Identical rows collapsed into weights (an exact reduction), and what to undo it with."""
    reduced, info = collapse_duplicates(data)
    if reduced.m == data.m and reduced.n == data.n:
        return data, None
    return reduced, (info, data.pos_weights, data.neg_weights)


def _attach(dual, collapsed):
    if dual is not None:
        dual.collapsed = collapsed
    return dual


def solve(data: BipartiteData, lam: float, *, loss: str, penalty: str, tol: float,
          max_iter: int, w0=None, deadline: Deadline | None = None,
          options: WorkingSetOptions | None = None):
    """Run the working-set method; returns a dict with w, dual, gap, status, message, history.

    ``lam`` is in paper scaling; ``w0`` a starting point (the caller's units). ``status`` is
    "optimal" when the certified relative gap is <= ``tol``, else "max_iter", "time_limit",
    "stalled" or "failed" (a restricted step no solver could solve), with the best certified
    point found. ``deadline``: the solve's :class:`~.deadline.Deadline` (None: no limit).
    """
    opt = options or WorkingSetOptions()
    deadline = Deadline(None) if deadline is None else deadline
    data, collapsed = collapse(data)
    prob = _Problem(data, lam, loss, penalty)
    n = prob.n
    ip = loss == "infinite_push"
    w_c = _initial_w(prob, deadline) if w0 is None else np.asarray(w0, float) / prob.scale
    s_c, t_c = prob.scores(w_c)
    H, loss_c = prob.loss_parts(s_c, t_c)
    P_c = prob.lam * prob.penalty_value(w_c) + loss_c

    new_negatives = opt.new_negatives
    if ip:
        inW = np.zeros(n, dtype=bool)
        # only the top negatives at the start, even when (a small starting w: ties) nearly all of
        # them are near the max: a LIBSVM-like set of 1,500 x 48,000 x 300 has 1,272 working
        # negatives at its optimum, and starting with all 48,000 made each step factor a
        # 48,000-group system (the 120 s limit at gap 0.09, against 11 s from the top 100)
        inW[np.argsort(-H, kind="stable")[:min(n, new_negatives)]] = True
    all_cols = np.arange(n)
    empty = np.zeros(0, np.intp)
    band = (empty, empty)
    kappa = 0.0 if w0 is not None else opt.prox  # from a warm start, try a plain step first
    # every negative at the max at the start (ties: binary features, a small starting w): the
    # bundle model would need every negative and round after round of pairs; a small problem
    # is cheaper solved whole
    small = ip and 0 < prob.m * n <= opt.exact_pairs
    exact_from = 1 if (small and penalty == "l2"
                       and np.all(H >= H.max() - 1e-3 * max(H.max(), 1.0))) else None

    history = {"objective": [], "gap": [], "time": [], "working_negatives": [], "band_pairs": [],
               "step_solver": [], "prox": [], "step": []}
    best_p = (P_c, w_c)
    best_d = (-np.inf, None)
    P_zero = prob.objective(np.zeros(prob.d))
    if P_zero <= P_c:
        # w = 0 is the best point so far (a large lambda, or degenerate data): a candidate
        # with its own dual point, which certifies it at once when lambda is large enough
        zero = _dual_at_zero(prob)
        best_p, best_d = (P_zero, np.zeros(prob.d)), (zero.value(prob.lam, penalty), zero)
    status, message, gap, it = "max_iter", "", np.inf, 0
    extra = (empty, empty)  # pairs near the margin at the last rejected step
    exact_lp = False  # the model holds the whole (l1) problem: solve it by the simplex method
    for it in range(1, max_iter + 1):
        if small and exact_from is None and it > opt.exact_after:
            exact_from = it
        if it == exact_from:
            # the exact model: every negative, every pair (by negative, then positive)
            inW[:] = True
            band = (np.tile(np.arange(prob.m), n), np.repeat(all_cols, prob.m))
            kappa = 0.0
        cols = np.flatnonzero(inW) if ip else all_cols
        ss = SortedScores(s_c, prob.p)
        if it != exact_from:  # (the exact model has every pair already)
            band = _updated_band(band, prob, opt, ss, s_c, t_c, cols, extra, inW if ip else None)
        model = _Model(prob, s_c, t_c, cols, *band)
        try:
            w_r, mu, nu, used = restricted_step(model.restricted(kappa, w_c), w_c,
                                                deadline=deadline,
                                                accept_inexact=(gap > _INEXACT_UNTIL
                                                                or band[0].size > _LARGE_BAND),
                                                simplex_first=exact_lp and kappa == 0)
        except RestrictedStepFailed as exc:
            if deadline.expired():
                status, message = "time_limit", deadline.message()
                break
            if kappa < 1e6 * max(opt.prox, 1.0):  # a better-conditioned (shorter) step next
                kappa = max(10.0 * kappa, opt.prox)
                history["step"].append("failed")
                _record(history, deadline, best_p[0], gap, cols.size, band[0].size, "none", kappa)
                message = f"restricted step failed, retried with a larger proximal weight: {exc}"
                continue
            status, message = "failed", f"restricted step failed: {exc}"
            break
        dual = model.dual(mu, nu)
        D = dual.value(prob.lam, penalty)
        if D > best_d[0]:
            best_d = (D, dual)
        s_r, t_r = prob.scores(w_r)
        H_r, loss_r = prob.loss_parts(s_r, t_r)
        P_r = prob.lam * prob.penalty_value(w_r) + loss_r
        if P_r < best_p[0]:
            best_p = (P_r, w_r)
        if penalty == "l2" and dual.total > 0:  # w(alpha) is a primal candidate too
            w_a = dual.w_alpha
            P_a = prob.objective(w_a)
            if P_a < best_p[0]:
                best_p = (P_a, w_a)
        gap = relative_gap(best_p[0], best_d[0])
        model_r = prob.lam * prob.penalty_value(w_r) + model.loss_value(w_r)
        predicted = P_c - model_r
        serious = P_r <= P_c - 0.1 * max(predicted, 0.0)
        # the negatives the model misses are found at the model's own step (at a shorter point
        # found below they can lie under the max: a line search that then halves the step
        # round after round without ever adding them stalled Spambase l1 at lambda 1e-4)
        viol_r = (np.where(inW, -np.inf, H_r - model.loss_value(w_r) * prob.M) if ip
                  else None)
        if not serious:
            # a model step too long for the model: the best point on the segment to it, by the
            # true objective (each evaluation O(nnz + (m + n) log m), far cheaper than a step)
            w_l, s_l, t_l, P_l = _segment_search(prob, w_c, s_c, t_c, w_r, s_r, t_r)
            if P_l <= P_c - 0.1 * max(P_c - P_l, 0.0) and P_l < P_c:
                serious = True
                w_r, s_r, t_r, P_r = w_l, s_l, t_l, P_l
                model_r = prob.lam * prob.penalty_value(w_r) + model.loss_value(w_r)
                if P_r < best_p[0]:
                    best_p = (P_r, w_r)
                    gap = relative_gap(best_p[0], best_d[0])
        history["step"].append("serious" if serious else "null")
        _record(history, deadline, best_p[0], gap, cols.size, band[0].size, used, kappa)
        end = round_end(gap, tol, deadline)
        if end is not None:
            status, message = end
            break
        added = 0
        if ip:  # negatives above the model's max at the model's step
            new = viol_r > 1e-12 * max(float(H_r.max()), 1.0)
            if new.sum() > new_negatives:
                new = np.zeros(n, dtype=bool)
                new[np.argpartition(-viol_r, new_negatives)[:new_negatives]] = True
            inW |= new
            added = int(new.sum())
        if serious:
            exact = P_r - model_r <= 0.5 * max(predicted, 0.0)
            w_c, s_c, t_c, P_c = w_r, s_r, t_r, P_r
            extra = (empty, empty)
            if exact:
                kappa = 0.0 if kappa < 1e-4 * opt.prox else kappa / 4.0
        else:
            # the model was too optimistic at w_r: widen the band there, shorten the step
            ss_r = SortedScores(s_r, prob.p)
            cols_r = np.flatnonzero(inW) if ip else cols
            extra = _new_near_margin(ss_r, 1.0 + t_r, cols_r, band, n, width=opt.band,
                                     cap=opt.band_cap, tie_cap=opt.tie_cap)
            if not added and extra[0].size == 0:
                # the model is wrong at pairs farther than the band from the margin (they
                # changed sides along a long step): take the closest pairs at any distance
                v_r = 1.0 + t_r[cols_r]
                reach = float(s_r.max() - s_r.min() + v_r.max() - v_r.min()) + 1.0
                extra = _new_near_margin(ss_r, 1.0 + t_r, cols_r, band, n, width=reach,
                                         cap=opt.band_cap, tie_cap=opt.tie_cap)
            if not added and extra[0].size == 0 and not exact_lp:
                # every pair of the working negatives is in the band and no negative is
                # missing: the model is the problem itself, so its plain step is the optimum;
                # for the l1 penalty (an LP) a simplex solve gives it without the round-off
                # floor of an interior point that made this step a null step
                kappa, exact_lp = 0.0, penalty == "l1"
            elif not added and extra[0].size == 0:
                if kappa >= _MAX_PROX:
                    status = "stalled"
                    message = ("the model could not be refined: no pair or negative to add and "
                               "the proximal weight at its limit")
                    break
                kappa = max(4.0 * kappa, opt.prox, 1.0)
            elif not added:
                kappa = 4.0 * kappa
    if status == "max_iter":
        message = f"max_iter={max_iter} rounds reached"
    elif status == "optimal":
        message = ""  # a step that failed and was retried does not concern the caller
    P_best, w_best = best_p
    return {"w": w_best * prob.scale, "dual": _attach(best_d[1], collapsed), "gap": gap,
            "status": status,
            "message": message, "iterations": it, "history": history,
            "objective_paper": P_best}


def _dual_at_zero(prob: _Problem) -> ImplicitDual:
    """The dual point of ``w = 0``: every pair below the margin, the negatives weighted by
    their sample weights for the Infinite Push (theta_j = q_j / N).

    Its gap at ``w = 0`` is about ``||mean positive - mean negative||^2 / (2 lambda)`` relative to
    ``P(0) = 1`` for the l2 penalty, and 0 for the l1 penalty once ``lambda`` is at least the
    largest entry of that difference: it certifies ``w* = 0`` (or nearly) at a large lambda,
    where the working set's own steps (proximal steps of length ~1/lambda) cannot.
    """
    empty = np.zeros(0, np.intp)
    model = _Model(prob, np.zeros(prob.m), np.zeros(prob.n), np.arange(prob.n), empty, empty)
    mu = None
    if prob.loss == "infinite_push":
        mu = np.append(prob.coef * prob.q / prob.N, 0.0)  # 0 on the "loss >= 0" row
    return model.dual(mu, np.zeros(0))


def _segment_search(prob, w_c, s_c, t_c, w_r, s_r, t_r):
    """The best of ``w_c + a (w_r - w_c)``, a in {1/2, 1/4, ..., 1/1024}: scores are affine in a,
    so each point costs one objective evaluation."""
    best = (np.inf, None)
    for a in 0.5 ** np.arange(1, 11):
        w, s, t = w_c + a * (w_r - w_c), s_c + a * (s_r - s_c), t_c + a * (t_r - t_c)
        P = prob.objective(w, s, t)
        if P < best[0]:
            best = (P, (w, s, t))
        elif best[1] is not None:
            break  # P is convex along the segment: past its minimum
    if best[1] is None:  # no finite value on the segment: stay at the centre
        return w_c, s_c, t_c, np.inf
    return (*best[1], best[0])


def _record(history, deadline, objective, gap, n_cols, n_band, used, kappa):
    history["objective"].append(objective)
    history["gap"].append(gap)
    history["time"].append(deadline.elapsed())
    history["working_negatives"].append(int(n_cols))
    history["band_pairs"].append(int(n_band))
    history["step_solver"].append(used)
    history["prox"].append(float(kappa))
    log_iteration("working_set", len(history["objective"]), objective, gap, history["time"][-1],
                  negatives=int(n_cols), band_pairs=int(n_band), step=history["step"][-1],
                  solver=used, prox=float(kappa))




def degenerate_certificate(data: BipartiteData, lam: float, *, penalty: str, theta,
                           collapsed=None):
    """Certify ``w* = 0`` from convex weights ``theta`` with ``Xn^T theta = mean positive``.

    The dual point ``alpha_ij = (C/M) theta_j p_i`` (every pair of the negatives in theta's
    support below the margin at w = 0, no band) has ``w(alpha) = C (mean positive - Xn^T theta)``,
    so its dual value is ``P(0) = 1`` up to the residual of theta; the returned gap is computed
    from that point like any other, never assumed. ``data`` may be collapsed data, with
    ``collapsed`` from :func:`collapse`.
    """
    prob = _Problem(data, lam, "infinite_push", penalty)
    theta = np.maximum(np.asarray(theta, float), 0.0)
    cols = np.flatnonzero(theta > 0)
    empty = np.zeros(0, np.intp)
    model = _Model(prob, np.zeros(prob.m), np.zeros(prob.n), cols, empty, empty)
    mu = np.append(prob.coef * theta[cols] / theta[cols].sum(), 0.0)  # 0 on the loss >= 0 row
    dual = model.dual(mu, np.zeros(0))
    w = np.zeros(prob.d)
    primal = prob.objective(w)
    return {"w": w, "dual": _attach(dual, collapsed),
            "gap": relative_gap(primal, dual.value(prob.lam, penalty)),
            "objective_paper": primal}
